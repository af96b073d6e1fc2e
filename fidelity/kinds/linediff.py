"""A line diff whose cost is bounded for every input shape, as `text` needs it.

Lines are compared by their hashes (dict lookups; a str caches its own, so a file's lines
are hashed in one pass) and by `==` where two hashes agree. Patience diff: a range's
common prefix and suffix are matched, then the lines found exactly once on each side
anchor it, the longest run of anchors in the same order on both sides (an LIS) is kept,
and the gaps between anchors are diffed the same way. A gap with no such line goes to
Myers' diff, which costs (N + M) x D for D differing lines. Every line comparison and
lookup is counted (`Counter`) against a budget of about `BUDGET_PER_LINE x n x log2 n` for
the n lines of both sides: a gap the budget cannot pay for is reported whole as changed,
not aligned (`Counter.unaligned`), so no input costs more than the budget whatever its
shape (issue 22 measured difflib at 165 s on 20,000 reordered lines). Memory: a few words
per line. Not always a minimal diff: patience keeps what is unique in place first.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field

BUDGET_PER_LINE = 8
BUDGET_FLOOR = 20_000  # a small input is never cut short
MYERS_PER_LINE = 16  # one gap's Myers diff may cost this much per line of the gap
Lines = Sequence[Hashable]  # compared by hash, then by ==
Block = tuple[int, int, int]  # a[i : i + n] == b[j : j + n]
Opcode = tuple[str, int, int, int, int]  # as difflib's: tag, a[i1:i2], b[j1:j2]
Span = tuple[int, int, int, int]  # alo, ahi, blo, bhi


def budget_for(lines: int) -> int:
    """The comparisons a diff of `lines` lines (both sides together) may spend."""
    return BUDGET_PER_LINE * lines * max(1, lines.bit_length()) + BUDGET_FLOOR


@dataclass(slots=True)
class Counter:
    """Line comparisons and lookups spent, against a limit; the lines given up on."""

    limit: int
    spent: int = 0
    unaligned: int = 0  # lines of gaps reported whole as changed, past the budget

    @property
    def left(self) -> int:
        return self.limit - self.spent


@dataclass(slots=True)
class _Differ:
    a: Lines
    b: Lines
    counter: Counter
    blocks: list[Block] = field(default_factory=list)

    def run(self) -> list[Block]:
        stack = [(0, len(self.a), 0, len(self.b))]
        while stack:
            alo, ahi, blo, bhi = self._trimmed(stack.pop())
            if alo == ahi or blo == bhi:
                continue
            if self.counter.left <= 0:
                self.counter.unaligned += ahi - alo + bhi - blo
                continue
            anchors = self._anchors((alo, ahi, blo, bhi))
            if not anchors:
                self._myers((alo, ahi, blo, bhi))
                continue
            self._split(anchors, (alo, ahi, blo, bhi), stack)
        return merged(sorted(self.blocks))

    def _split(self, anchors: list[tuple[int, int]], span: Span, stack: list[Span]) -> None:
        """Anchors in a row become one block; the gaps between them, still to diff."""
        alo, ahi, blo, bhi = span
        i0, j0 = alo, blo
        run_i, run_j, n = anchors[0][0], anchors[0][1], 0
        for i, j in anchors:
            if i != run_i + n or j != run_j + n:
                self.blocks.append((run_i, run_j, n))
                run_i, run_j, n = i, j, 0
            if i > i0 or j > j0:
                stack.append((i0, i, j0, j))
            n += 1
            i0, j0 = i + 1, j + 1
        self.blocks.append((run_i, run_j, n))
        stack.append((i0, ahi, j0, bhi))

    def _trimmed(self, span: Span) -> Span:
        """The span without its common prefix and suffix, which become blocks."""
        a, b = self.a, self.b
        alo, ahi, blo, bhi = span
        i, j = alo, blo
        while i < ahi and j < bhi and a[i] == b[j]:
            i, j = i + 1, j + 1
        if i > alo:
            self.blocks.append((alo, blo, i - alo))
        k, m = ahi, bhi
        while k > i and m > j and a[k - 1] == b[m - 1]:
            k, m = k - 1, m - 1
        if k < ahi:
            self.blocks.append((k, m, ahi - k))
        self.counter.spent += (i - alo) + (ahi - k) + 2
        return i, k, j, m

    def _anchors(self, span: Span) -> list[tuple[int, int]]:
        """The lines found once on each side of the span, the longest run in the same order."""
        alo, ahi, blo, bhi = span
        once_a = _once(self.a, alo, ahi)
        once_b = _once(self.b, blo, bhi)
        self.counter.spent += (ahi - alo) + (bhi - blo) + len(once_a)
        pairs = [(i, j) for x, i in once_a.items() if i >= 0 and (j := once_b.get(x, -1)) >= 0]
        return _longest_run(pairs, self.counter)  # once_a is ordered by i: first seen first

    def _myers(self, span: Span) -> None:
        """A gap with no anchor: Myers' diff if the budget pays for it, else changed whole."""
        alo, ahi, blo, bhi = span
        size = ahi - alo + bhi - blo
        self.counter.spent += size
        if set(self.a[alo:ahi]).isdisjoint(self.b[blo:bhi]):
            return  # nothing in common: changed whole is the minimal diff
        cap = min(self.counter.left, MYERS_PER_LINE * size + BUDGET_FLOOR)
        found = myers(self.a[alo:ahi], self.b[blo:bhi], cap, self.counter)
        if found is None:
            self.counter.unaligned += size
            return
        self.blocks.extend((alo + i, blo + j, n) for i, j, n in found)


def _once(seq: Lines, lo: int, hi: int) -> dict[Hashable, int]:
    """Each line of seq[lo:hi] -> its index when it occurs once there, else -1."""
    seen: dict[Hashable, int] = {}
    for i in range(lo, hi):
        x = seq[i]
        seen[x] = -1 if x in seen else i
    return seen


def _longest_run(pairs: list[tuple[int, int]], counter: Counter) -> list[tuple[int, int]]:
    """The longest subsequence of pairs (sorted by i) whose j increase too (patience sort);
    all of them, after one pass in C, when they already do (few lines changed, none moved)."""
    js = [j for _, j in pairs]
    if js == sorted(js):
        counter.spent += len(pairs)
        return pairs
    tails: list[int] = []  # the smallest last j of a run of each length
    ends: list[int] = []  # which pair ends it
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        at = bisect_left(tails, j)
        back[k] = ends[at - 1] if at else -1
        if at == len(tails):
            tails.append(j)
            ends.append(k)
        else:
            tails[at], ends[at] = j, k
    counter.spent += len(pairs) * max(1, len(tails).bit_length())
    run = []
    k = ends[-1] if ends else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def myers(a: Lines, b: Lines, cap: int, counter: Counter) -> list[Block] | None:
    """Myers' minimal diff of a and b as matching blocks; None once it costs more than cap."""
    n, m = len(a), len(b)
    off = n + m + 1
    v = [0] * (2 * off + 1)
    trace: list[list[int]] = []
    spent = 0
    for d in range(n + m + 1):
        for k in range(-d, d + 1, 2):
            down = k == -d or (k != d and v[off + k - 1] < v[off + k + 1])
            x = v[off + k + 1] if down else v[off + k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            v[off + k] = x
            spent += 1 + x - start
            if x >= n and y >= m:
                trace.append(v[off - d : off + d + 1])
                counter.spent += spent
                return _traced(trace, n, m)
        trace.append(v[off - d : off + d + 1])
        if spent > cap:
            counter.spent += spent
            return None
    raise AssertionError("unreachable: a diff of n + m edits always ends")  # pragma: no cover


def _traced(trace: list[list[int]], x: int, y: int) -> list[Block]:
    """The matching blocks of the path Myers' search found, from its saved frontiers."""
    blocks: list[Block] = []
    for d in range(len(trace) - 1, 0, -1):
        prev = trace[d - 1]  # frontier d - 1, for diagonals -(d - 1) .. d - 1

        def at(k: int, prev: list[int] = prev, d: int = d) -> int:
            return prev[k + d - 1]

        k = x - y
        down = k == -d or (k != d and at(k - 1) < at(k + 1))
        pk = k + 1 if down else k - 1
        px = at(pk)
        py = px - pk
        mx, my = (px, py + 1) if down else (px + 1, py)
        if x > mx:
            blocks.append((mx, my, x - mx))
        x, y = px, py
    if x > 0:
        blocks.append((0, 0, x))
    return blocks[::-1]


def merged(blocks: Sequence[Block]) -> list[Block]:
    """Sorted blocks with the adjacent ones joined."""
    out: list[Block] = []
    for i, j, n in blocks:
        if n == 0:
            continue
        if out and out[-1][0] + out[-1][2] == i and out[-1][1] + out[-1][2] == j:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + n)
        else:
            out.append((i, j, n))
    return out


def matching_blocks(a: Lines, b: Lines, counter: Counter) -> list[Block]:
    """The lines a and b share, in order, as blocks (a patience diff: not always the longest
    common subsequence); the gaps the counter could not pay for share none."""
    return _Differ(a, b, counter).run()


def opcodes(blocks: Sequence[Block], na: int, nb: int) -> Iterator[Opcode]:
    """How to turn a into b, as difflib's opcodes, from the matching blocks."""
    i = j = 0
    for bi, bj, n in [*blocks, (na, nb, 0)]:
        tag = "replace" if i < bi and j < bj else "delete" if i < bi else "insert"
        if i < bi or j < bj:
            yield tag, i, bi, j, bj
        if n:
            yield "equal", bi, bi + n, bj, bj + n
        i, j = bi + n, bj + n


def diff(a: Lines, b: Lines, counter: Counter | None = None) -> list[Opcode]:
    """The opcodes from a to b, spending from counter (a fresh budget when None)."""
    counter = counter or Counter(budget_for(len(a) + len(b)))
    return list(opcodes(matching_blocks(a, b, counter), len(a), len(b)))
