"""CSV/TSV outputs compared by value: rows aligned on key columns, tolerances per column.

Cells are read as text, so nothing is rounded on the way in; only cells whose text differs
are parsed as numbers and judged against the tolerance. Keys are tuples of cell texts end
to end (a label such as `a=1, b=x` is only ever shown, never compared), so no two keys can
be mistaken for each other.

Memory is bounded: both files are read in chunks (pandas' C parser) and walked in step.
Rows that arrive in the same order cost nothing to align; a row whose partner has not been
seen yet is held until it is. Duplicate keys are found from an 8-byte hash per row and
side, sorted at the end (a second pass names one). So the cost is about `KEY_BYTES` per
row plus the rows that arrive out of order, whatever the width of the rows; past
`MAX_PENDING` out-of-order rows the comparison stops and says so.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fidelity.matrix.diffs import (
    DEFAULT_TOP,
    SHOWN_KEYS,
    OutputDiff,
    Tally,
    Tolerance,
    judge,
    tolerance_for,
)
from fidelity.matrix.ignores import unmatched_columns
from fidelity.matrix.sources import NO_PATHS, Neutral, Source, opened

CHUNK_ROWS = 50_000
MAX_PENDING = 2_000_000
KEY_BYTES = 16  # two sides' 8-byte key hashes per row

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which columns are keys, compared or ignored, on one side."""

    columns: tuple[str, ...]
    key: tuple[int, ...]


def _chunks(source: Source, sep: str) -> Iterator[pd.DataFrame]:
    with opened(source) as f:
        if not f.read(1):
            return
        f.seek(0)
        yield from pd.read_csv(f, sep=sep, dtype=str, keep_default_na=False, chunksize=CHUNK_ROWS)


def _rows(chunks: Iterator[pd.DataFrame], first: pd.DataFrame | None) -> Iterator[tuple[str, ...]]:
    if first is not None:
        yield from first.itertuples(index=False, name=None)
    for chunk in chunks:
        yield from chunk.itertuples(index=False, name=None)


def _quoted(value: str) -> str:
    plain = value and value.strip() == value and not any(ch in value for ch in ',="\n')
    return value if plain else json.dumps(value)


def label(key: Sequence[str], values: Key) -> str:
    """How a key is shown: the value alone for one key column, else `a=1, b=x`; a value
    that could blur the boundary between two keys is quoted, so labels stay distinct."""
    if len(key) == 1:
        return values[0]
    return ", ".join(f"{k}={_quoted(v)}" for k, v in zip(key, values, strict=True))


class _Walk:
    """Both sides' rows, paired by key (or by position without one), differences tallied."""

    def __init__(
        self,
        spec: Mapping[str, Any],
        key: Sequence[str],
        base: _Layout,
        cand: _Layout,
        neutral: Neutral = NO_PATHS,
    ):
        self.neutral = neutral
        self.paths_only = False
        self.key = tuple(key)
        self.ignore = ignore = set(spec.get("ignore", [])) - set(key)
        skip = ignore | set(key)
        shared = [c for c in base.columns if c in cand.columns and c not in skip]
        self.pairs = [(c, base.columns.index(c), cand.columns.index(c)) for c in shared]
        self.tolerances: dict[str, Tolerance] = {c: tolerance_for(spec, c) for c in shared}
        ignored = [c for c in ignore if c in base.columns and c in cand.columns]
        self.ignored = [(base.columns.index(c), cand.columns.index(c)) for c in ignored]
        self.base, self.cand = base, cand
        self.tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
        self.pending_base: dict[Key, tuple[str, ...]] = {}
        self.pending_cand: dict[Key, tuple[str, ...]] = {}
        self.hashes_base = array("q")
        self.hashes_cand = array("q")
        self.reordered = False
        self.ignored_differ = False
        self.position = 0

    def _key(self, layout: _Layout, row: tuple[str, ...]) -> Key:
        if not self.key:
            return (f"row {self.position}",)
        return tuple(row[i] for i in layout.key)

    def shown(self, key: Key) -> str:
        return label(self.key, key) if self.key else key[0]

    def _remember(self, key: Key, hashes: array[int]) -> None:
        if self.key:  # positions are unique
            hashes.append(hash(key))

    def compare(self, key: Key, b: tuple[str, ...], c: tuple[str, ...]) -> None:
        if b == c:
            return
        shown = self.shown(key)
        for column, i, j in self.pairs:
            if b[i] != c[j]:
                if self.neutral.same(b[i], c[j]):
                    self.paths_only = True
                    continue
                diff = judge(f"{shown} / {column}", b[i], c[j], self.tolerances[column])
                if diff is not None:
                    self.tally.add(shown, column, diff)
        if any(b[i] != c[j] for i, j in self.ignored):
            self.ignored_differ = True

    def step(self, b: tuple[str, ...] | None, c: tuple[str, ...] | None) -> None:
        self.position += 1
        kb = self._key(self.base, b) if b is not None else None
        kc = self._key(self.cand, c) if c is not None else None
        if kb is not None and b is not None:
            self._remember(kb, self.hashes_base)
        if kc is not None and c is not None:
            self._remember(kc, self.hashes_cand)
        if kb is not None and kb == kc and b is not None and c is not None:
            self.compare(kb, b, c)
            return
        if kb is not None and b is not None:
            self._place(kb, b, self.pending_cand, self.pending_base, base_side=True)
        if kc is not None and c is not None:
            self._place(kc, c, self.pending_base, self.pending_cand, base_side=False)

    def _place(
        self,
        key: Key,
        row: tuple[str, ...],
        other: dict[Key, tuple[str, ...]],
        own: dict[Key, tuple[str, ...]],
        base_side: bool,
    ) -> None:
        partner = other.pop(key, None)
        if partner is None:
            own[key] = row
            return
        self.reordered = True
        self.compare(key, row, partner) if base_side else self.compare(key, partner, row)

    @property
    def overflowing(self) -> bool:
        return len(self.pending_base) + len(self.pending_cand) > MAX_PENDING


def _layout(frame: pd.DataFrame, key: Sequence[str]) -> _Layout:
    columns = tuple(str(c) for c in frame.columns)
    return _Layout(columns, tuple(columns.index(k) for k in key if k in columns))


def _first(chunks: Iterator[pd.DataFrame]) -> pd.DataFrame:
    return next(chunks, pd.DataFrame())


def compare_csv(
    path: str, base: Source, cand: Source, spec: Mapping[str, Any], neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """Explain a CSV (kind csv) or TSV (kind tsv) difference under the spec's tolerances."""
    kind = spec.get("kind", "csv")
    sep = "\t" if kind == "tsv" else ","
    key = list(spec.get("key", []))
    base_chunks, cand_chunks = _chunks(base, sep), _chunks(cand, sep)
    base_first, cand_first = _first(base_chunks), _first(cand_chunks)
    problems = [
        f"{role} lacks key column {', '.join(absent)}"
        for role, frame in (("baseline", base_first), ("candidate", cand_first))
        if (absent := [k for k in key if k not in frame.columns])
    ]
    if problems:
        return OutputDiff(path, kind, False, "; ".join(problems))
    walk = _Walk(spec, key, _layout(base_first, key), _layout(cand_first, key), neutral)
    base_rows, cand_rows = _rows(base_chunks, base_first), _rows(cand_chunks, cand_first)
    for b, c in _zip_longest(base_rows, cand_rows):
        walk.step(b, c)
        if walk.overflowing:
            why = f"over {MAX_PENDING:,} rows out of order: too many to align in memory"
            return OutputDiff(path, kind, False, f"not compared by value: {why}", limit=why)
    duplicates = [
        f"{role} has duplicate keys ({_first_with(source, sep, key, dup)})"
        for role, source, hashes in (
            ("baseline", base, walk.hashes_base),
            ("candidate", cand, walk.hashes_cand),
        )
        if (dup := _duplicated(hashes))
    ]
    if duplicates:
        return OutputDiff(path, kind, False, "; ".join(duplicates))
    return _result(path, kind, walk)


def _duplicated(hashes: array[int]) -> set[int]:
    if len(hashes) < 2:
        return set()
    values, counts = np.unique(np.frombuffer(hashes, dtype=np.int64), return_counts=True)
    return {int(v) for v in values[counts > 1][:3]}


def _first_with(source: Source, sep: str, key: Sequence[str], hashes: set[int]) -> str:
    """A second pass, only when duplicates were seen: the first key with such a hash."""
    for chunk in _chunks(source, sep):
        for values in chunk[list(key)].itertuples(index=False, name=None):
            if hash(values) in hashes:
                return label(key, values)
    return "?"


def _zip_longest(
    a: Iterator[tuple[str, ...]], b: Iterator[tuple[str, ...]]
) -> Iterator[tuple[tuple[str, ...] | None, tuple[str, ...] | None]]:
    while True:
        x, y = next(a, None), next(b, None)
        if x is None and y is None:
            return
        yield x, y


def _result(path: str, kind: str, walk: _Walk) -> OutputDiff:
    hidden = walk.ignore | set(walk.key)
    base_cols = [c for c in walk.base.columns if c not in hidden]
    cand_cols = [c for c in walk.cand.columns if c not in hidden]
    extra = [f"column {c} added" for c in cand_cols if c not in base_cols]
    extra += [f"column {c} dropped" for c in base_cols if c not in cand_cols]
    added = [walk.shown(k) for k in walk.pending_cand]
    dropped = [walk.shown(k) for k in walk.pending_base]
    if added:
        extra.append(f"{len(added)} rows added")
    if dropped:
        extra.append(f"{len(dropped)} rows dropped")
    tally = walk.tally
    return OutputDiff(
        path=path,
        kind=kind,
        within_tolerance=not tally.out and not extra,
        summary=tally.summary(extra, _why_same(walk)),
        columns=tuple(tally.columns),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        rows_added=tuple(added[:SHOWN_KEYS]),
        rows_dropped=tuple(dropped[:SHOWN_KEYS]),
        largest=tally.largest(),
        unmatched=unmatched_columns(walk.ignore, walk.base.columns, walk.cand.columns),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


def _why_same(walk: _Walk) -> str:
    """Why bytes differ although no value does: said as it is, never guessed."""
    if walk.paths_only:
        return "no value differs outside the side's own paths ({out}, {cache}, {worktree})"
    if walk.ignored_differ and walk.reordered:
        return "no value differs outside the ignored columns; the row order changed"
    if walk.ignored_differ:
        return "no value differs outside the ignored columns"
    if walk.reordered:
        return "no value differs; only the row order changed"
    return "no value differs; only the formatting changed (quoting, spacing or line endings)"
