"""The "did you mean" hint of a broken #fragment costs the same on a page of any size.

At issue 24 each broken fragment was compared with every anchor of its page (4.1x the
parse on a 50 MB page). Now a target's anchors are indexed once by trigram and a fragment
is compared in full with at most `HINT_CANDIDATES` of them. No timing: the test counts the
full comparisons (difflib's `set_seq1`, once per anchor `get_close_matches` scores) for
the same broken fragments on a page of 2,000 anchors and one of 100,000, and the hint must
still name the anchor meant. The red case puts back the comparison with every anchor.
"""

from __future__ import annotations

import collections
import difflib
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from checkers import linkcheck
from checkers.cache import Cache
from checkers.check import SHOWN, Page, check_pages
from checkers.config import from_section

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


@pytest.fixture(autouse=True)
def _fresh_hints() -> None:
    """`_hint` is memoised for the life of the process: each test counts its own work."""
    linkcheck._hint.cache_clear()


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


@pytest.fixture
def hinted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The fragments a "did you mean" was worked out for, in order."""
    asked: list[str] = []
    original = linkcheck._hint

    def counted(fragment: str, known: frozenset[str]) -> str:
        asked.append(fragment)
        return original(fragment, known)

    monkeypatch.setattr(linkcheck, "_hint", counted)
    yield asked


def many_broken(root: Path, broken: int) -> tuple[Page, ...]:
    """One page with 50 headings and `broken` links to fragments one letter off them, and a
    second page that links into it (its fragments are resolved later, then hinted)."""
    (root / ".git").mkdir()
    headings = "".join(f"## Part {i} {WORDS[i % 6]}\n\n" for i in range(50))
    links = "".join(f"[x](#part-{i % 50}-{WORDS[i % 50 % 6]}s) {i}\n\n" for i in range(broken))
    (root / "big.md").write_text(f"# Big\n\n{headings}{links}")
    (root / "other.md").write_text("# Other\n\n[x](big.md#part-3-recods)\n")
    return (Page("other.md", "other.md"), Page("big.md", "big.md"))


def test_hints_are_worked_out_only_for_the_findings_shown(
    tmp_path: Path, hinted: list[str]
) -> None:
    """Red before: all 2,501 broken fragments were hinted, 1,001 of them shown."""
    pages = many_broken(tmp_path, 2_500)
    result = check_pages(tmp_path, pages, from_section({}))
    assert result.not_shown == {"big.md": {"FD402": 1_500}}
    assert len(result.findings) == SHOWN + 1
    assert len(hinted) == SHOWN + 1
    said = {f.path: f.message for f in result.findings if f.line == 3}
    assert (
        said["other.md"] == "no anchor '#part-3-recods' in big.md; did you mean '#part-3-record'?"
    )
    last = result.findings[-2]
    assert (last.path, last.line) == ("big.md", 103 + 2 * 999)
    assert last.message == "no anchor '#part-49-anchors' in big.md; did you mean '#part-49-anchor'?"


def test_a_cached_rerun_says_the_same_hints_and_works_out_only_the_shown(
    tmp_path: Path, hinted: list[str]
) -> None:
    pages = many_broken(tmp_path, 1_200)
    config = from_section({})
    first = check_pages(tmp_path, pages, config, cache=Cache(tmp_path / "c", "1", "", b"k" * 32))
    hinted.clear()
    cache = Cache(tmp_path / "c", "1", "", b"k" * 32)
    again = check_pages(tmp_path, pages, config, cache=cache)
    assert cache.hits == 2
    assert [f.render() for f in again.findings] == [f.render() for f in first.findings]
    assert again.findings[-2].message.endswith("did you mean '#part-49-anchor'?")
    assert len(hinted) == SHOWN + 1


def test_the_closest_anchor_is_difflibs_answer() -> None:
    """`linkcheck.closest` skips full comparisons that cannot win; its answer must be
    `difflib.get_close_matches(..., n=1)`'s, ties and cutoff included."""
    rng = random.Random(39)
    known = sorted(anchors(600))
    words = [*BROKEN, "setup", "install-step", "x", "section-", "", *known[:40]]
    words += [
        "".join(rng.choice("section-12ab") for _ in range(rng.randrange(1, 24))) for _ in range(400)
    ]
    pools = [known[i : i + 32] for i in range(0, 600, 25)] + [["ab", "ba", "abc", "acb", "b"]]
    for word in [*words, "ab", "abc", "bca"]:
        for pool in pools:
            expected = difflib.get_close_matches(word, pool, n=1)
            assert linkcheck.closest(word, pool) == (expected[0] if expected else None), word


def test_the_candidates_are_the_most_shared_anchors_ties_to_the_smaller_name() -> None:
    """`candidates` picks its anchors without a key function per anchor; the pick must be
    the one it stands for: the most grams shared, ties to the smaller name."""
    rng = random.Random(7)
    for _ in range(400):
        n = rng.choice([3, 40, 300, 1_500])
        known = frozenset(
            f"{rng.choice(('section', 'part', 's'))}-{rng.randrange(n)}-{rng.choice(WORDS)}"
            for _ in range(n)
        )
        word = rng.choice(sorted(known))
        cut = rng.randrange(len(word))
        fragment = word[:cut] + rng.choice("xyz-0") + word[rng.randrange(cut, len(word)) :]
        hints = linkcheck._hints(known)
        held = [hints.postings.get(gram) or () for gram in linkcheck._grams(fragment)]
        shared = collections.Counter(a for anchors_ in held for a in anchors_)
        want = sorted(shared, key=lambda a: (-shared[a], a))[: linkcheck.HINT_CANDIDATES]
        assert sorted(hints.candidates(fragment)) == sorted(want), fragment


def test_a_fragment_linked_many_times_is_hinted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A renamed heading is often linked from many places: its "did you mean" is worked
    out once per run, not once per link (red before: 300 full searches)."""
    (tmp_path / ".git").mkdir()
    heads = "".join(f"## Step {i} {WORDS[i % 6]}\n\n" for i in range(30))
    body = "".join(f"[x](#step-2-tabel) {i}\n\n" for i in range(300))
    (tmp_path / "many.md").write_text(f"# Many\n\n{heads}{body}")
    searched: list[str] = []
    original = linkcheck.closest

    def counted(word: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
        searched.append(word)
        return original(word, candidates, cutoff)

    monkeypatch.setattr(linkcheck, "closest", counted)
    result = check_pages(tmp_path, (Page("many.md", "many.md"),), from_section({}))
    assert len(result.findings) == 300
    assert {f.message for f in result.findings} == {
        "no anchor '#step-2-tabel' in many.md; did you mean '#step-2-table'?"
    }
    assert searched == ["step-2-tabel"]


def test_a_target_linked_many_times_is_resolved_once_and_each_link_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's links to one target share one answer (red before: 40 resolutions of the
    same href); each link keeps its own finding and line, including links into a page
    parsed after it, whose fragments are checked later."""
    (tmp_path / ".git").mkdir()
    same = "".join(f"[a](b.md#gone) and [b](#nope) {i}\n\n" for i in range(20))
    (tmp_path / "a.md").write_text(f"# A\n\n{same}[c](b.md#there)\n")
    (tmp_path / "b.md").write_text("# B\n\n## There\n")
    resolved: list[str] = []
    original = linkcheck.local_target

    def counted(href: str) -> linkcheck.Target | None:
        resolved.append(href)
        return original(href)

    monkeypatch.setattr(linkcheck, "local_target", counted)
    pages = (Page("a.md", "a.md"), Page("b.md", "b.md"))
    result = check_pages(tmp_path, pages, from_section({}))
    assert sorted(resolved) == ["#nope", "b.md#gone", "b.md#there"]
    said = [(f.line, f.message.split(";")[0]) for f in result.findings]
    assert said == [
        (line, message)
        for line in range(3, 43, 2)
        for message in ("no anchor '#gone' in b.md", "no anchor '#nope' in a.md")
    ]
