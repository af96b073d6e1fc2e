"""The column-at-a-time CSV comparator gives what a straightforward per-cell walk gives.

The reference below is the comparator as it was before it compared whole columns: pandas
reads every cell as text, rows are paired one at a time (by key, or by position), and every
differing cell goes through `diffs.judge` into a `Tally`. Frames are generated with the
cells that make judging hard: NaN, infinities, "1e999", non-numbers, equal numbers written
differently, own paths; rows reordered, added and dropped; small chunks, so rows cross
chunk boundaries.
"""

from __future__ import annotations

import io
import math
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fidelity.kinds import csvread
from fidelity.kinds.csvcmp import _result, _Walk, compare_csv, label
from fidelity.kinds.diffs import OutputDiff, Tally, judge
from fidelity.kinds.sources import NO_PATHS, Neutral

BASE_OUT, CAND_OUT = "/runs/b/out", "/runs/c/out"
NEUTRAL = Neutral.of({"out": BASE_OUT}, {"out": CAND_OUT})


def reference(base: bytes, cand: bytes, spec: dict[str, Any], neutral: Neutral) -> OutputDiff:
    """Row by row and cell by cell, as the comparator did before."""
    read = {"dtype": str, "keep_default_na": False}
    b_frame, c_frame = (pd.read_csv(io.BytesIO(data), **read) for data in (base, cand))
    key = list(spec.get("key", []))
    b_cols, c_cols = tuple(map(str, b_frame.columns)), tuple(map(str, c_frame.columns))
    walk = _Walk(spec, key, _layout(b_cols, key), _layout(c_cols, key), neutral)
    tally = walk.tally = Tally(top=int(spec.get("top", 5)))
    b_rows = list(b_frame.itertuples(index=False, name=None))
    c_rows = list(c_frame.itertuples(index=False, name=None))

    def key_of(row: tuple[str, ...], cols: tuple[str, ...], position: int) -> tuple[str, ...]:
        return tuple(row[cols.index(k)] for k in key) if key else (f"row {position}",)

    def compare(k: tuple[str, ...], b: tuple[str, ...], c: tuple[str, ...]) -> None:
        _cells(walk, tally, label(key, k) if key else k[0], b, c, neutral)

    for n in range(max(len(b_rows), len(c_rows))):
        b = b_rows[n] if n < len(b_rows) else None
        c = c_rows[n] if n < len(c_rows) else None
        kb = key_of(b, b_cols, n + 1) if b is not None else None
        kc = key_of(c, c_cols, n + 1) if c is not None else None
        if b is not None and c is not None and kb is not None and kb == kc:
            compare(kb, b, c)
            continue
        if b is not None and kb is not None:
            _place(walk, kb, b, base_side=True, compare=compare)
        if c is not None and kc is not None:
            _place(walk, kc, c, base_side=False, compare=compare)
    return _result("m.csv", "csv", walk)


def _cells(walk: _Walk, tally: Tally, shown: str, b: Any, c: Any, neutral: Neutral) -> None:
    for column in walk.pairs:
        x, y = b[column.base], c[column.cand]
        if x != y and neutral.same(x, y):
            walk.paths_only = True
        elif (diff := judge(f"{shown} / {column.name}", x, y, column.tol)) is not None:
            tally.add(shown, column.name, diff)
    if any(b[i] != c[j] for i, j in walk.ignored):
        walk.ignored_differ = True


def _place(walk: _Walk, key: Any, row: Any, *, base_side: bool, compare: Any) -> None:
    other, own = (
        (walk.pending_cand, walk.pending_base)
        if base_side
        else (walk.pending_base, walk.pending_cand)
    )
    if (partner := other.pop(key, None)) is None:
        own[key] = row
        return
    walk.reordered = True
    compare(key, row, partner) if base_side else compare(key, partner, row)


def _layout(columns: tuple[str, ...], key: list[str]) -> Any:
    from fidelity.kinds.csvcmp import _layout as layout

    return layout(columns, key)


CELLS = ["1", "1.0", "1.00", "2", "1.5", "-0", "0", "nan", "NaN", "inf", "-inf", "1e999", "x", ""]
CELLS += [" 2", "1e-9", "1.000000001", f"{BASE_OUT}/a", f"{CAND_OUT}/a", f"{BASE_OUT}/b"]
cell = st.sampled_from(CELLS) | st.floats(allow_nan=False).map(repr)


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"kind": "csv", "top": draw(st.integers(1, 6))}
    spec["rtol"] = draw(st.sampled_from([0.0, 1e-9, 0.1]))
    spec["atol"] = draw(st.sampled_from([0.0, 0.5]))
    if draw(st.booleans()):
        spec["key"] = ["id"]
    if draw(st.booleans()):
        spec["ignore"] = ["c"]
    if draw(st.booleans()):
        spec["columns"] = {"b": {"atol": 1.0}}
    return spec


@st.composite
def frames(draw: st.DrawFn) -> tuple[bytes, bytes, dict[str, Any]]:
    n = draw(st.integers(0, 12))
    rows = [[str(i), *draw(st.lists(cell, min_size=3, max_size=3))] for i in range(n)]
    cand = [list(r) for r in rows]
    for r in cand:
        for j in range(1, 4):
            if draw(st.booleans()):
                r[j] = draw(cell)
    if draw(st.booleans()):
        order: list[int] = draw(st.permutations(range(n)))
        cand = [cand[i] for i in order]
    drop: bool = draw(st.booleans())
    if cand and drop:
        cand.pop(draw(st.integers(0, len(cand) - 1)))
    if draw(st.booleans()):
        cand.append([str(n + 1), "1", "2", "3"])
    header = ["id", "a", "b", "c"]
    spec = draw(specs())

    def text(rs: list[list[str]]) -> bytes:
        return ("\n".join(",".join(r) for r in [header, *rs]) + "\n").encode()

    return text(rows), text(cand), spec


def _same(a: OutputDiff, b: OutputDiff) -> None:
    def plain(d: OutputDiff) -> str:  # NaN != NaN: compare the reprs
        return repr(d).replace("nan", "NaN")

    assert plain(a) == plain(b)


@given(frames(), st.sampled_from([1, 2, 3, 50_000]), st.sampled_from([16, 2**21]), st.booleans())
def test_column_at_a_time_gives_what_cell_by_cell_gives(
    data: tuple[bytes, bytes, dict[str, Any]], chunk: int, whole: int, own_paths: bool
) -> None:
    base, cand, spec = data
    neutral = NEUTRAL if own_paths else NO_PATHS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(csvread, "CHUNK_ROWS", chunk)
        patch.setattr(csvread, "WHOLE_BYTES", whole)  # 16: every file read line by line
        got = compare_csv("m.csv", base, cand, spec, neutral)
    _same(got, reference(base, cand, spec, neutral))


def test_the_reference_and_the_comparator_tell_a_move_from_a_tolerated_change() -> None:
    """The property above compares two things that can each be wrong: pin both on one case
    whose answer is known."""
    base = b"id,a,b,c\n1,1.0,x,5\n2,2.0,y,6\n"
    cand = b"id,a,b,c\n1,1.05,x,5\n2,2.5,z,6\n"
    spec = {"kind": "csv", "key": ["id"], "atol": 0.1}
    for got in (compare_csv("m.csv", base, cand, spec), reference(base, cand, spec, NO_PATHS)):
        assert not got.within_tolerance
        assert got.keys == ("2",) and got.values_out == 2 and got.values_within == 1
        assert got.largest[0].where == "2 / b" and got.largest[1].abs_diff == 0.5


def test_the_plain_reader_hands_anything_unusual_to_pandas() -> None:
    for data in (
        b'a,b\n"1",2\n',
        b"a,b\r\n1,2\r\n",
        b"a,b\n1\n",
        b"a,b\n1,2\n\n3,4\n",
        b"a,b\n\n1,2\n",  # blank lines: pandas skips them
        b"a,b\n1,2\n\n",
        b"a,a\n1,2\n",
    ):
        with pytest.raises(csvread.NotPlain):
            list(csvread.plain_chunks(data, ","))
    plain = list(csvread.plain_chunks(b"a,b\n1,2\n3,\n", ","))
    pandas = list(csvread.pandas_chunks(b"a,b\n1,2\n3,\n", ","))
    assert [(c, r.tolist()) for c, r in plain] == [(c, r.tolist()) for c, r in pandas]
    assert math.isfinite(float(plain[0][1][0, 0]))


@given(st.text(alphabet=",\nx", max_size=30), st.integers(1, 4))
def test_the_rectangle_test_counts_separators_line_by_line(text: str, width: int) -> None:
    """The array test of `_rectangular` says what counting each line's separators says."""
    expected = all(line.count(",") == width - 1 for line in text.split("\n"))
    assert csvread._rectangular(text.encode(), ",", width) is expected
