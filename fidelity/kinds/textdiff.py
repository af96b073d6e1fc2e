"""Kind `text`: a bounded diff that reads like a review. Text has no tolerance, so any
difference is a move, except one made only of the sides' own paths.

Up to `TEXT_DIFF_LIMIT_BYTES` a file is diffed in memory by `linediff` (line hashes, a
patience diff with a budget: no input shape costs more than about n log n comparisons),
and `textreview` says which lines were only reordered and which changed; the real changes
come first, as unified-diff hunks. Beyond the limit, files are compared line by line in
step (bounded memory, where the diff holds every line: an inserted line makes every later
line differ, and the summary says so). A report shows the changed lines, removed and added
ones paired in order.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from fidelity.kinds.base import Change, Plain, Spec
from fidelity.kinds.diffs import OWN_PATHS, SHOWN_LINE_CHARS, Difference, OutputDiff
from fidelity.kinds.linediff import Counter, budget_for, matching_blocks, opcodes
from fidelity.kinds.sources import NO_PATHS, Neutral, Source, opened, read, size
from fidelity.kinds.textreview import chunks, hunks, moved_pairs, moves

TEXT_DIFF_LINES = 40
TEXT_DIFF_LIMIT_BYTES = 8 * 2**20  # above this, text is compared line by line in step
_PIECE = 2**20  # a line longer than this is compared piece by piece
NAME = "text"


def _clip(line: str) -> str:
    return line if len(line) <= SHOWN_LINE_CHARS else line[:SHOWN_LINE_CHARS] + " [...]"


def _shown(lines: Iterable[str], limit: int) -> tuple[str, ...]:
    """The first `limit` lines, clipped, then how many more there were."""
    it = iter(lines)
    first = tuple(_clip(line) for line in islice(it, limit))
    more = sum(1 for _ in it)
    return first + ((f"... {more} more diff lines",) if more else ())


def compare_text(
    path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """A bounded diff that reads like a review; text has no tolerance, so any difference is
    a move, except one made only of the sides' own paths."""
    limit = int(spec.get("top", TEXT_DIFF_LINES))
    if max(size(base), size(cand)) > TEXT_DIFF_LIMIT_BYTES:
        return _text_in_step(path, base, cand, limit)
    # surrogateescape keeps undecodable bytes distinct ("replace" would make \x80 == \x81)
    b_lines = read(base).decode(errors="surrogateescape").splitlines()
    c_lines = read(cand).decode(errors="surrogateescape").splitlines()
    if len(b_lines) == len(c_lines):
        differing = [(b, c) for b, c in zip(b_lines, c_lines, strict=True) if b != c]
        if differing and all(neutral.same(b, c) for b, c in differing):
            return OutputDiff(path, NAME, True, OWN_PATHS)
    return _reviewed(path, b_lines, c_lines, limit)


def _reviewed(path: str, b_lines: list[str], c_lines: list[str], limit: int) -> OutputDiff:
    """The real changes as hunks, then the reordered lines, in at most `limit` lines."""
    counter = Counter(budget_for(len(b_lines) + len(c_lines)))
    # each line is compared by its hash (a str caches its own) in every lookup, and
    # character by character only where two hashes are equal
    ops = list(opcodes(matching_blocks(b_lines, c_lines, counter), len(b_lines), len(c_lines)))
    moved = moved_pairs(ops, b_lines, c_lines)
    found = chunks(ops, moved, lambda i, j: likeness(b_lines[i], c_lines[j]))
    shown = chain(
        ("--- baseline", "+++ candidate"),
        hunks(found, b_lines, c_lines, len(b_lines)),
        moves(moved, b_lines),
    )
    pairs = sum(c.pairs for c in found)
    return OutputDiff(
        path,
        NAME,
        False,
        _summary(len(moved), pairs, counter),
        diff=_shown(shown, limit),
        values_out=pairs,
        values_changed=pairs,
    )


def likeness(old: str, new: str, room: int = 200) -> int:
    """How alike two lines are: the characters they share at their start and at their
    end, each of the first and last `room` (so that two long lines cost no more)."""
    head = len(os.path.commonprefix([old[:room], new[:room]]))
    tail = len(os.path.commonprefix([old[-room:][::-1], new[-room:][::-1]]))
    return head + tail


def _summary(moved: int, changed: int, counter: Counter) -> str:
    parts = [f"{_lines(moved)} reordered (same lines, different order)"] if moved else []
    parts += [f"{_lines(changed)} changed"] if changed else []
    if counter.unaligned:
        parts.append(
            f"{counter.unaligned} lines past the diff's budget of {counter.limit} line "
            "comparisons compared as one block, not aligned"
        )
    return "; ".join(parts) or "no line differs: only the line breaks do"


def _text_in_step(path: str, base: Source, cand: Source, limit: int) -> OutputDiff:
    """Large text, line by line in step: bounded memory, but an inserted line makes every
    later line differ, and the summary says so."""
    differing, total = 0, 0
    shown: list[str] = []
    with opened(base) as fb, opened(cand) as fc:
        number = 0
        while True:
            b, c = fb.readline(_PIECE), fc.readline(_PIECE)
            if not b and not c:
                break
            number += 1
            if b == c:
                continue
            differing += 1
            for sign, text in (("-", b), ("+", c)):
                if text:
                    total += 1
                    if len(shown) < limit:
                        shown.append(f"{sign}{number}: {text.decode(errors='replace').rstrip()}")
    summary = f"{differing} lines differ, compared line by line in step (over "
    summary += f"{TEXT_DIFF_LIMIT_BYTES // 2**20} MiB: an inserted line shifts all later ones)"
    shown_lines = _shown(shown, limit)
    shown_lines += (f"... {total - limit} more diff lines",) if total > limit else ()
    return OutputDiff(
        path,
        NAME,
        False,
        summary,
        diff=shown_lines,
        values_out=differing,
        values_changed=differing,
    )


_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_IN_STEP = re.compile(r"([-+])(\d+): (.*)", re.S)
LineChange = tuple[str, str | None, str | None]  # where, old line, new line (None: absent)


def _paired(removed: list[tuple[int, str]], added: list[tuple[int, str]]) -> Iterator[LineChange]:
    for i in range(max(len(removed), len(added))):
        old = removed[i] if i < len(removed) else None
        new = added[i] if i < len(added) else None
        where = f"line {old[0]}" if old else f"candidate line {new[0] if new else 0}"
        yield where, old[1] if old else None, new[1] if new else None


def _unified_changes(lines: Sequence[str]) -> Iterator[LineChange]:
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []
    old = new = 0
    for line in lines[2:]:  # after the "--- baseline" and "+++ candidate" headers
        hunk = _HUNK.match(line)
        if line[:1] not in "+-":
            yield from _paired(removed, added)
            removed, added = [], []
        if hunk:
            old, new = int(hunk[1]), int(hunk[2])
        elif line[:1] == "-":
            removed.append((old, line[1:]))
            old += 1
        elif line[:1] == "+":
            added.append((new, line[1:]))
            new += 1
        elif line[:1] == " ":
            old, new = old + 1, new + 1
    yield from _paired(removed, added)


def text_changes(lines: Sequence[str]) -> list[LineChange]:
    """The changed lines of a text diff (as `compare_text` keeps it) as (where, old, new):
    removed and added lines paired in order within each run; a line with no partner on the
    other side is None."""
    if lines[:1] and lines[0].startswith("--- "):
        return list(_unified_changes(lines))
    by_line: dict[str, list[str | None]] = {}
    for line in lines:
        step = _IN_STEP.fullmatch(line)
        if step:
            pair = by_line.setdefault(f"line {step[2]}", [None, None])
            pair[step[1] == "+"] = step[3]
    return [(where, old, new) for where, (old, new) in by_line.items()]


def _bare(text: str | None) -> str:
    return "(absent)" if text is None else text


def _line(text: str | None) -> str:
    return "(absent)" if text is None else json.dumps(text)


@dataclass(frozen=True, slots=True)
class Text(Plain):
    name: str = NAME
    reads: frozenset[str] = frozenset({"top", "own_paths"})
    tolerant: bool = False
    where_is_key: bool = False
    plots: bool = False

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        return compare_text(path, base, cand, spec, neutral)

    def changes(self, found: OutputDiff) -> tuple[list[Change], int]:
        """The changed lines, each quoted, `(absent)` where a line was added or removed."""
        lines = [(where, _line(old), _line(new)) for where, old, new in text_changes(found.diff)]
        return lines, found.values_out

    def kept(self, found: OutputDiff) -> tuple[str, tuple[Difference, ...]]:
        pairs = text_changes(found.diff)
        rows = tuple(Difference(where, _bare(old), _bare(new)) for where, old, new in pairs)
        return "the changed lines kept", rows


KIND = Text()


def _lines(n: int) -> str:
    return "1 line" if n == 1 else f"{n} lines"
