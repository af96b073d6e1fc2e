"""The words of a verdict: every changed value as old -> new, tolerance words only where a
tolerance applies, a capped number of changes, long values cut around their difference."""

from __future__ import annotations

from dataclasses import replace

from fidelity.kinds.registry import explain
from fidelity.matrix.verdict.compare import CaseResult, FileDelta, Verdict
from fidelity.matrix.verdict.words import case_detail, changes, explanation

SIZES = b"size,human\n999999,1000.0 kB\n999999999,1000.0 MB\n5,5 B\n"


def test_changed_text_values_are_shown_old_to_new_and_never_out_of_tolerance() -> None:
    cand = SIZES.replace(b"1000.0 kB", b"1.0 MB").replace(b"1000.0 MB", b"1.0 GB")
    line = explanation(explain("sizes.csv", SIZES, cand, {"kind": "csv", "key": ["size"]}))
    assert '999999 / human: "1000.0 kB" -> "1.0 MB"' in line
    assert '999999999 / human: "1000.0 MB" -> "1.0 GB"' in line
    assert "2 values changed" in line and "tolerance" not in line


def test_json_strings_booleans_and_types_are_changed_numbers_out_of_tolerance() -> None:
    base = b'{"unit": "1000.0 kB", "ok": true, "n": 1.0, "id": 7}'
    cand = b'{"unit": "1.0 MB", "ok": false, "n": 2.0, "id": "7"}'
    d = explain("r.json", base, cand, {"kind": "json", "atol": 0.5})
    assert "1 values out of tolerance" in d.summary and "3 values changed" in d.summary
    line = explanation(d)
    for pair in ('$.unit: "1000.0 kB" -> "1.0 MB"', "$.ok: true -> false", '$.id: 7 -> "7"'):
        assert pair in line
    assert line.endswith("(+1 more)")  # `$.n: 1.0 -> 2.0`: values without a size come first
    assert "$.n: 1.0 -> 2.0" in changes(d, limit=4)


def test_only_numbers_within_tolerance_say_within_tolerance() -> None:
    within = explain("r.json", b'{"n": 1.0}', b'{"n": 1.05}', {"kind": "json", "atol": 0.1})
    assert within.within_tolerance and within.summary == "1 differ within tolerance"
    assert explanation(within).endswith("$.n: 1.0 -> 1.05")
    text = explain("r.json", b'{"s": "a"}', b'{"s": "b"}', {"kind": "json", "atol": 0.1})
    assert text.summary == "1 values changed"


def test_changes_are_capped_with_a_count_of_the_rest() -> None:
    base = b"k,v\n" + b"".join(b"%d,x%d\n" % (i, i) for i in range(10))
    cand = b"k,v\n" + b"".join(b"%d,y%d\n" % (i, i) for i in range(10))
    shown = changes(explain("t.csv", base, cand, {"kind": "csv", "key": ["k"]}))
    assert shown.count(" -> ") == 3 and shown.endswith("(+7 more)")


def test_long_values_are_cut_around_their_difference() -> None:
    old, new = "a" * 300 + "OLD" + "b" * 300, "a" * 300 + "NEW" + "b" * 300
    d = explain(
        "r.json", f'{{"s": "{old}"}}'.encode(), f'{{"s": "{new}"}}'.encode(), {"kind": "json"}
    )
    shown = changes(d)
    assert "OLD" in shown and "NEW" in shown and len(shown) < 200
    assert "OLD" in d.largest[0].base  # run.json keeps the difference too, not a cut-off start


def test_text_outputs_show_their_changed_lines_old_to_new() -> None:
    base = "".join(f"line {i}\n" for i in range(20)).encode()
    cand = base.replace(b"line 1\n", b"LINE 1\n").replace(b"line 7\n", b"line 7\nnew\n")
    d = explain("log.txt", base, cand, {"kind": "text"})
    assert d.values_out == 2
    assert changes(d) == 'line 2: "line 1" -> "LINE 1", candidate line 9: (absent) -> "new"'


def test_a_moved_output_without_a_comparator_is_named_beside_one_with() -> None:
    """m.csv moved within its tolerance, b.bin (no comparator) changed: the case moved for
    b.bin, but its line (terminal, Markdown, HTML) named only m.csv's tolerated change."""
    within = explain("m.csv", b"k,v\n1,1.0\n", b"k,v\n1,1.001\n", {"kind": "csv", "rtol": 0.01})
    outputs = FileDelta(changed=("b.bin", "m.csv"), added=("new.txt",))
    result = CaseResult("tol", Verdict.MOVED, outputs, FileDelta(changed=("c.db",)), "", (within,))
    line = case_detail(result)
    assert line.startswith("m.csv: 1 differ within tolerance")
    assert line.endswith(" | also differ: b.bin, new.txt, cache/c.db"), line
    alone = replace(result, outputs=FileDelta(changed=("m.csv",)), cache=FileDelta())
    assert "also differ" not in case_detail(alone)
