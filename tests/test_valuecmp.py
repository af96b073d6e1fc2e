"""Value-aware comparators: keys, ignored columns, tolerances, reordered/added/dropped rows."""

from __future__ import annotations

import csv as csv_module
import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fidelity.kinds.diffs import Tolerance
from fidelity.kinds.registry import explain
from fidelity.matrix.verdict.widening import case_widenings, widened

BASE = b"id,lat,name,wall\n1,10.0,a,5\n2,20.0,b,6\n3,30.0,c,7\n"


def csv(spec: dict, cand: bytes, base: bytes = BASE):
    return explain("m.csv", base, cand, {"kind": "csv", **spec})


def test_reordered_rows_with_a_key_are_within_tolerance_not_identical() -> None:
    d = csv({"key": ["id"]}, b"id,lat,name,wall\n3,30.0,c,7\n1,10.0,a,5\n2,20.0,b,6\n")
    assert d.within_tolerance
    assert "row order" in d.summary


def test_reordered_rows_without_a_key_move() -> None:
    d = csv({}, b"id,lat,name,wall\n3,30.0,c,7\n1,10.0,a,5\n2,20.0,b,6\n")
    assert not d.within_tolerance
    assert "row 1" in d.keys


def test_ignored_column_does_not_move() -> None:
    cand = BASE.replace(b",5\n", b",99\n")
    assert not csv({"key": ["id"]}, cand).within_tolerance
    assert csv({"key": ["id"], "ignore": ["wall"]}, cand).within_tolerance


def test_tolerance_boundary_global_and_per_column() -> None:
    cand = BASE.replace(b"20.0", b"20.2")
    assert not csv({"key": ["id"], "atol": 0.19}, cand).within_tolerance
    assert csv({"key": ["id"], "atol": 0.2000001}, cand).within_tolerance
    assert csv({"key": ["id"], "rtol": 0.01}, cand).within_tolerance
    assert not csv({"key": ["id"], "rtol": 0.0099}, cand).within_tolerance
    per_column = {"key": ["id"], "columns": {"lat": {"atol": 0.5}}}
    assert csv(per_column, cand).within_tolerance
    assert not csv({"key": ["id"], "columns": {"name": {"atol": 0.5}}}, cand).within_tolerance


def test_moved_values_name_columns_keys_and_the_largest_differences() -> None:
    cand = BASE.replace(b"20.0", b"25.0").replace(b"30.0", b"31.0").replace(b",a,", b",z,")
    d = csv({"key": ["id"], "top": 2}, cand)
    assert not d.within_tolerance
    assert set(d.columns) == {"lat", "name"}
    assert set(d.keys) == {"1", "2", "3"}
    assert d.largest[0].where == "1 / name"  # non-numeric first: no size to rank it by
    assert d.largest[1].where == "2 / lat" and d.largest[1].abs_diff == 5.0
    assert len(d.largest) == 2


def test_added_and_dropped_rows_and_columns() -> None:
    cand = b"id,lat,name,wall,extra\n1,10.0,a,5,x\n2,20.0,b,6,y\n4,40.0,d,8,z\n"
    d = csv({"key": ["id"]}, cand)
    assert d.rows_added == ("4",) and d.rows_dropped == ("3",)
    assert "column extra added" in d.summary and "1 row added" in d.summary
    assert not d.within_tolerance
    shorter = csv({}, b"id,lat,name,wall\n1,10.0,a,5\n")
    assert shorter.rows_dropped == ("row 2", "row 3")


def test_composite_keys_and_duplicate_keys() -> None:
    base = b"a,b,v\n1,x,1\n1,y,2\n"
    cand = b"a,b,v\n1,y,2\n1,x,1.5\n"
    d = explain("m.csv", base, cand, {"kind": "csv", "key": ["a", "b"]})
    assert d.keys == ("a=1, b=x",)
    dup = explain("m.csv", base, b"a,b,v\n1,x,1\n1,x,2\n", {"kind": "csv", "key": ["a", "b"]})
    assert "duplicate keys" in dup.summary and not dup.within_tolerance
    missing = explain("m.csv", base, cand, {"kind": "csv", "key": ["nope"]})
    assert "lacks key column nope" in missing.summary


def test_duplicate_keys_in_step_on_both_sides_are_named_for_each() -> None:
    """Keys that are the same text row for row share one hash block: a duplicate is then
    on both sides, and each side is still named."""
    base, cand = b"k,v\n1,a\n2,b\n1,c\n", b"k,v\n1,a\n2,b\n1,d\n"
    d = explain("m.csv", base, cand, {"kind": "csv", "key": ["k"]})
    assert d.summary == "baseline has duplicate keys (1); candidate has duplicate keys (1)"
    one = explain("m.csv", b"k,v\n1,a\n2,b\n3,c\n", cand, {"kind": "csv", "key": ["k"]})
    assert one.summary == "candidate has duplicate keys (1)"


def test_tsv() -> None:
    d = explain(
        "m.tsv", b"k\tv\n1\t1.0\n", b"k\tv\n1\t1.001\n", {"kind": "tsv", "key": ["k"], "rtol": 0.01}
    )
    assert d.within_tolerance


def test_json_paths_and_tolerance() -> None:
    base = b'{"a": 1.0, "b": [1, 2], "c": {"d": "x"}, "t": 5}'
    cand = b'{"a": 1.05, "b": [1], "c": {"d": "y"}, "t": 9}'
    d = explain("r.json", base, cand, {"kind": "json", "atol": 0.1, "ignore": ["$.t"]})
    assert set(d.keys) == {"$.b[1]", "$.c.d"}
    assert not d.within_tolerance
    ok = explain("r.json", b'{"a": 1.0}', b'{"a": 1.05}', {"kind": "json", "atol": 0.1})
    assert ok.within_tolerance
    assert not explain("r.json", b"{", b"{}", {"kind": "json"}).within_tolerance


def test_text_diff_is_bounded() -> None:
    base = "".join(f"line {i}\n" for i in range(200)).encode()
    cand = base.replace(b"line 1", b"LINE 1")
    d = explain("log.txt", base, cand, {"kind": "text", "top": 10})
    assert not d.within_tolerance
    assert len(d.diff) == 11 and d.diff[-1].startswith("... ")


@given(
    st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.floats(0, 1), st.floats(0, 10), st.floats(0, 10)
)
def test_loosening_a_tolerance_never_adds_a_move(
    b: float, c: float, rtol: float, atol: float, more: float
) -> None:
    if Tolerance(rtol, atol).holds(b, c):
        assert Tolerance(rtol + more, atol + more).holds(b, c)


@given(st.permutations(range(6)))
def test_row_order_does_not_matter_once_a_key_is_set(order: list[int]) -> None:
    rows = [f"{i},{i * 1.5},{chr(97 + i)}\n" for i in range(6)]
    base = ("id,v,s\n" + "".join(rows)).encode()
    cand = ("id,v,s\n" + "".join(rows[i] for i in order)).encode()
    assert explain("m.csv", base, cand, {"kind": "csv", "key": ["id"]}).within_tolerance


def test_widening_is_named_and_narrowing_is_not() -> None:
    own = {"kind": "csv", "key": ["id"], "rtol": 0.01, "ignore": ["wall"]}
    assert widened("m.csv", {**own, "rtol": 0.001}, own) == []
    assert widened("m.csv", own, own) == []
    assert widened("m.csv", {**own, "rtol": 0.1}, own) == ["m.csv: rtol widened from 0.01 to 0.1"]
    assert "now ignores name" in widened("m.csv", {**own, "ignore": ["wall", "name"]}, own)[0]
    per_column = {**own, "columns": {"lat": {"atol": 1}}}
    assert widened("m.csv", per_column, own) == ["m.csv: atol for column lat widened from 0 to 1"]
    assert widened("m.csv", own, None) == ["m.csv: now compared as csv, was bytes"]
    assert case_widenings({"m.csv": own}, None) == []


def test_a_switch_to_placeholders_and_from_text_are_named_as_they_are() -> None:
    """`own_paths` from "literal" to the default loosened the gate unseen; a switch from
    `text` to `csv` was said to be from bytes."""
    literal = {"kind": "csv", "own_paths": "literal"}
    assert widened("m.csv", {"kind": "csv"}, literal) == [
        "m.csv: now reads the side's own paths as placeholders, was literal"
    ]
    assert widened("m.csv", literal, {"kind": "csv"}) == []
    assert widened("m.csv", {"kind": "csv"}, {"kind": "text"}) == [
        "m.csv: now compared as csv, was text"
    ]


def test_a_key_removed_is_no_widening_and_one_added_is() -> None:
    """Without a key rows pair by position, which a reorder fails: removing it was called
    widened (exit 3), adding one was rightly."""
    keyed = {"kind": "csv", "key": ["id"]}
    assert widened("m.csv", {"kind": "csv"}, keyed) == []
    assert widened("m.csv", keyed, {"kind": "csv"}) == ["m.csv: key changed from [] to ['id']"]
    assert widened("m.csv", {**keyed, "key": ["id", "t"]}, keyed) != []


def test_infinities_are_close_only_to_the_same_infinity() -> None:
    inf = float("inf")
    assert Tolerance(rtol=0.5).holds(inf, inf)
    assert not Tolerance(rtol=0.5).holds(inf, 5.0)
    assert not Tolerance(rtol=0.5, atol=1.0).holds(inf, -inf)
    assert not Tolerance(rtol=0.5).holds(5.0, inf)


def test_a_dropped_row_alone_is_a_move() -> None:
    d = csv({"key": ["id"]}, b"id,lat,name,wall\n1,10.0,a,5\n2,20.0,b,6\n")
    assert d.rows_dropped == ("3",) and not d.rows_added
    assert "1 row dropped" in d.summary
    assert not d.within_tolerance


def _csv_bytes(header: list[str], rows: Sequence[tuple[str, ...]]) -> bytes:
    out = io.StringIO()
    writer = csv_module.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


# key values built to collide if keys were ever joined into one label (`a=x, b=y, b=z`)
adversarial = st.text(alphabet=st.sampled_from(list('ab=, x"')), max_size=5)


@given(
    st.lists(st.tuples(adversarial, adversarial), min_size=2, max_size=8, unique=True), st.data()
)
def test_composite_keys_never_collide_whatever_their_text(
    keys: list[tuple[str, str]], data: st.DataObject
) -> None:
    rows = [(a, b, str(i)) for i, (a, b) in enumerate(keys)]
    i, j = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=2, max_size=2, unique=True))
    swapped = list(rows)
    swapped[i], swapped[j] = (*rows[i][:2], rows[j][2]), (*rows[j][:2], rows[i][2])
    order = data.draw(st.permutations(range(len(rows))))
    cand = [swapped[k] for k in order]
    spec = {"kind": "csv", "key": ["a", "b"]}
    d = explain("m.csv", _csv_bytes(["a", "b", "v"], rows), _csv_bytes(["a", "b", "v"], cand), spec)
    assert not d.within_tolerance
    assert d.keys_total == 2 and not d.rows_added and not d.rows_dropped, d
    same = explain(
        "m.csv",
        _csv_bytes(["a", "b", "v"], rows),
        _csv_bytes(["a", "b", "v"], [rows[k] for k in order]),
        spec,
    )
    assert same.within_tolerance and same.keys_total == 0


def test_keys_that_would_share_a_label_are_kept_apart() -> None:
    base = b'a,b,v\n"x, b=y",z,1\nx,"y, b=z",2\n'
    cand = b'a,b,v\n"x, b=y",z,2\nx,"y, b=z",1\n'
    d = explain("m.csv", base, cand, {"kind": "csv", "key": ["a", "b"]})
    assert not d.within_tolerance and d.keys_total == 2


def test_ignored_columns_and_reordering_are_said_as_they_are() -> None:
    cand = b"id,lat,name,wall\n2,20.0,b,6\n1,10.0,a,99\n3,30.0,c,7\n"
    d = csv({"key": ["id"], "ignore": ["wall"]}, cand)
    assert d.within_tolerance
    assert d.summary == "no value differs outside the ignored columns; the row order changed"
    quoted = csv({"key": ["id"]}, BASE.replace(b",a,", b',"a",'))
    assert quoted.summary.startswith("no value differs; only the formatting changed")


def test_rtol_boundary_on_the_scalar_path_json_and_rows_out_of_step() -> None:
    """The tolerance has two forms: a column at a time for CSV rows in step (csvblock) and
    one value at a time for JSON and for CSV rows that arrive out of step. This checks the
    second (the control `rtol-ignored-scalar` once survived for want of it)."""
    base, cand = b'{"n": 100.0, "m": [1.0, 2.0]}', b'{"n": 101.0, "m": [1.0, 2.0]}'
    assert explain("r.json", base, cand, {"kind": "json", "rtol": 0.01}).within_tolerance
    assert not explain("r.json", base, cand, {"kind": "json", "rtol": 0.0099}).within_tolerance
    shuffled = b"id,lat,name,wall\n3,30.0,c,7\n1,10.0,a,5\n2,20.2,b,6\n"
    assert csv({"key": ["id"], "rtol": 0.01}, shuffled).within_tolerance
    assert not csv({"key": ["id"], "rtol": 0.0099}, shuffled).within_tolerance


def test_json_too_deep_or_too_large_for_a_float_is_said_not_raised() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    d = explain("r.json", deep, b"[]", {"kind": "json"})
    assert not d.within_tolerance and "nested too deeply" in d.summary
    big = b'{"n": 1' + b"0" * 400 + b"}"
    d = explain("r.json", big, b'{"n": 2' + b"0" * 400 + b"}", {"kind": "json", "rtol": 1.0})
    assert not d.within_tolerance and d.keys == ("$.n",)
    assert explain("r.json", big, big + b" ", {"kind": "json"}).within_tolerance


def test_large_text_is_compared_in_step_and_shown_lines_are_clipped(tmp_path: Path) -> None:
    base, cand = tmp_path / "b.txt", tmp_path / "c.txt"
    line = "x" * 1000 + "\n"
    base.write_text(line * 10_000)  # about 10 MB: over the in-memory diff limit
    cand.write_text(line * 4_999 + "y" * 1000 + "\n" + line * 5_000)
    d = explain("log.txt", base, cand, {"kind": "text"})
    assert "1 lines differ, compared line by line in step" in d.summary
    assert d.diff[0].startswith("-5000: xxx") and d.diff[0].endswith(" [...]")
    assert all(len(shown) < 300 for shown in d.diff)


def test_a_json_beyond_the_limit_is_a_limit_not_a_guess(tmp_path: Path) -> None:
    base, cand = tmp_path / "b.json", tmp_path / "c.json"
    base.write_bytes(b"[" + b"1," * (17 * 2**20) + b"1]")
    cand.write_bytes(b"[2]")
    d = explain("r.json", base, cand, {"kind": "json"})
    assert d.limit and "over the json comparator's 32 MiB limit" in d.summary
    assert not d.within_tolerance


def test_text_that_differs_only_in_undecodable_bytes_or_line_endings_still_moves() -> None:
    assert not explain("t.txt", b"\x80", b"\x81", {"kind": "text"}).within_tolerance
    assert not explain("t.txt", b"a\nb\n", b"a\r\nb\r\n", {"kind": "text"}).within_tolerance


def _leafwise(base: object, cand: object, ignore: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """The JSON walk as it was before equal subtrees were skipped: every leaf visited. What
    differs, and the ignore entries that matched nothing."""
    from fidelity.kinds import jsontree
    from fidelity.kinds.ignores import Ignores

    seen, walked = Ignores(ignore), []
    stack = [iter([(base, cand, "$")])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif not seen.ignored(item[2]):
            b, c, here = item
            if isinstance(b, dict) and isinstance(c, dict):
                stack.append(jsontree._members(b, c, here))
            elif isinstance(b, list) and isinstance(c, list):
                stack.append(jsontree._items(b, c, here))
            elif b != c or type(b) is not type(c):
                walked.append(f"{here} {b!r} {c!r}")
    return walked, set(seen.unmatched())


JSON_LEAVES = st.recursive(
    st.sampled_from([0, 1, 1.0, True, False, None, "a", float("nan")]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=12,
)


@given(JSON_LEAVES, JSON_LEAVES, st.booleans())
@example({"a": 0}, 0, True)  # the equal $.x holds the only match of the ignore entry "a"
@example([1], [1.0], False)
@example([float("nan")], [float("nan")], False)
def test_json_equal_subtrees_skipped_give_what_the_leaf_walk_gives(
    base: object, cand: object, same: bool
) -> None:
    """`==` settles equal subtrees of the documents as `parsed` (numbers kept as their
    bytes), but never calls 1 and 1.0, True and 1, or NaN and NaN equal where the leaf-by-
    leaf walk of the documents as `json.loads` gives them tells them apart; ignore entries
    are still matched. (Parsed by `json.loads` alone, `[1]` and `[1.0]` are `==`: red.)"""
    from fidelity.kinds import jsontree
    from fidelity.kinds.ignores import Ignores

    cand = {"x": base, "y": cand} if same else cand
    base = {"x": base, "y": base} if same else base
    texts = json.dumps(base).encode(), json.dumps(cand).encode()
    b_doc, c_doc = jsontree.parsed(texts[0]), jsontree.parsed(texts[1])
    for ignore in ((), ("$.x",), ("a",)):
        found = Ignores(ignore)
        walked = [f"{w} {b!r} {c!r}" for w, b, c in jsontree._walk(b_doc, c_doc, "$", found)]
        plain = json.loads(texts[0]), json.loads(texts[1])
        assert (walked, set(found.unmatched())) == _leafwise(plain[0], plain[1], ignore)


def test_json_numbers_of_another_type_or_nan_inside_equal_looking_lists_are_found() -> None:
    b = b'{"a": [1, 2], "b": [true], "c": [NaN], "d": {"e": [1, 2]}}'
    c = b'{"a": [1, 2.0], "b": [1], "c": [NaN], "d": {"e": [1, 2]}}'
    result = explain("r.json", b, c, {"kind": "json"})
    assert (result.values_changed, result.values_within) == (1, 2), result  # true vs 1; 2.0, NaN
    assert sorted(d.where for d in result.largest) == ["$.a[1]", "$.b[0]", "$.c[0]"]


def test_json_with_identical_bytes_is_settled_unread() -> None:
    """Red before: identical bytes were parsed, so an unparseable file was 'not valid'."""
    d = explain("r.json", b"{", b"{", {"kind": "json"})
    assert d.within_tolerance and d.summary == "the bytes are identical"


def test_json_equal_subtrees_are_settled_without_encoding_them_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Red before: each equal subtree was confirmed by encoding both sides again with
    `json.dumps` (about 40% of the parse); the numbers are now kept as their bytes."""
    records = [{"id": i, "x": i * 0.5, "ok": True, "tags": ["a", i]} for i in range(100)]
    base = json.dumps({"records": records}).encode()
    records[50]["x"] = "changed"
    cand = json.dumps({"records": records}).encode()
    encoded: list[object] = []
    dumps = json.dumps

    def counted(*args: object, **kwargs: object) -> str:
        encoded.append(args)
        return dumps(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "dumps", counted)
    d = explain("r.json", base, cand, {"kind": "json"})
    assert (d.values_changed, d.keys) == (1, ("$.records[50].x",))
    assert d.largest[0].base == "25.0" and d.largest[0].cand == '"changed"'
    assert encoded == []


def test_rtol_is_relative_to_the_baseline_not_the_larger_value() -> None:
    """100 -> 101 under rtol 0.00995 moves by 1 > 0.995 (rtol x |baseline|). Measured
    against the candidate (1.00495) or the larger side it would pass: red on that fault,
    on the scalar path (JSON, Tolerance) and the column path (CSV rows in step)."""
    assert not Tolerance(rtol=0.00995).holds(100.0, 101.0)
    assert Tolerance(rtol=0.01).holds(100.0, 101.0)
    spec = {"kind": "json", "rtol": 0.00995}
    assert not explain("r.json", b'{"n": 100.0}', b'{"n": 101.0}', spec).within_tolerance
    csv = {"kind": "csv", "key": ["k"], "rtol": 0.00995}
    assert not explain("m.csv", b"k,v\n1,100.0\n", b"k,v\n1,101.0\n", csv).within_tolerance


def test_nan_is_never_within_any_tolerance_of_a_number() -> None:
    """On both paths, alone (red with NaN within tolerance on either path; before, only a
    test comparing the two paths with each other noticed)."""
    nan = float("nan")
    assert not Tolerance(rtol=1e9, atol=1e9).holds(nan, 1.0)
    assert not Tolerance(rtol=1e9, atol=1e9).holds(1.0, nan)
    assert Tolerance().holds(nan, nan)
    spec = {"kind": "csv", "key": ["k"], "rtol": 1e9, "atol": 1e9}
    assert not explain("m.csv", b"k,v\n1,nan\n", b"k,v\n1,1.0\n", spec).within_tolerance
    assert not explain("m.csv", b"k,v\n1,1.0\n", b"k,v\n1,nan\n", spec).within_tolerance
    json_spec = {"kind": "json", "atol": 1e9}
    assert not explain("r.json", b"[NaN]", b"[1.0]", json_spec).within_tolerance
