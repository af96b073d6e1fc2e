"""Where a link lands, the way GitHub resolves it, and whether it lands on something.

- A page-relative path (``guide.md``, ``../x.md``) resolves from the page's folder, and
  only from there: that is what GitHub renders.
- A root-relative path (``/guide/intro.md``) resolves from the repository root, or, when
  the page declares ``link_bases``, from each of those folders in order (a site whose
  ``/`` is ``docs/``). A ``..`` above that root stays at it (``/../x.md`` is ``/x.md``), as
  a browser resolves a URL's path and so GitHub.
- ``link_rewrites`` rewrite a path before it resolves (a site generator's ``.html`` links
  to the ``.md`` sources it renders).
- A page-relative path that leaves the repository (``../../../etc/passwd``), or a symlink
  that points out of it, is FD404 and is never opened.
- Fragments: a heading slug or HTML ``id``/``name`` of a Markdown target; GitHub's
  ``user-content-`` prefix is accepted; ``#top`` always lands; ``?plain=1#L5`` (or
  ``#L5-L9``) is a line of the file's source and must exist. Case follows
  ``anchor_case``: ``"any"`` (GitHub's page script matches any case) or ``"exact"``.
  Fragments into non-Markdown files are not checked.

URLs with a scheme (``https:``, ``mailto:``) or a host (``//``) are never fetched.
Hrefs are percent-decoded before they are compared with the filesystem or with slugs.
"""

from __future__ import annotations

import collections
import enum
import functools
import heapq
import itertools
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from checkers.config import PageRules
from checkers.findings import Code, Finding, clip

if TYPE_CHECKING:  # the link finder is imported when a page is parsed: a cached run needs none
    from checkers.links import Link
    from checkers.parsed import Parsed

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_LINE_ANCHOR = re.compile(r"^L(\d+)(?:C\d+)?(?:-L(\d+)(?:C\d+)?)?$")
_PREFIX = "user-content-"


class Kind(enum.Enum):
    """What a root-relative path is on disk, seen from inside the repository."""

    FILE = "file"
    DIR = "dir"
    MISSING = "missing"
    OUTSIDE = "outside"


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A Markdown target whose anchors cannot be read, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Deferred:
    """The target is a page this run checks later: its anchors come from that parse."""


Anchors = frozenset[str] | Unreadable | Deferred | None
DEFERRED = Deferred()


@dataclass(frozen=True, slots=True)
class Later:
    """A fragment to check once the target page has been parsed."""

    link: Link
    target: Target
    found: str


class Targets(Protocol):
    """What link checking asks of the files around a page (``checkers.site.Site``)."""

    def kind(self, rel: str) -> Kind: ...

    def anchors_of(self, rel: str) -> Anchors: ...

    def line_count(self, rel: str) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Target:
    """A local link target: decoded path, query and fragment."""

    path: str
    query: str
    fragment: str


def local_target(href: str) -> Target | None:
    """The decoded path, query and fragment of a local href; None for external URLs."""
    if _SCHEME.match(href) or href.startswith("//"):
        return None
    rest, _, fragment = href.partition("#")
    path, _, query = rest.partition("?")
    return Target(unquote(path), unquote(query), unquote(fragment))


def join(base: str, path: str) -> str:
    """Normalised root-relative path; a leading ``..`` means it leaves the root."""
    parts: list[str] = []
    for part in f"{base}/{path}".split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or "."


def rewrite(path: str, rewrites: tuple[tuple[str, str], ...]) -> str:
    """The path after the first matching ``link_rewrites`` rule (unchanged if none)."""
    for pattern, replacement in rewrites:
        new, count = re.subn(pattern, replacement, path, count=1)
        if count:
            return new
    return path


def clamp(path: str) -> str:
    """A root-relative path with ``..`` at the root dropped, as a browser resolves a URL's
    path (RFC 3986 remove_dot_segments) and so GitHub: ``/../../x`` is ``/x``."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or "."


def candidates(page: str, path: str, link_bases: tuple[str, ...]) -> tuple[str, ...]:
    """Root-relative paths a link's path may mean, in the order they are tried."""
    if path.startswith("/"):
        bases = link_bases or (".",)
        return tuple(dict.fromkeys(join(base, clamp(path)) for base in bases))
    return (join(page.rpartition("/")[0], path),)


def _outside(path: str) -> bool:
    return path == ".." or path.startswith("../")


def _resolve(
    target: Target, page: str, rules: PageRules, site: Targets
) -> tuple[str | None, tuple[Code, str] | None]:
    """(the root-relative file a path lands on, or the problem)."""
    written = target.path
    path = rewrite(written, rules.link_rewrites)
    shown = repr(clip(written))
    if path != written:
        shown += f" (rewritten to {clip(path)!r})"
    tried = candidates(page, path, rules.link_bases)
    inside = [c for c in tried if not _outside(c)]
    if not inside:
        return None, (
            Code.OUTSIDE_ROOT,
            f"target {shown} is outside the repository ({clip(tried[0])} from the root); it is "
            "not read, and GitHub cannot show it: link to a URL instead",
        )
    kinds = [(c, site.kind(c)) for c in inside]
    found = next((c for c, k in kinds if k in (Kind.FILE, Kind.DIR)), None)
    if found is not None:
        return found, None
    leaving = next((c for c, k in kinds if k is Kind.OUTSIDE), None)
    if leaving is not None:
        return None, (
            Code.OUTSIDE_ROOT,
            f"target {shown} is a symlink to outside the repository ({clip(leaving)}); "
            "it is not read",
        )
    where = ", ".join(clip(c) for c in tried)
    return None, (Code.MISSING_FILE, f"target {shown} does not exist ({where})")


@functools.lru_cache(maxsize=256)
def _lowered(known: frozenset[str]) -> frozenset[str]:
    """A target's anchors in lower case, computed once per target (frozensets hash once)."""
    return frozenset(k.lower() for k in known)


def _lands(fragment: str, known: frozenset[str], case: str) -> bool:
    return fragment in known or (case == "any" and fragment.lower() in _lowered(known))


GRAM_ANCHORS = 256  # a 3- or 5-gram held by more anchors than this says too little to use
HINT_CANDIDATES = 32  # anchors compared in full with a broken fragment


def _grams(text: str) -> set[str]:
    padded = f" {text} "
    return {padded[i : i + n] for n in (3, 5) for i in range(len(padded) - n + 1)}


@dataclass(frozen=True, slots=True)
class _Hints:
    """A target's anchors indexed once for "did you mean": lower case -> as written, and
    for each 3- and 5-gram the anchors holding it, or None once more than GRAM_ANCHORS do."""

    lowered: dict[str, str]
    postings: dict[str, list[str] | None]

    def candidates(self, fragment: str) -> list[str]:
        """At most HINT_CANDIDATES anchors sharing the most distinctive grams with
        ``fragment`` (lower case). The work is bounded by the fragment's length times
        GRAM_ANCHORS, whatever the page's size; on a page of near-identical anchors a
        fragment whose every gram is common gets no hint rather than a slow one."""
        postings = self.postings
        held = (postings.get(gram) or () for gram in _grams(fragment))
        shared = collections.Counter(itertools.chain.from_iterable(held))  # counted in C
        if len(shared) <= HINT_CANDIDATES:
            return sorted(shared)
        # the HINT_CANDIDATES most shared, ties to the smaller name: the least count among
        # them found in C, then only the anchors at that count sorted (a key function
        # called for each of thousands of anchors cost half of a hint)
        least = heapq.nlargest(HINT_CANDIDATES, shared.values())[-1]
        above = [anchor for anchor, n in shared.items() if n > least]
        at = sorted(anchor for anchor, n in shared.items() if n == least)
        return sorted(above) + at[: HINT_CANDIDATES - len(above)]


@functools.lru_cache(maxsize=16)
def _hints(known: frozenset[str]) -> _Hints:
    lowered = {k.lower(): k for k in sorted(known)}
    postings: dict[str, list[str] | None] = {}
    for anchor in lowered:
        for gram in _grams(anchor):
            held = postings.setdefault(gram, [])
            if held is None:
                continue
            if len(held) == GRAM_ANCHORS:
                postings[gram] = None
            else:
                held.append(anchor)
    return _Hints(lowered, postings)


@functools.lru_cache(maxsize=1024)  # a renamed heading is often linked to many times
def _hint(fragment: str, known: frozenset[str]) -> str:
    hints = _hints(known)
    lowered = hints.lowered
    if fragment.lower() in lowered:
        return f"; did you mean '#{clip(lowered[fragment.lower()])}'? (anchor_case is 'exact')"
    close = closest(fragment.lower(), hints.candidates(fragment.lower()))
    return f"; did you mean '#{clip(lowered[close])}'?" if close is not None else ""


def closest(word: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
    """``difflib.get_close_matches(word, candidates, n=1, cutoff)[0]``, the same answer
    (highest ratio, ties to the greater string) at a third of the cost: the full ``ratio``
    (most of the cost) is worked out only for candidates whose upper bound, ``quick_ratio``,
    can still beat the best so far."""
    import difflib  # here: most runs have no broken fragment, or none shown

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    bounds = []
    for candidate in candidates:
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() >= cutoff:
            upper = matcher.quick_ratio()
            if upper >= cutoff:
                bounds.append((upper, candidate))
    best: tuple[float, str] | None = None
    for bound in sorted(bounds, reverse=True):
        if best is not None and bound <= best:
            break
        matcher.set_seq1(bound[1])
        score = matcher.ratio()
        if score >= cutoff and (best is None or (score, bound[1]) > best):
            best = (score, bound[1])
    return None if best is None else best[1]


def _line_number(digits: str) -> int:
    """A line anchor's number; one too long to be any file's line (and for ``int`` to read
    past 4,300 digits: a traceback) is past every file."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18


def _line_anchor(target: Target, found: str, site: Targets) -> tuple[Code, str] | None:
    match = _LINE_ANCHOR.match(target.fragment)
    lines = site.line_count(found)
    if match is None or lines is None:
        return None
    first = _line_number(match.group(1))
    if first >= 1 and max(first, _line_number(match.group(2) or "0")) <= lines:
        return None
    return (
        Code.MISSING_ANCHOR,
        f"line anchor '#{clip(target.fragment)}' is past {clip(found)} ({lines} lines)",
    )


@dataclass(frozen=True, slots=True)
class Broken:
    """A link that lands on nothing: its code and message, and for a fragment missing from
    a page's anchors, the (target, fragment) whose "did you mean" ``with_hint`` adds once
    the finding is known to be shown."""

    code: Code
    message: str
    hint: tuple[str, ...] = ()


def fragment_problem(
    target: Target, found: str, rules: PageRules, site: Targets
) -> Broken | Deferred | None:
    """None when the fragment lands, DEFERRED when the target is parsed later, else why."""
    fragment = target.fragment
    if fragment.lower().startswith(_PREFIX):
        fragment = fragment[len(_PREFIX) :]
    if not fragment or fragment.lower() == "top":
        return None
    plain = "plain=1" in target.query.split("&")
    if plain and _LINE_ANCHOR.match(fragment):
        problem = _line_anchor(target, found, site)
        return None if problem is None else Broken(*problem)
    known = site.anchors_of(found)
    if known is None or isinstance(known, Deferred):
        return known
    if isinstance(known, Unreadable):
        return Broken(
            Code.MISSING_ANCHOR,
            f"cannot check '#{clip(fragment)}': {clip(found)} {known.reason}",
        )
    if _lands(fragment, known, rules.anchor_case):
        return None
    message = f"no anchor '#{clip(target.fragment)}' in {clip(found)}"
    return Broken(Code.MISSING_ANCHOR, message, (found, fragment))


def with_hint(finding: Finding, site: Targets) -> Finding:
    """The finding with its "did you mean" in the message, for one that is shown: the
    target's anchors are those the check read (memoised, or recorded in the cache)."""
    if len(finding.hint) != 2:
        return finding
    found, fragment = finding.hint
    known = site.anchors_of(found)
    hint = _hint(fragment, known) if isinstance(known, frozenset) else ""
    if not hint and _LINE_ANCHOR.match(fragment):
        hint = f"; a line of the source needs '?plain=1' before '#{clip(fragment)}'"
    return replace(finding, message=finding.message + hint, hint=())


def check_link(link: Link, page: str, rules: PageRules, site: Targets) -> Broken | Later | None:
    """None when the link lands, Later when its fragment waits for a page, else the problem."""
    target = local_target(link.href)
    if target is None:
        return None
    if target.path:
        found, problem = _resolve(target, page, rules, site)
        if problem is not None:
            return Broken(problem[0], f"{link.kind} {problem[1]}")
        assert found is not None
    else:
        found = page
    answer = fragment_problem(target, found, rules, site)
    return Later(link, target, found) if isinstance(answer, Deferred) else answer


def _subject(link: Link) -> str:
    """A broken link's subject in a baseline: its kind and decoded target, not its line."""
    return f"{link.kind} {unquote(link.href).strip()}"


def _finding(path: str, link: Link, problem: Broken) -> Finding:
    subject = _subject(link)
    return Finding(
        path, link.line, link.col, problem.code, problem.message, subject, hint=problem.hint
    )


def check_links(
    parsed: Parsed, page: str, path: str, rules: PageRules, site: Targets
) -> tuple[list[Finding], list[Later]]:
    """FD401 missing files, FD402 fragments with no anchor, FD404 targets outside the root;
    and the fragments into pages not parsed yet, for ``resolve_later``."""
    from checkers.links import links

    findings, later = [], []
    answers: dict[tuple[str, str], Broken | Later | None] = {}  # a page links a target often
    for link in links(parsed):
        key = (link.href, link.kind)
        if key not in answers:
            answers[key] = check_link(link, page, rules, site)
        problem = answers[key]
        if isinstance(problem, Later):
            later.append(problem if problem.link is link else replace(problem, link=link))
        elif problem is not None:
            findings.append(_finding(path, link, problem))
    return findings, later


def resolve_later(later: list[Later], path: str, rules: PageRules, site: Targets) -> list[Finding]:
    """FD402 for the deferred fragments, now that every page has been parsed."""
    findings = []
    for item in later:
        problem = fragment_problem(item.target, item.found, rules, site)
        if isinstance(problem, Broken):
            findings.append(_finding(path, item.link, problem))
    return findings
