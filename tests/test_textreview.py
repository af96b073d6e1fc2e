"""Kind `text` reads like a review (fidelity/kinds/textreview.py): reordered lines are said
to be reordered, the real changes come first, one changed line is one change.

Before this, 20,000 shuffled lines were "39980 lines changed" (every line removed and
added) and took difflib minutes; these tests pin the words a reader gets instead.
"""

from __future__ import annotations

import random
import re

from hypothesis import given
from hypothesis import strategies as st

from fidelity.kinds.linediff import diff
from fidelity.kinds.registry import explain
from fidelity.kinds.textdiff import likeness, text_changes
from fidelity.kinds.textreview import chunks, moved_pairs
from fidelity.matrix.verdict.words import changes, explanation

TEXT = {"kind": "text"}
REORDERED = re.compile(r"(\d+) lines reordered \(same lines, different order\)")


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _rows(n: int) -> list[str]:
    return [f"row {i}: value {i * 7 % 1000}" for i in range(n)]


def test_shuffled_lines_with_three_edits_are_reordered_lines_and_three_changes() -> None:
    base = _rows(20_000)
    cand = random.Random(39).sample(base, len(base))
    for at in (5, 900, 1_500):
        cand[at] += " (edited)"
    d = explain("log.txt", _text(base), _text(cand), TEXT)
    found = REORDERED.fullmatch(d.summary.removesuffix("; 3 lines changed"))
    assert found and d.summary.endswith("; 3 lines changed"), d.summary
    assert 19_000 < int(found[1]) <= 19_997
    assert d.values_out == 3
    first_move = next(n for n, line in enumerate(d.diff) if line.startswith("~"))
    assert first_move == 2 + 3 * 3, "the real changes come first: a hunk of 3 lines each"
    edits = [(old, new) for _, old, new in text_changes(d.diff)]
    assert sorted(edits) == sorted(
        (line.removesuffix(" (edited)"), line) for line in edits_of(cand)
    )
    assert d.diff[-1].startswith("... ") and d.diff[-1].endswith(" more diff lines")


def edits_of(lines: list[str]) -> list[str]:
    return [line for line in lines if line.endswith(" (edited)")]


def test_edited_lines_in_swapped_blocks_are_each_paired_with_their_own_old_line() -> None:
    """An edited line that moved is paired with its likest removal (the shuffled test
    above is red when they are paired in order instead: LIKENESS_LINES = 0)."""
    base = _rows(10)
    cand = [*base[5:], *base[:5]]
    cand[3] += "!"
    cand[6] += "!"
    d = explain("log.txt", _text(base), _text(cand), TEXT)
    assert d.summary.endswith("lines reordered (same lines, different order); 2 lines changed")
    assert sorted(text_changes(d.diff)) == [
        ("line 2", base[1], base[1] + "!"),
        ("line 9", base[8], base[8] + "!"),
    ]


def test_a_pure_reorder_is_said_as_one_and_shows_no_change() -> None:
    base = _rows(2_000)
    d = explain("log.txt", _text(base), _text(base[::-1]), TEXT)
    assert d.summary == "1999 lines reordered (same lines, different order)"
    assert not d.within_tolerance and d.values_out == 0
    assert changes(d) == ""
    assert explanation(d) == "log.txt: 1999 lines reordered (same lines, different order)"


def test_a_moved_block_is_one_line_of_the_diff() -> None:
    base = _rows(10_000)
    cand = base[:100] + base[5_000:6_000] + base[100:5_000] + base[6_000:]
    cand[3] = "edited"
    d = explain("log.txt", _text(base), _text(cand), TEXT)
    assert d.summary == "1000 lines reordered (same lines, different order); 1 line changed"
    assert d.diff[2:] == (
        "@@ -3,3 +3,3 @@",
        " row 2: value 14",
        "-row 3: value 21",
        "+edited",
        " row 4: value 28",
        "~ lines 5001-6000 -> candidate lines 101-1100: row 5000: value 0 [...]",
    )
    assert changes(d) == 'line 4: "row 3: value 21" -> "edited"'


def test_one_changed_line_in_100_000_is_one_change() -> None:
    base = _rows(100_000)
    cand = [*base[:50_000], "edited", *base[50_001:]]
    d = explain("log.txt", _text(base), _text(cand), TEXT)
    assert d.summary == "1 line changed" and d.values_out == 1
    assert changes(d) == 'line 50001: "row 50000: value 0" -> "edited"'
    assert d.diff == (
        "--- baseline",
        "+++ candidate",
        "@@ -50000,3 +50000,3 @@",
        " row 49999: value 993",
        "-row 50000: value 0",
        "+edited",
        " row 50001: value 7",
    )


def test_only_line_breaks_differ() -> None:
    d = explain("t.txt", b"a\nb\n", b"a\r\nb\r\n", TEXT)
    assert d.summary == "no line differs: only the line breaks do" and not d.within_tolerance


def test_past_its_budget_the_diff_says_so_and_still_finds_the_reorder() -> None:
    """No line is unique, so nothing anchors the diff: past its budget the files are one
    block, and the reorder and the three edits are still told apart (the edits each paired
    with their own old line, not the next removal in order)."""
    base = [f"value {i % 50}" for i in range(20_000)]
    cand = random.Random(7).sample(base, len(base))
    for at in (5, 900, 1_500):
        cand[at] += " (edited)"
    d = explain("log.txt", _text(base), _text(cand), TEXT)
    assert d.summary.startswith("19997 lines reordered (same lines, different order); ")
    assert "; 3 lines changed; 40000 lines past the diff's budget of " in d.summary
    assert d.summary.endswith(" line comparisons compared as one block, not aligned")
    assert sorted((old, new) for _, old, new in text_changes(d.diff)) == sorted(
        (line.removesuffix(" (edited)"), line) for line in edits_of(cand)
    )


lines = st.lists(st.sampled_from("abcde"), max_size=25)


@given(lines, lines)
def test_every_line_is_kept_reordered_or_changed_once(base: list[str], cand: list[str]) -> None:
    """The lines kept in place, the reordered ones and the real changes account for every
    line of each side exactly once; a reordered line is the same line on both sides."""
    a, b = base, cand
    ops = diff(a, b)
    moved = moved_pairs(ops, a, b)
    assert all(a[i] == b[j] for i, j in moved)
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
    for like in (None, lambda i, j: likeness(base[i], cand[j])):
        found = chunks(ops, moved, like)
        assert kept + len(moved) + sum(c.a2 - c.a1 for c in found) == len(a)
        assert kept + len(moved) + sum(c.b2 - c.b1 for c in found) == len(b)
        changed = sorted([i for c in found for i in range(c.a1, c.a2)] + [i for i, _ in moved])
        assert len(set(changed)) == len(changed)


@given(lines, lines)
def test_the_shown_changes_are_the_lines_that_changed(base: list[str], cand: list[str]) -> None:
    """Each change the report shows names a removed line at its base line number and an
    added one at its candidate line number."""
    d = explain("t.txt", _text(base), _text(cand), {"kind": "text", "top": 10_000})
    if base == cand:
        return
    for where, old, new in text_changes(d.diff):
        number = int(where.split()[-1])
        if where.startswith("line "):
            assert old == base[number - 1]
        else:
            assert old is None and new == cand[number - 1]
    assert d.values_out == len(text_changes(d.diff))
    for old_at, old_lines, new_at, new_lines in _hunks(d.diff):
        assert base[old_at : old_at + len(old_lines)] == old_lines
        assert cand[new_at : new_at + len(new_lines)] == new_lines


HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _hunks(diff: tuple[str, ...]) -> list[tuple[int, list[str], int, list[str]]]:
    """Each hunk as (base index, its base lines, candidate index, its candidate lines),
    its header's counts checked against its lines."""
    found: list[tuple[int, list[str], int, list[str]]] = []
    counts: list[tuple[int, int]] = []
    for line in diff[2:]:
        if head := HUNK.fullmatch(line):
            old_n, new_n = int(head[2] or 1), int(head[4] or 1)
            old_at, new_at = int(head[1]) - (old_n > 0), int(head[3]) - (new_n > 0)
            found.append((old_at, [], new_at, []))
            counts.append((old_n, new_n))
        elif line[:1] in " -" and found:
            found[-1][1].append(line[1:])
        if line[:1] in " +" and found and not head:
            found[-1][3].append(line[1:])
    assert [(len(h[1]), len(h[3])) for h in found] == counts
    return found
