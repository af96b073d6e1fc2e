"""The "did you mean" hint of a broken #fragment costs the same on a page of any size.

At issue 24 each broken fragment was compared with every anchor of its page (4.1x the
parse on a 50 MB page). Now a target's anchors are indexed once by trigram and a fragment
is compared in full with at most `HINT_CANDIDATES` of them. No timing: the test counts the
full comparisons (difflib's `set_seq1`, once per anchor `get_close_matches` scores) for
the same broken fragments on a page of 2,000 anchors and one of 100,000, and the hint must
still name the anchor meant. The red case puts back the comparison with every anchor.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

import pytest

from checkers import linkcheck

WORDS = ("fence", "anchor", "table", "record", "baseline", "matrix")
BROKEN = {
    "section-1236-fenc": "section-1236-fence",
    "section-776-tabel": "section-776-table",
    "sectoin-43-anchor": "section-43-anchor",
    "setup-3": "setup-2",
}


def anchors(n: int) -> frozenset[str]:
    made = {f"section-{i}-{WORDS[i % len(WORDS)]}" for i in range(n)}
    return frozenset(made | {"setup-2", "Install-Steps"})


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    count = [0]
    original = difflib.SequenceMatcher.set_seq1

    def counted(self: difflib.SequenceMatcher[str], a: str) -> None:
        count[0] += 1
        original(self, a)

    monkeypatch.setattr(difflib.SequenceMatcher, "set_seq1", counted)
    yield count


def hints(known: frozenset[str], count: list[int]) -> tuple[dict[str, str], int]:
    linkcheck._hints(known)  # the index is built once per target, outside the count
    count[0] = 0
    said = {fragment: linkcheck._hint(fragment, known) for fragment in BROKEN}
    return said, count[0]


def test_comparisons_do_not_grow_with_the_page(comparisons: list[int]) -> None:
    small, small_count = hints(anchors(2_000), comparisons)
    large, large_count = hints(anchors(100_000), comparisons)
    for fragment, meant in BROKEN.items():
        assert small[fragment] == large[fragment] == f"; did you mean '#{meant}'?", fragment
    assert large_count <= len(BROKEN) * linkcheck.HINT_CANDIDATES
    assert large_count <= small_count + len(BROKEN)


def test_the_exact_case_hint_needs_no_comparison(comparisons: list[int]) -> None:
    said, count = hints(anchors(100_000), comparisons)
    comparisons[0] = 0
    assert linkcheck._hint("install-steps", anchors(100_000)) == (
        "; did you mean '#Install-Steps'? (anchor_case is 'exact')"
    )
    assert comparisons[0] == 0


def test_comparing_with_every_anchor_is_caught(
    comparisons: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red case: candidates are every anchor again; the count grows with the page."""
    monkeypatch.setattr(linkcheck._Hints, "candidates", lambda self, fragment: sorted(self.lowered))
    _, small_count = hints(anchors(2_000), comparisons)
    _, large_count = hints(anchors(20_000), comparisons)
    assert large_count > len(BROKEN) * linkcheck.HINT_CANDIDATES
    assert large_count > small_count + len(BROKEN)
