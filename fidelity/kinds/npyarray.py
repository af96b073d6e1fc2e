"""Kind `npy`: NumPy `.npy` arrays, element by element.

Shape and dtype must match: a change of either is a move, and the values are not compared.
Numbers (integers, floats, complex) are judged with `rtol`/`atol` as everywhere
(|cand - base| <= atol + rtol * |base|); NaN positions must match (NaN against NaN is equal,
NaN against a number is out of tolerance), an infinity equals only itself. Booleans, text,
dates and records have no tolerance: any difference is a change. A difference is named by
its index (`[2, 7]`), so an explanation says how many values are out of tolerance and the
largest differences where they are.

Memory is bounded: a file is memory-mapped and walked `CHUNK` elements at a time (in C
order, whatever the file's layout), so the cost is a few arrays of `CHUNK` elements, not
the array. A file is never unpickled (`allow_pickle=False`): an object array is refused.
numpy is imported only once an array differs.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fidelity import blas
from fidelity.kinds.base import Plain, Series, Spec
from fidelity.kinds.diffs import (
    DEFAULT_TOP,
    Block,
    Difference,
    OutputDiff,
    Tally,
    Tolerance,
    tolerance_for,
)
from fidelity.kinds.sources import Neutral, Source, opened, size

if TYPE_CHECKING:
    import numpy as np

NAME = "npy"
CHUNK = 2**18  # elements compared at a time
MAGIC = b"\x93NUMPY"
NUMBERS = "iufc"  # numpy's dtype kinds that a tolerance applies to
PLOTTED = "biuf"  # drawn as numbers (complex is not)
PART = "values"  # the one part of an array under a spread, and its figure's name


def load(source: Source) -> np.ndarray[Any, Any]:
    """The array, memory-mapped from a file; ValueError when it is no .npy file or would
    need unpickling."""
    blas.load_numpy()  # every comparison of arrays starts here: one BLAS thread
    import numpy as np

    with opened(source) as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a .npy file: it does not start with \\x93NUMPY")
        f.seek(0)
        _holds_its_data(f, size(source))
    if isinstance(source, Path):
        array: np.ndarray[Any, Any] = np.load(source, mmap_mode="r", allow_pickle=False)
    else:
        array = np.load(io.BytesIO(source), allow_pickle=False)
    return array


def _data(f: BinaryIO) -> int | None:
    """The bytes of data the header at f declares, f left where they start; None for a
    later format, which numpy's own reading decides."""
    import numpy as np

    fmt = np.lib.format
    version = fmt.read_magic(f)
    read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(version)
    if read is None:
        return None
    shape, _, dtype = read(f)
    return math.prod(shape) * dtype.itemsize


def _holds_its_data(f: BinaryIO, size: int) -> None:
    """ValueError when the header declares more data than the file holds: given as bytes,
    numpy would allocate all it declares before reading (a 192-byte file declaring 37 GiB
    is a MemoryError, not a finding); memory-mapped, it would refuse in other words."""
    declared = _data(f)
    held = size - f.tell()
    if declared is not None and declared > held:
        raise ValueError(f"its header declares {declared:,} bytes of data, the file holds {held:,}")


def _after_array(source: Source) -> tuple[int, str]:
    """How many bytes follow the array, and their sha256: `np.save` twice into one file
    leaves a second array there, which `np.load` never reads (nothing: (0, ""))."""
    import hashlib

    with opened(source) as f:
        declared = _data(f)
        if declared is None:
            return 0, ""
        f.seek(f.tell() + declared)
        digest, held = hashlib.sha256(), 0
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            held += len(chunk)
    return held, digest.hexdigest() if held else ""


def label(flat: int, shape: tuple[int, ...]) -> str:
    """An element's index, as numpy writes one: `[2, 7]`."""
    import numpy as np

    if not shape:
        return "[()]"  # the one element of a 0-d array
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _shown(value: Any) -> str:
    if isinstance(value, str | bytes):
        return json.dumps(value if isinstance(value, str) else value.decode("latin-1"))
    return str(value)


def _flat(a: np.ndarray[Any, Any], start: int, stop: int) -> np.ndarray[Any, Any]:
    """Elements `start` to `stop` in C order, copying only those (a view when it can)."""
    import numpy as np

    if a.flags.c_contiguous:
        return a.reshape(-1)[start:stop]
    return np.asarray(a.flat[start:stop])


def _differ(b: np.ndarray[Any, Any], c: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Where two blocks differ: NaN against NaN (NaT against NaT) is no difference."""
    import numpy as np

    differ = np.asarray(b != c)
    if b.dtype.kind in "fc":
        differ &= ~(np.isnan(b) & np.isnan(c))
    elif b.dtype.kind in "mM":
        differ &= ~(np.isnat(b) & np.isnat(c))
    return differ


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One block of both arrays, from flat index `start`, in the arrays' `shape`."""

    base: np.ndarray[Any, Any]
    cand: np.ndarray[Any, Any]
    start: int
    shape: tuple[int, ...]

    def labels(self, at: np.ndarray[Any, Any]) -> Callable[[int], str]:
        """The index of the `n`th of the block's elements at positions `at`."""
        return lambda n: label(self.start + int(at[n]), self.shape)

    def difference(self, i: int, size: float | None, within: bool = False) -> Difference:
        where = label(self.start + i, self.shape)
        return Difference(where, _shown(self.base[i]), _shown(self.cand[i]), size, within)


def _block(chunk: _Chunk, tol: Tolerance, top: int) -> Block:
    """A block's differences counted, its `top` largest out of and within tolerance kept."""
    import numpy as np

    b, c = chunk.base, chunk.cand
    at = np.flatnonzero(_differ(b, c))
    if b.dtype.kind not in NUMBERS:  # no tolerance: each difference a change, first met shown
        shown = [chunk.difference(int(i), None) for i in at[:top]]
        return Block(0, len(at), len(at), (), len(at), chunk.labels(at), shown)
    wide = np.complex128 if b.dtype.kind == "c" else np.float64
    bd, cd = b[at].astype(wide, copy=False), c[at].astype(wide, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        size = np.abs(cd - bd)
        within = np.isfinite(size) & (size <= tol.atol + tol.rtol * np.abs(bd))
    if b.dtype.kind in "iu" and c.dtype.kind in "iu":  # past 2**53 two of them are one float
        for j in np.flatnonzero(np.maximum(np.abs(bd), np.abs(cd)) >= 2.0**53):
            gap, holds = tol.judge(int(b[at[j]]), int(c[at[j]]))
            size[j], within[j] = (np.inf if gap is None else gap), holds
    del bd, cd  # memory: only what is counted and ranked stays
    nan = np.isnan(size)  # NaN against a number: ranked as large as any, shown as NaN
    size[nan] = np.inf
    shown = []
    for mask in (~within, within):
        where = np.flatnonzero(mask)
        for j in where[np.argsort(-size[where], kind="stable")[:top]]:
            diff = math.nan if nan[j] else float(size[j])
            shown.append(chunk.difference(int(at[j]), diff, bool(within[j])))
    out = at[~within]
    return Block(int(within.sum()), len(out), 0, (), len(out), chunk.labels(out), shown)


def _header(b: np.ndarray[Any, Any], c: np.ndarray[Any, Any]) -> list[Difference]:
    """A change of shape or dtype: the values cannot be paired."""
    found = []
    if b.shape != c.shape:
        found.append(Difference("shape", str(b.shape), str(c.shape)))
    if b.dtype != c.dtype:
        found.append(Difference("dtype", str(b.dtype), str(c.dtype)))
    return found


def _order(a: np.ndarray[Any, Any]) -> str:
    return "Fortran" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def _why_same(b: np.ndarray[Any, Any], c: np.ndarray[Any, Any]) -> str:
    """Why the bytes differ although no value does: said as it is, never guessed."""
    if _order(b) != _order(c):
        return f"no value differs; only the memory order changed ({_order(b)} -> {_order(c)})"
    return "no value differs; only the header, the sign of a zero or a NaN's bits changed"


def compare_npy(path: str, base: Source, cand: Source, spec: Spec) -> OutputDiff:
    """Two arrays, judged element by element under the spec's tolerance, in bounded memory."""
    b, c = load(base), load(cand)
    header = _header(b, c)
    if header:
        what = " and ".join(d.where for d in header)
        summary = f"{what} changed: values not compared"
        n = len(header)
        return OutputDiff(
            path, NAME, False, summary, largest=tuple(header), values_out=n, values_changed=n
        )
    after = _after_array(base), _after_array(cand)
    if after[0] != after[1]:
        held = Difference("after the array", f"{after[0][0]:,} bytes", f"{after[1][0]:,} bytes")
        summary = "the bytes after the array differ (a second np.save into the file?)"
        return OutputDiff(
            path, NAME, False, summary, largest=(held,), values_out=1, values_changed=1
        )
    tol = tolerance_for(spec)
    tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
    for start in range(0, b.size, CHUNK):
        stop = min(start + CHUNK, b.size)
        chunk = _Chunk(_flat(b, start, stop), _flat(c, start, stop), start, b.shape)
        tally.add_block(_block(chunk, tol, tally.top))
    return OutputDiff(
        path,
        NAME,
        not tally.out,
        tally.summary([], _why_same(b, c)),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        largest=tally.largest(),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


@dataclass(frozen=True, slots=True)
class Npy(Plain):
    name: str = NAME
    reads: frozenset[str] = frozenset({"rtol", "atol", "top"})
    tolerant: bool = True
    where_is_key: bool = True  # a change names its index
    plots: bool = True

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        return compare_npy(path, base, cand, spec)

    def parts(self, found: OutputDiff) -> tuple[str, ...] | None:
        """The array as one part: the largest difference between the sides against the
        largest between runs of one commit."""
        return (PART,) if found.values_out else ()

    def part(self, where: str) -> str:
        return PART

    def plotted(self, found: OutputDiff) -> tuple[str, ...]:
        return (PART,)

    def series(
        self, found: OutputDiff, files: tuple[Path, Path], spec: Spec, limit: int
    ) -> list[Series]:
        """Both arrays' values; the candidate minus the baseline per element when the
        shapes match. Arrays that are not numbers give a figure with no values."""
        blas.load_numpy()
        import numpy as np

        b, c = load(files[0]), load(files[1])
        if b.dtype.kind not in PLOTTED or c.dtype.kind not in PLOTTED or not limit:
            return [Series(PART, None, None)][:limit]
        bf, cf = np.asarray(b, dtype=float).reshape(-1), np.asarray(c, dtype=float).reshape(-1)
        deltas = cf - bf if b.shape == c.shape else None
        return [Series(PART, bf, cf, deltas, "element", "element (flat index, C order)")]


KIND = Npy()
