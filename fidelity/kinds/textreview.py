"""An edit script as a reviewer reads it: reordered lines apart from the changed ones.

A line removed in one place and added in another is the same line reordered, not two
changes: the k-th removal of a line pairs with its k-th addition. What is left are the real
changes, shown first as unified-diff hunks (one line of context, as `difflib` gives it, so
`textdiff.text_changes` reads them as it reads a stored run's); then the reordered lines,
each run that moved together as one `~` line, which no hunk parser takes for a change.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass

from fidelity.kinds.linediff import Lines, Opcode

CONTEXT = 1  # lines of context around a change, as the stored diffs have always had
LIKENESS_LINES = 64  # lines a side up to which changes that moved are paired by likeness
Likeness = Callable[[int, int], int]  # how alike base line i and candidate line j are


@dataclass(frozen=True, slots=True)
class Chunk:
    """Changed lines a[a1:a2] -> b[b1:b2]; `open_*`: an unchanged line is next to it."""

    a1: int
    a2: int
    b1: int
    b2: int
    open_before: bool = True
    open_after: bool = True

    @property
    def pairs(self) -> int:
        """Its changes as a report pairs them: removed and added lines in order."""
        return max(self.a2 - self.a1, self.b2 - self.b1)


def moved_pairs(ops: Sequence[Opcode], a: Lines, b: Lines) -> list[tuple[int, int]]:
    """The removed lines that were added elsewhere, as (base index, candidate index) in base
    order: a line's k-th removal with its k-th addition."""
    removed: dict[Hashable, list[int]] = {}
    for tag, i1, i2, _, _ in ops:
        if tag != "insert" and tag != "equal":
            for i in range(i1, i2):
                removed.setdefault(a[i], []).append(i)
    taken: dict[Hashable, int] = {}
    pairs = []
    for tag, _, _, j1, j2 in ops:
        if tag != "delete" and tag != "equal":
            for j in range(j1, j2):
                olds = removed.get(b[j])
                k = taken.get(b[j], 0)
                if olds and k < len(olds):
                    pairs.append((olds[k], j))
                    taken[b[j]] = k + 1
    pairs.sort()
    return pairs


def _runs(dels: list[int], adds: list[int], op: Opcode) -> list[Chunk]:
    """One opcode's real changes, its k-th removal paired with its k-th addition, cut
    wherever either side skips a reordered line; only the ends can touch unchanged lines."""
    _, i1, i2, j1, j2 = op
    spans: list[list[int]] = []  # a1, a2, b1, b2
    for k in range(max(len(dels), len(adds))):
        i = dels[k] if k < len(dels) else None
        j = adds[k] if k < len(adds) else None
        end_a, end_b = (spans[-1][1], spans[-1][3]) if spans else (i1, j1)
        if not spans or i not in (None, end_a) or j not in (None, end_b):
            a1, b1 = (end_a if i is None else i), (end_b if j is None else j)
            spans.append([a1, a1, b1, b1])
        spans[-1][1] += i is not None
        spans[-1][3] += j is not None
    last = len(spans) - 1
    return [
        Chunk(a1, a2, b1, b2, n == 0 and (a1, b1) == (i1, j1), n == last and (a2, b2) == (i2, j2))
        for n, (a1, a2, b1, b2) in enumerate(spans)
    ]


def chunks(
    ops: Sequence[Opcode], moved: Sequence[tuple[int, int]], like: Likeness | None = None
) -> list[Chunk]:
    """The real changes: each opcode less its reordered lines. Where lines were reordered,
    which removal an addition replaces is a guess: when few (up to LIKENESS_LINES a side),
    the lines of opcodes that held reordered ones, and the removals and additions with no
    partner in their own opcode, are paired the likest first (`like`), one line each, so
    that an edited line that also moved is one change; when many, paired in order."""
    out_a = {i for i, _ in moved}
    out_b = {j for _, j in moved}
    plain: list[Chunk] = []
    mixed: list[tuple[list[int], list[int], Opcode]] = []  # opcodes with reordered lines
    for op in ops:
        tag, i1, i2, j1, j2 = op
        if tag == "equal":
            continue
        dels = [i for i in range(i1, i2) if i not in out_a]
        adds = [j for j in range(j1, j2) if j not in out_b]
        if len(dels) == i2 - i1 and len(adds) == j2 - j1:
            plain.append(Chunk(i1, i2, j1, j2))
        else:
            mixed.append((dels, adds, op))
    if not moved:
        return plain
    pool_a = _alone_a(plain) + [i for dels, _, _ in mixed for i in dels]
    pool_b = _alone_b(plain) + [j for _, adds, _ in mixed for j in adds]
    if like is not None and max(len(pool_a), len(pool_b)) <= LIKENESS_LINES:
        kept = [c for c in plain if c.a1 != c.a2 and c.b1 != c.b2]
        return _one_line_each(kept, pool_a, pool_b, _likest(pool_a, pool_b, like))
    runs = plain + [c for dels, adds, op in mixed for c in _runs(dels, adds, op)]
    alone_a, alone_b = _alone_a(runs), _alone_b(runs)
    kept = [c for c in runs if c.a1 != c.a2 and c.b1 != c.b2]
    return _one_line_each(kept, alone_a, alone_b, list(zip(alone_a, alone_b, strict=False)))


def _alone_a(found: list[Chunk]) -> list[int]:
    """The lines of removal-only chunks."""
    return [i for c in found if c.b1 == c.b2 for i in range(c.a1, c.a2)]


def _alone_b(found: list[Chunk]) -> list[int]:
    """The lines of addition-only chunks."""
    return [j for c in found if c.a1 == c.a2 for j in range(c.b1, c.b2)]


def _likest(alone_a: list[int], alone_b: list[int], like: Likeness) -> list[tuple[int, int]]:
    """Lines removed and lines added paired, the likest pair first (ties: in order)."""
    scored = sorted((-like(i, j), i, j) for i in alone_a for j in alone_b)
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, i, j in scored:
        if i not in used_a and j not in used_b:
            pairs.append((i, j))
            used_a.add(i)
            used_b.add(j)
    return pairs


def _one_line_each(
    kept: list[Chunk], alone_a: list[int], alone_b: list[int], pairs: list[tuple[int, int]]
) -> list[Chunk]:
    """The chunks kept, then each pair and each line left unpaired as a chunk of its own."""
    kept = kept + [Chunk(i, i + 1, j, j + 1, False, False) for i, j in pairs]
    paired_a, paired_b = {i for i, _ in pairs}, {j for _, j in pairs}
    kept += [Chunk(i, i + 1, 0, 0, False, False) for i in alone_a if i not in paired_a]
    kept += [Chunk(0, 0, j, j + 1, False, False) for j in alone_b if j not in paired_b]
    return sorted(kept, key=lambda c: (c.a1 if c.a1 != c.a2 else c.b1, c.b1))


def _span(start: int, stop: int) -> str:
    """A hunk header's range, as difflib writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if not length else start + 1},{length}"


def _grouped(found: Sequence[Chunk]) -> Iterator[list[Chunk]]:
    """Chunks one hunk shows together: at most 2 x CONTEXT unchanged lines apart, the same
    lines on both sides (no reordered line between them)."""
    group: list[Chunk] = []
    for c in found:
        if group:
            p = group[-1]
            gap = c.a1 - p.a2
            if not (p.open_after and c.open_before and gap == c.b1 - p.b2 <= 2 * CONTEXT):
                yield group
                group = []
        group.append(c)
    if group:
        yield group


def hunks(found: Sequence[Chunk], a: Sequence[str], b: Sequence[str], na: int) -> Iterator[str]:
    """The chunks as unified-diff hunks with CONTEXT lines of context where unchanged."""
    for group in _grouped(found):
        first, last = group[0], group[-1]
        before = CONTEXT if first.open_before and first.a1 > 0 else 0
        after = CONTEXT if last.open_after and last.a2 < na else 0
        sa, sb = first.a1 - before, first.b1 - before
        yield f"@@ -{_span(sa, last.a2 + after)} +{_span(sb, last.b2 + after)} @@"
        yield from (" " + line for line in a[sa : first.a1])
        for n, c in enumerate(group):
            if n:
                yield from (" " + line for line in a[group[n - 1].a2 : c.a1])
            yield from ("-" + line for line in a[c.a1 : c.a2])
            yield from ("+" + line for line in b[c.b1 : c.b2])
        yield from (" " + line for line in a[last.a2 : last.a2 + after])


def moves(moved: Sequence[tuple[int, int]], a: Sequence[str]) -> Iterator[str]:
    """Each run of reordered lines that moved together, as one `~` line."""
    k = 0
    while k < len(moved):
        i, j = moved[k]
        n = 1
        while k + n < len(moved) and moved[k + n] == (i + n, j + n):
            n += 1
        if n == 1:
            yield f"~ line {i + 1} -> candidate line {j + 1}: {a[i]}"
        else:
            yield f"~ lines {i + 1}-{i + n} -> candidate lines {j + 1}-{j + n}: {a[i]} [...]"
        k += n
