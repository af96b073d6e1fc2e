"""Which hunks of a fix stand or fall together, by the names they define and use.

A fix often adds a helper in one hunk and calls it in another, or renames a function and
its callers. Reverted alone, the helper's hunk leaves a call to a name that no longer
exists: the tests can only crash, and the control can never be `caught`. `from-fix` reverts
such a hunk together with the hunks that use what it defines (or define what it uses), found
here from the patch text alone: `def`/`class` names at any depth, module-level assignments
and imported names, linked to every word of another hunk. Not guaranteed: a name reached
only through `getattr` or a string, or one shadowed by an unrelated local, links nothing or
too much; the group is run once like any entry, so a wrong link shows as a miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fidelity.controls.fixtests import Hunk

_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")
_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s+\(?([^)#]+)")
_WORD = re.compile(r"[A-Za-z_]\w*")


def sides(hunk: Hunk) -> tuple[list[str], list[str]]:
    """The hunk's lines as FIX has them and as BASE has them (its patch reverts FIX)."""
    fix: list[str] = []
    base: list[str] = []
    for line in hunk.patch.splitlines():
        if line.startswith(("--- ", "+++ ", "@@")):
            continue
        if line.startswith("-"):
            fix.append(line[1:])
        elif line.startswith("+"):
            base.append(line[1:])
    return fix, base


def defined(lines: Iterable[str]) -> set[str]:
    """Names the lines bind: functions and classes, module-level assignments, imports."""
    found: set[str] = set()
    for line in lines:
        for pattern in (_DEF, _ASSIGN):
            if m := pattern.match(line):
                found.add(m.group(1))
        if m := _IMPORT.match(line):
            for part in m.group(1).split(","):
                words = part.split()
                if words:
                    found.add(words[-1] if "as" in words else words[0].partition(".")[0])
    return found


def used(lines: Iterable[str]) -> set[str]:
    return {w for line in lines for w in _WORD.findall(line)}


@dataclass(frozen=True, slots=True)
class _Names:
    """What one hunk binds and mentions, on FIX's side and on BASE's, read once."""

    bound: tuple[set[str], set[str]]
    mentioned: tuple[set[str], set[str]]

    @classmethod
    def of(cls, hunk: Hunk) -> _Names:
        fix, base = sides(hunk)
        return cls((defined(fix), defined(base)), (used(fix), used(base)))

    def linked(self, other: _Names) -> bool:
        return any(
            self.bound[side] & other.mentioned[side] or other.bound[side] & self.mentioned[side]
            for side in (0, 1)
        )


def linked(a: Hunk, b: Hunk) -> bool:
    """Whether one hunk binds a name the other mentions, on FIX's side or on BASE's."""
    return _Names.of(a).linked(_Names.of(b))


def groups(hunks: Sequence[Hunk], alone: Iterable[int]) -> list[tuple[int, ...]]:
    """For each hunk (by index) that cannot be reverted alone, the hunks linked to it,
    directly or through others, itself included; groups of one left out, each group once."""
    names = [_Names.of(h) for h in hunks]
    found: list[tuple[int, ...]] = []
    for start in alone:
        seen, todo = {start}, [start]
        while todo:
            i = todo.pop()
            for j, other in enumerate(names):
                if j not in seen and names[i].linked(other):
                    seen.add(j)
                    todo.append(j)
        group = tuple(sorted(seen))
        if len(group) > 1 and group not in found:
            found.append(group)
    return found


def together(hunks: Sequence[Hunk]) -> dict[str, str]:
    """One patch per file holding all of the hunks' bodies for it, in file order."""
    by_file: dict[str, list[Hunk]] = {}
    for h in hunks:
        by_file.setdefault(h.file, []).append(h)
    patches = {}
    for file, mine in by_file.items():
        mine.sort(key=lambda h: h.first_line)
        head, _, _ = mine[0].patch.partition("\n@@")
        bodies = ["@@" + h.patch.partition("\n@@")[2] for h in mine]
        patches[file] = head + "\n" + "".join(bodies)
    return patches
