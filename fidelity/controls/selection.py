"""Which tests can a control's edit change? The pure core of coverage-selected controls.

The unmodified tree runs once with `fidelity_pytest_controls` tracing, per test, the
functions of the tree it entered, the tree files it opened, and whether it started a
process, and which tree files any process opened while it ran (`fidelity_watch`). An edit
is then placed: the innermost function whose *body* holds every changed line (decorators,
defaults and annotations run where the function is defined, so they count as the enclosing
scope). The tests selected are those that entered that function, opened the edited file
(or some process did while they ran), or started a process whose opens were not all seen,
plus the control's `caught_by`. Everything else runs
the full suite: an edit at module or class level, to a file that is not Python, that adds
or removes a file, that does not parse, or whose function also ran outside any test
(collection, hooks). An edit that moves later lines selects every test that entered any
function of the file (line numbers show in tracebacks and warnings); one that only deletes
lines of Python is placed as `edit` applies it, with blank lines kept (`inplace`).

Not seen, and so not guaranteed: state a test inherits from an earlier test (a cache filled
by another test's call, a global set elsewhere, a process another test started), code run
in a process the tree starts that is not a test's, and a file read by C code outside any
test, or in the test's own process where the kernel's reports are not running (off Linux).
`--full` runs every test.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fidelity.controls import constants
from fidelity.controls.inplace import breaks, in_place, line_of
from fidelity.controls.linediff import changed_statements
from fidelity.controls.table import Control, Edit
from fidelity.plugins import fidelity_testids as testids
from fidelity.plugins.fidelity_probe import first_line


@dataclass(frozen=True, slots=True)
class TestTrace:
    __test__ = False  # not a pytest test class

    code: frozenset[str] = frozenset()
    opened: frozenset[str] = frozenset()
    spawned: bool = False
    duration_s: float = 0.0
    watched: frozenset[str] = frozenset()  # tree files any process opened while it ran
    unseen: bool = True  # it started a process whose opens were not all seen


@dataclass(frozen=True, slots=True)
class Trace:
    """What the unmodified tree's tests ran, by pytest node id."""

    tests: Mapping[str, TestTrace]
    outside: TestTrace = TestTrace()
    modules: tuple[str, ...] = ()
    # made by probes (`fidelity_probe`): the files whose functions it holds (None: all of
    # the tree's), and those whose code also ran where no probe saw it
    probed: frozenset[str] | None = None
    unprobed: frozenset[str] = frozenset()
    # the statements probed in each file (`line:column`): a test that started one has
    # `path@line:column` among its code
    statements: Mapping[str, frozenset[str]] = field(default_factory=dict)


def parse_trace(data: Mapping[str, Any]) -> Trace:
    def one(raw: Mapping[str, Any]) -> TestTrace:
        return TestTrace(
            frozenset(raw.get("code", ())),
            frozenset(raw.get("opened", ())),
            bool(raw.get("spawned", False)),
            float(raw.get("duration_s", 0.0)),
            frozenset(raw.get("watched", ())),
            bool(raw.get("unseen", True)),  # a trace from before the watch saw nothing
        )

    tests = {nodeid: one(raw) for nodeid, raw in data.get("tests", {}).items()}
    probed = data.get("probed")
    return Trace(
        tests,
        one(data.get("outside", {})),
        tuple(data.get("modules", ())),
        frozenset(probed) if probed is not None else None,
        frozenset(data.get("unprobed", ())),
        {f: frozenset(keys) for f, keys in data.get("statements", {}).items()},
    )


@dataclass(frozen=True, slots=True)
class Selection:
    """The tests a control runs (None: all) and why, in words for the report."""

    ids: tuple[str, ...] | None
    why: str
    reasons: Mapping[str, str] = field(default_factory=dict)  # test id -> why it was chosen
    # every edit lands in a function body that ran inside tests alone (or there is no
    # edit): a process that imported the unmodified tree may swap the new code in
    swappable: bool = False


@dataclass(frozen=True, slots=True)
class Place:
    """Where an edit lands in one file: the function key, or why it cannot be narrowed."""

    file: str
    key: str | None  # `path:line` of the function's code object
    name: str = ""
    moves_lines: bool = False
    broad: str = ""  # non-empty: every test must run, and this says why
    constant: str = ""  # a module-level name the edit gives a new value (`constants`)
    readers: frozenset[str] = frozenset()  # the keys of the functions that name it
    # the statements of the function whose instructions the edit changes (`linediff`)
    statements: tuple[str, ...] = ()


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def innermost(source: str, lines: Iterable[int]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose body holds every given line (1-based), or None."""
    wanted = sorted(set(lines))
    if not wanted:
        return None
    best = None
    for node in _functions(ast.parse(source)):
        body_start = node.body[0].lineno
        end = node.end_lineno or node.lineno
        inside = node.lineno < body_start <= wanted[0] and wanted[-1] <= end
        if inside and (best is None or body_start >= best.body[0].lineno):
            best = node
    return best


def find_lines(text: str, find: str, replace: str) -> tuple[list[int], bool]:
    """The original lines a find/replace edit changes, and whether it moves later lines."""
    offset = text.index(find)
    first = line_of(text, offset)
    last = line_of(text, offset + max(len(find) - 1, 0))  # the line of its last char
    return list(range(first, last + 1)), breaks(find) != breaks(replace)


@dataclass(frozen=True, slots=True)
class PatchFile:
    old: str
    new: str
    lines: tuple[int, ...]  # old-side lines changed, and both neighbours of an insertion
    moves_lines: bool


def _hunk_lines(hunk: list[str], start: int) -> tuple[set[int], int]:
    """Old-side lines a hunk changes. Added lines that replace removed ones count as those;
    a pure insertion counts as both of its neighbours, since it may belong to either."""
    touched: set[int] = set()
    line, delta, replacing = start, 0, False
    for text in hunk:
        if text.startswith("-"):
            touched.add(line)
            line += 1
            delta -= 1
            replacing = True
        elif text.startswith("+"):
            if not replacing:
                touched.update({max(line - 1, 1), line})
            delta += 1
        else:
            line += 1
            replacing = False
    return touched, delta


def parse_patch(patch: str) -> list[PatchFile]:
    """Files a unified diff touches, with the old-side lines of each it changes."""
    files: list[PatchFile] = []
    old = new = ""
    hunks: list[tuple[int, list[str]]] = []

    def flush() -> None:
        if old or new:
            touched: set[int] = set()
            delta = 0
            for start, body in hunks:
                lines, moved = _hunk_lines(body, start)
                touched |= lines
                delta += moved
            files.append(PatchFile(old, new, tuple(sorted(touched)), delta != 0))

    for text in patch.splitlines():
        if text.startswith("--- "):
            flush()
            old, new, hunks = _path(text[4:]), "", []
        elif text.startswith("+++ "):
            new = _path(text[4:])
        elif text.startswith("@@"):
            first, _, count = text.split()[1].lstrip("-").partition(",")
            start = int(first or 0)
            hunks.append((start + 1 if count == "0" else start, []))  # -8,0: after line 8
        elif hunks:
            hunks[-1][1].append(text)
    flush()
    return files


def _path(header: str) -> str:
    name = header.split("\t")[0].strip()
    if name == "/dev/null":
        return ""
    return name[2:] if name[:2] in ("a/", "b/") else name


def place(file: str, original: str | None, lines: Sequence[int], moves_lines: bool) -> Place:
    """Where changed lines of one file land."""
    if original is None:
        return Place(file, None, broad=f"the edit adds or removes {file}")
    if not file.endswith(".py"):
        return Place(file, None, moves_lines=moves_lines)
    try:
        node = innermost(original, lines)
    except SyntaxError:
        return Place(file, None, broad=f"{file} does not parse")
    if node is None:
        return Place(file, None, broad=f"the edit to {file} is at module or class level")
    return Place(file, f"{file}:{first_line(node)}", node.name, moves_lines)


NamedElsewhere = Callable[[str, str], bool]  # (file, name): does another file name it?


def _constant(p: Place, old: str, new: str, named_elsewhere: NamedElsewhere | None) -> Place:
    """An edit at module level that only gives a name a new value lands in the functions
    that read it (`constants`), when nothing else can."""
    if named_elsewhere is None:
        return p
    name = constants.changed_constant(old, new)  # None unless module level: nothing parses
    if name is None:
        return p
    keys, why = constants.readers(old, name)
    if not why and named_elsewhere(p.file, name):
        why = f"{name} is named in another file of the tree"
    if why:
        return replace(p, broad=f"{p.broad}: {why}")
    found = frozenset(f"{p.file}:{line}" for line in keys)
    return Place(p.file, None, moves_lines=p.moves_lines, constant=name, readers=found)


def places(
    edits: Sequence[Edit],
    originals: Mapping[str, str | None],
    named_elsewhere: NamedElsewhere | None = None,
) -> list[Place]:
    """Every place a control's edits land (originals: file -> text at the tree, None if
    absent); with named_elsewhere, a new value of a module-level name lands where it is read."""
    found = []
    edited = Counter(edit.file for edit in edits)
    for edit in edits:
        if edit.patch is None:
            text = originals.get(edit.file)
            find, replace = edit.find or "", edit.replace or ""
            if text is None or find not in text:
                found.append(Place(edit.file, None, broad=f"{edit.file}: the edit does not apply"))
                continue
            if edited[edit.file] == 1:  # as `edit` applies it; for several, as written (broader)
                replace = in_place(edit.file, text, find, replace)
            lines, moves = find_lines(text, find, replace)
            landed = place(edit.file, text, lines, moves)
            new = text.replace(find, replace, 1)
            if landed.broad and edited[edit.file] == 1:
                landed = _constant(landed, text, new, named_elsewhere)
            elif landed.key is not None and not moves and edited[edit.file] == 1:
                line = int(landed.key.rsplit(":", 1)[1])
                statements = changed_statements(text, new, edit.file, line)
                landed = dataclasses.replace(landed, statements=statements)
            found.append(landed)
            continue
        for pf in parse_patch(edit.patch):
            if not pf.old or not pf.new or pf.old != pf.new:
                found.append(
                    Place(pf.new or pf.old, None, broad="the patch adds, removes or renames a file")
                )
                continue
            found.append(place(pf.old, originals.get(pf.old), pf.lines, pf.moves_lines))
    return found


def select(
    control: Control,
    trace: Trace | None,
    originals: Mapping[str, str | None],
    named_elsewhere: NamedElsewhere | None = None,
) -> Selection:
    """The tests that can tell this control's tree from the unmodified one."""
    if trace is None or not trace.tests:
        return Selection(None, "all tests: no trace of the unmodified tree")
    found = places(control.edits, originals, named_elsewhere)
    if not found:
        return Selection(None, "all tests: the control edits nothing", swappable=True)
    reasons: dict[str, str] = {}
    found = [_by_statement(p, trace) for p in found]
    for p in found:
        why = _broad(p, trace)
        if why:
            return Selection(None, f"all tests: {why}")
        # once a changed statement has run, what it left (a global, a cache, an attribute)
        # may reach any later call of the function: from then on, every test that called it
        whole, since = dataclasses.replace(p, statements=()), False
        for nodeid, t in trace.tests.items():
            hit = _hit(whole if since else p, t)
            since = since or bool(p.statements and _started(p, t))
            if hit:
                reasons.setdefault(nodeid, hit)
    for expected, hits in testids.expand(control.caught_by, trace.tests).items():
        for nodeid in hits:
            reasons.setdefault(nodeid, f"expected by caught_by ({expected})")
    ids = tuple(n for n in trace.tests if n in reasons)
    swappable = all(p.key is not None for p in found)
    if len(ids) == len(trace.tests):
        return Selection(None, "all tests: every test ran the edited code", reasons, swappable)
    where = ", ".join(sorted({_where(p) for p in found}))
    return Selection(
        ids, f"{len(ids)} of {len(trace.tests)} tests: those that ran {where}", reasons, swappable
    )


def _by_statement(p: Place, trace: Trace) -> Place:
    """The place as selection reads it: by the statements the edit changes where the trace
    probed each of them, else by its function (a kept trace made for other edits)."""
    probed = trace.statements.get(p.file, frozenset())
    return p if set(p.statements) <= probed else dataclasses.replace(p, statements=())


def _lines(p: Place) -> str:
    lines = sorted({int(k.split(":")[0]) for k in p.statements})
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


def _where(p: Place) -> str:
    if p.statements:
        return f"{_lines(p)} of {p.name}() in {p.file}, or called it after a test that did"
    if p.constant:
        return f"a function of {p.file} that reads {p.constant}"
    if p.key is None:
        return f"or opened {p.file}"
    return (
        f"any function of {p.file}"
        if p.moves_lines
        else f"{p.file}:{p.key.split(':')[1]} {p.name}()"
    )


def _broad(p: Place, trace: Trace) -> str:
    if p.broad:
        return p.broad
    if trace.probed is not None and p.file.endswith(".py"):
        if p.file not in trace.probed:
            return f"the trace followed the functions of other files than {p.file}"
        if p.file in trace.unprobed:
            return f"{p.file} was loaded again while tests ran, where no probe saw its code"
    if p.file in trace.outside.opened:
        return f"{p.file} is read outside any test"
    if p.key is not None and p.key in trace.outside.code:
        return f"{p.name}() in {p.file} also runs outside any test (collection or a hook)"
    if _started(p, trace.outside):
        return f"{_lines(p)} of {p.name}() in {p.file} also run outside any test"
    if p.readers & trace.outside.code:
        return f"a function that reads {p.constant} in {p.file} also runs outside any test"
    if p.moves_lines and any(
        k.startswith(p.file + ":") and not k.endswith(":0") for k in trace.outside.code
    ):
        return f"the edit moves lines of {p.file}, whose functions also run outside any test"
    return ""


def _hit(p: Place, t: TestTrace) -> str:
    if t.spawned and t.unseen:
        return "starts a process whose file opens were not seen"
    if p.file in t.opened:
        return f"opened {p.file}"
    if p.file in t.watched:
        return f"{p.file} was opened while it ran (by a process it started, or by its own)"
    if p.readers & t.code:
        return f"ran a function that reads {p.constant} in {p.file}"
    if p.key is None and not p.constant:
        return ""
    if p.moves_lines:
        prefix = p.file + ":"
        return (
            f"ran code of {p.file}"
            if any(k.startswith(prefix) and not k.endswith(":0") for k in t.code)
            else ""
        )
    if p.statements:
        return f"ran {_lines(p)} of {p.name}() in {p.file}" if _started(p, t) else ""
    return f"ran {p.name}() of {p.file}" if p.key in t.code else ""


def _started(p: Place, t: TestTrace) -> bool:
    return any(f"{p.file}@{k}" in t.code for k in p.statements)
