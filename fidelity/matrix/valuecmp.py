"""Value-aware explanations of outputs whose bytes differ: CSV/TSV, JSON and text.

Bytes are compared first (in `compare`); these run only on files that differ, and say
whether the difference is inside the tolerances the harness table declares
(`within_tolerance`) or a move, and where: which columns and row keys, the largest
differences, rows added or dropped. Tolerances follow numpy's `isclose`, relative to the
baseline value: |cand - base| <= atol + rtol * |base|.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fidelity.matrix.diffs import (
    DEFAULT_TOP,
    Difference,
    OutputDiff,
    Tally,
    Tolerance,
    clip_pair,
    tolerance_for,
)
from fidelity.matrix.ignores import Ignores
from fidelity.matrix.sources import NO_PATHS, Neutral, Source, opened, read, size

TEXT_DIFF_LINES = 40
OWN_PATHS = "no value differs outside the side's own paths ({out}, {cache}, {worktree})"
SHOWN_LINE_CHARS = 200
JSON_LIMIT_BYTES = 32 * 2**20  # parsed JSON takes ~10-30x its size in memory
TEXT_DIFF_LIMIT_BYTES = 8 * 2**20  # above this, text is compared line by line in step
_PIECE = 2**20  # a line longer than this is compared piece by piece


Pair = tuple[Any, Any, str]


def _members(b: dict[str, Any], c: dict[str, Any], here: str) -> Iterator[Pair]:
    for k in dict.fromkeys([*b, *c]):
        yield b.get(k, _ABSENT), c.get(k, _ABSENT), f"{here}.{k}"


def _items(b: list[Any], c: list[Any], here: str) -> Iterator[Pair]:
    for i in range(max(len(b), len(c))):
        yield (b[i] if i < len(b) else _ABSENT), (c[i] if i < len(c) else _ABSENT), f"{here}[{i}]"


def _walk(base: Any, cand: Any, where: str, ignore: Ignores) -> Iterator[Pair]:
    """Yield (path, base, cand) for every leaf that differs; absent sides are `_ABSENT`.

    Iterative, with one lazy iterator per open container, so neither a deeply nested nor
    a very long document costs more than the parsed documents themselves.
    """
    stack: list[Iterator[Pair]] = [iter([(base, cand, where)])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        b, c, here = item
        if ignore.ignored(here):
            continue
        if ignore.all_hit() and isinstance(b, dict | list) and _same(b, c):
            continue  # an equal subtree, settled by one `==` instead of leaf by leaf
        if isinstance(b, dict) and isinstance(c, dict):
            stack.append(_members(b, c, here))
        elif isinstance(b, list) and isinstance(c, list):
            stack.append(_items(b, c, here))
        elif b != c or type(b) is not type(c):
            yield here, b, c


def _same(b: Any, c: Any) -> bool:
    """Two containers the walk would find no difference in: `==` in C, confirmed by their
    JSON texts where `==` is looser than the walk (1 == 1.0 == True; NaN, which the walk
    never finds equal, refuses to encode). False only means: walk them."""
    try:
        if b != c:
            return False
        return json.dumps(b, allow_nan=False) == json.dumps(c, allow_nan=False)
    except (ValueError, RecursionError):
        return False


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _text(value: Any) -> str:
    return repr(value) if value is _ABSENT else json.dumps(value)


def _show(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= SHOWN_LINE_CHARS else text[:SHOWN_LINE_CHARS] + "..."


def _changed(where: str, b: Any, c: Any) -> Difference:
    """Two values no tolerance applies to, each cut around where they first differ."""
    return Difference(where, *clip_pair(_text(b), _text(c), SHOWN_LINE_CHARS))


def _numbers(where: str, b: Any, c: Any, tol: Tolerance) -> Difference:
    """Two JSON numbers: judged as floats, or exactly when they are too large for one."""
    try:
        fb, fc = float(b), float(c)
    except OverflowError:
        return Difference(where, _show(b), _show(c))
    return Difference(where, _show(b), _show(c), abs(fc - fb), tol.holds(fb, fc))


def _too_large(path: str, kind: str, base: Source, cand: Source, limit: int) -> OutputDiff | None:
    biggest = max(size(base), size(cand))
    if biggest <= limit:
        return None
    why = f"{biggest / 2**20:.1f} MiB is over the {kind} comparator's {limit / 2**20:.0f} MiB limit"
    return OutputDiff(path, kind, False, f"not compared by value: {why}", limit=why)


def compare_json(
    path: str, base: Source, cand: Source, spec: Mapping[str, Any], neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """Path-wise JSON differences; numbers are judged with the global tolerance."""
    refused = _too_large(path, "json", base, cand, JSON_LIMIT_BYTES)
    if refused is not None:
        return refused
    try:
        b_doc, c_doc = json.loads(read(base)), json.loads(read(cand))
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return OutputDiff(path, "json", False, f"not valid JSON: {why}")
    tol = tolerance_for(spec)
    tally = Tally(top=int(spec.get("top", DEFAULT_TOP)))
    ignore = Ignores(tuple(spec.get("ignore", [])))
    paths_only = False
    for where, b, c in _walk(b_doc, c_doc, "$", ignore):
        if isinstance(b, str) and isinstance(c, str) and neutral.same(b, c):
            paths_only = True
            continue
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (b, c))
        diff = _numbers(where, b, c, tol) if numeric else _changed(where, b, c)
        tally.add(where, None, diff)
    return OutputDiff(
        path,
        "json",
        not tally.out,
        tally.summary([], OWN_PATHS if paths_only else ""),
        keys=tuple(tally.keys),
        keys_total=tally.keys_total,
        largest=tally.largest(),
        unmatched=ignore.unmatched(),
        values_out=tally.out,
        values_changed=tally.changed,
        values_within=tally.within,
    )


def _clip(line: str) -> str:
    return line if len(line) <= SHOWN_LINE_CHARS else line[:SHOWN_LINE_CHARS] + " [...]"


def _shown(lines: list[str], limit: int, total: int) -> tuple[str, ...]:
    more = [f"... {total - limit} more diff lines"] if total > limit else []
    return tuple(_clip(line) for line in lines[:limit]) + tuple(more)


def compare_text(
    path: str, base: Source, cand: Source, spec: Mapping[str, Any], neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """A bounded unified diff; text has no tolerance, so any difference is a move, except
    one made only of the sides' own paths."""
    limit = int(spec.get("top", TEXT_DIFF_LINES))
    if max(size(base), size(cand)) > TEXT_DIFF_LIMIT_BYTES:
        return _text_in_step(path, base, cand, limit)
    # surrogateescape keeps undecodable bytes distinct ("replace" would make \x80 == \x81)
    b_lines = read(base).decode(errors="surrogateescape").splitlines()
    c_lines = read(cand).decode(errors="surrogateescape").splitlines()
    if len(b_lines) == len(c_lines):
        differing = [(b, c) for b, c in zip(b_lines, c_lines, strict=True) if b != c]
        if differing and all(neutral.same(b, c) for b, c in differing):
            return OutputDiff(path, "text", True, OWN_PATHS)
    lines = list(difflib.unified_diff(b_lines, c_lines, "baseline", "candidate", lineterm="", n=1))
    changed = sum(1 for line in lines[2:] if line[:1] in "+-")
    shown = _shown(lines, limit, len(lines))
    pairs = len(text_changes(lines))
    summary = f"{changed} lines changed"
    return OutputDiff(
        path, "text", False, summary, diff=shown, values_out=pairs, values_changed=pairs
    )


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
    shown_lines = _shown(shown, limit, total)
    return OutputDiff(
        path,
        "text",
        False,
        summary,
        diff=shown_lines,
        values_out=differing,
        values_changed=differing,
    )


_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_IN_STEP = re.compile(r"([-+])(\d+): (.*)", re.S)
Change = tuple[str, str | None, str | None]  # where, old line, new line (None: absent)


def _paired(removed: list[tuple[int, str]], added: list[tuple[int, str]]) -> Iterator[Change]:
    for i in range(max(len(removed), len(added))):
        old = removed[i] if i < len(removed) else None
        new = added[i] if i < len(added) else None
        where = f"line {old[0]}" if old else f"candidate line {new[0] if new else 0}"
        yield where, old[1] if old else None, new[1] if new else None


def _unified_changes(lines: Sequence[str]) -> Iterator[Change]:
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


def text_changes(lines: Sequence[str]) -> list[Change]:
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


def explain(
    path: str, base: Source, cand: Source, spec: Mapping[str, Any], neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """Dispatch on the spec's kind; `bytes` (or no spec) only says that the bytes differ.
    Unless the spec says `own_paths = "literal"`, each side's own paths are placeholders."""
    kind = spec.get("kind", "bytes")
    if spec.get("own_paths", "placeholder") == "literal":
        neutral = NO_PATHS
    try:
        if kind in ("csv", "tsv"):
            from fidelity.matrix.csvcmp import compare_csv  # pandas: only when a CSV differs

            return compare_csv(path, base, cand, spec, neutral)
        if kind == "json":
            return compare_json(path, base, cand, spec, neutral)
        if kind == "text":
            return compare_text(path, base, cand, spec, neutral)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return OutputDiff(path, kind, False, f"bytes differ and not parseable as {kind}: {first}")
    sizes = f"{size(base)} -> {size(cand)} bytes"
    return OutputDiff(path, "bytes", False, f"bytes differ ({sizes})")
