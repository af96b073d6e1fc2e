"""A baseline of fingerprints: each tolerated finding named, so that new ones fail alone.

A finding's fingerprint is its page, its code and its subject (a link's target, a label, a
paragraph's content: ``Finding.key``), never its line, plus an occurrence index when the
same subject repeats on the page. Against the baseline file (``checkers.ratchets``), a
finding whose subject is listed for its page and code is held; any other finding is new and
fails; a listed subject no longer found is fixed, which passes with a note until
``--update-baseline`` removes it. A fixed finding and a new one on the same page and code
still fail: the new one is not listed. Entries that are counts are judged as counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from checkers import ratchets
from checkers.blake import hex_digest
from checkers.findings import Finding
from checkers.ratchets import RATCHETABLE, Entry, Lowered, Ratchets


@dataclass(frozen=True, slots=True, order=True)
class Fixed:
    """A baseline entry no finding matches any more; ``gone`` when its page no longer
    exists (renamed or deleted)."""

    page: str
    code: str
    subject: str
    gone: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Judged:
    """One page against the baseline: what fails, what is fixed, how many are held per code."""

    findings: list[Finding]
    fixed: list[Fixed]
    held: dict[str, int]


@dataclass(slots=True)
class Updated:
    """What ``update`` changed in the baseline."""

    removed: list[Fixed] = field(default_factory=list)
    converted: list[Lowered] = field(default_factory=list)
    recorded: list[Lowered] = field(default_factory=list)


def fingerprint(page: str, finding: Finding, occurrence: int) -> str:
    """16 hex digits of page, code, subject and occurrence index: stable across edits that
    move the finding, different for a different subject."""
    text = f"{page}\0{finding.code}\0{finding.key}\0{occurrence}"
    return hex_digest(text.encode("utf-8", "surrogatepass"), 8)


def fingerprinted(page: str, findings: Sequence[Finding]) -> list[Finding]:
    """The findings, in order, each with its fingerprint (repeats numbered in order)."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for finding in findings:
        which = (str(finding.code), finding.key)
        out.append(replace(finding, fingerprint=fingerprint(page, finding, seen[which])))
        seen[which] += 1
    return out


def judge(
    page: str,
    findings: Sequence[Finding],
    entries: Mapping[str, Entry],
    ratchet_file: str,
    shown: int | None = None,
) -> Judged:
    """The page's findings judged against its baseline entries; with ``shown``, only the
    first ``shown`` new findings (in order) get their fingerprint: the rest are never
    listed, and fingerprinting 60,000 findings took 0.3 CPU-s."""
    counts = {code: n for code, n in entries.items() if isinstance(n, int)}
    pools = {code: Counter(e) for code, e in entries.items() if not isinstance(e, int)}
    new: list[tuple[Finding, int]] = []
    counted, held = [], Counter[str]()
    seen: Counter[tuple[str, str]] = Counter()
    for finding in findings:
        code, key = str(finding.code), finding.key
        occurrence = seen[code, key]
        seen[code, key] = occurrence + 1
        pool = pools.get(code)
        if code in counts:
            counted.append(finding)
        elif pool is not None and pool[key] > 0:
            pool[key] -= 1
            held[code] += 1
        else:
            new.append((finding, occurrence))
    for code, n in ratchets.measure(counted).items():
        if n <= counts[code]:
            held[code] += n
    over = fingerprinted(page, ratchets.apply_counts(page, counted, counts, ratchet_file))
    new += [(finding, -1) for finding in over]  # -1: fingerprinted already
    new.sort(key=lambda pair: pair[0])
    fixed = [
        Fixed(page, code, subject)
        for code, pool in sorted(pools.items())
        for subject, left in sorted(pool.items())
        for _ in range(left)
    ]
    return Judged(_fingerprint_first(page, new, shown), fixed, dict(held))


def _fingerprint_first(
    page: str, ordered: list[tuple[Finding, int]], shown: int | None
) -> list[Finding]:
    """The findings, the first ``shown`` (all, for None) with their occurrence's
    fingerprint."""
    limit = len(ordered) if shown is None else shown
    return [
        replace(f, fingerprint=fingerprint(page, f, n)) if n >= 0 and i < limit else f
        for i, (f, n) in enumerate(ordered)
    ]


def gone_entries(page: str, entries: Mapping[str, Entry]) -> list[Fixed]:
    """Every entry of a page that no longer exists, each fixed (a count entry once, named
    by its count)."""
    return [
        Fixed(page, code, subject, gone=True)
        for code, entry in sorted(entries.items())
        for subject in (sorted(entry) if not isinstance(entry, int) else [f"(a count of {entry})"])
    ]


def _keys(findings: Sequence[Finding]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for finding in findings:
        keys.setdefault(str(finding.code), []).append(finding.key)
    return keys


def _update_page(
    page: str, entries: dict[str, Entry], found: Sequence[Finding], record: bool, out: Updated
) -> dict[str, Entry]:
    keys = _keys(found)
    kept: dict[str, Entry] = {}
    for code, entry in entries.items():
        now = keys.get(code, [])
        if isinstance(entry, int):
            if len(now) <= entry:  # converted, never raised: over its count it stays red
                out.converted.append(Lowered(page, code, entry, len(now)))
                kept[code] = list(now)
            else:
                kept[code] = entry
            continue
        gone = Counter(entry) - Counter(now)
        out.removed += [Fixed(page, code, s) for s, n in sorted(gone.items()) for _ in range(n)]
        kept[code] = list((Counter(entry) - gone).elements())
    if record:
        for code, now in sorted(keys.items()):
            if code in RATCHETABLE and code not in entries:
                kept[code] = list(now)
                out.recorded.append(Lowered(page, code, 0, len(now)))
    return {code: entry for code, entry in kept.items() if entry}


def update(
    current: Ratchets,
    measured: Mapping[str, Sequence[Finding]],
    record: bool,
    gone: Collection[str] = (),
) -> tuple[dict[str, dict[str, Entry]], Updated]:
    """The baseline after a run over ``measured`` pages: fixed subjects removed, counts
    converted to today's subjects (when within their count), the entries of ``gone`` pages
    (renamed or deleted) dropped; with ``record``, today's findings listed for every page
    and code with no entry. A listed entry is never added to: a new finding there stays red
    (listing it is a deliberate hand edit)."""
    out = Updated()
    new = {
        page: {code: e if isinstance(e, int) else list(e) for code, e in entries.items()}
        for page, entries in current.items()
    }
    for page in sorted(gone):
        out.removed += gone_entries(page, new.pop(page, {}))
    for page, found in sorted(measured.items()):
        new[page] = _update_page(page, new.get(page, {}), found, record, out)
    return {page: entries for page, entries in new.items() if entries}, out
