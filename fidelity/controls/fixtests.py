"""The pure half of `controls from-fix`: a fix's hunks, the fix's tests, and what a hunk's
run supports as an expectation.

The fix's tests are the ids collected at FIX that BASE did not collect (new functions, new
parametrize cases, renamed ids) and the cases of the test functions whose lines, decorators
included, the fix changed (a changed expected value keeps its id). Not guaranteed: a test
whose id and lines the fix left alone (cases built from a changed constant behind `ids=`)
is not counted as the fix's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fidelity.controls.table import Match
from fidelity.controls.verdict import TreeRun
from fidelity.plugins.fidelity_testids import canonical, function

NO_FIX_TEST = (
    "the fix added or changed no test, and no test fails without this hunk: write one that does"
)
NOT_CAUGHT = (
    "no test fails without this hunk, not even the {n} test(s) the fix added or changed: "
    "write one that does, or say why this hunk needs none"
)
SHOWN = 5  # ids a comment names before "and N more"

_TEST_FILE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")


def is_test_path(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


@dataclass(frozen=True, slots=True)
class Hunk:
    file: str
    patch: str  # a one-hunk patch that applies to FIX
    first_line: int


def split_hunks(diff: str) -> list[Hunk]:
    """One patch per hunk of a `git diff` (binary files, mode-only changes and files the
    diff deletes skipped)."""
    hunks: list[Hunk] = []
    head: list[str] = []
    body: list[str] = []
    file = ""

    def flush() -> None:
        if body and file:
            start = int(body[0].split()[1].lstrip("-").split(",")[0] or 0)
            hunks.append(Hunk(file, "\n".join([*head, *body]) + "\n", start))

    for line in diff.splitlines():
        if line.startswith("diff --git "):
            flush()
            head, body, file = [], [], ""
        elif line.startswith("--- "):
            head = [line]
        elif line.startswith("+++ "):
            head.append(line)
            name = line[4:].split("\t")[0]
            file = name[2:] if name.startswith("b/") else ""
        elif line.startswith("@@"):
            flush()
            body = [line]
        elif body:
            body.append(line)
    flush()
    return hunks


def added_lines(diff: str) -> dict[str, set[int]]:
    """New-side line numbers each file's added lines have."""
    found: dict[str, set[int]] = {}
    file, line = "", 0
    for text in diff.splitlines():
        if text.startswith("+++ "):
            name = text[4:].split("\t")[0]
            file = name[2:] if name.startswith("b/") else ""
        elif text.startswith("@@"):
            line = int(text.split()[2].lstrip("+").split(",")[0] or 0)
        elif file and text.startswith("+"):
            found.setdefault(file, set()).add(line)
            line += 1
        elif file and not text.startswith("-"):
            line += 1
    return found


def touched_functions(path: str, source: str, lines: set[int]) -> list[str]:
    """Node ids of the test functions (and Test* class methods) with an added line, their
    decorators (a new parametrize case) included."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []

    def touched(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        return any(start <= n <= end for n in lines)

    def test(node: ast.stmt) -> bool:
        return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.name.startswith("test") and touched(node)
        )

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and test(node):
            found.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += [
                f"{path}::{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and test(item)
            ]
    return found


def fix_tests(
    fix_ids: Iterable[str], base_ids: Iterable[str] | None, touched: Iterable[str]
) -> tuple[str, ...]:
    """The fix's tests among FIX's ids, in FIX's order: new since BASE (when BASE's ids are
    known), or a case of a test function whose lines the fix changed."""
    old = None if base_ids is None else {canonical(i) for i in base_ids}
    changed = {function(t) for t in touched}
    return tuple(
        i
        for i in dict.fromkeys(fix_ids)
        if (old is not None and canonical(i) not in old) or function(i) in changed
    )


def names(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:SHOWN])
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


@dataclass(frozen=True, slots=True)
class Expectation:
    """What one reverted hunk's run supports as its control's expectation, and why."""

    caught_by: tuple[str, ...]
    match: Match
    said: tuple[str, ...]  # comment lines above the entry
    residue: str = ""  # non-empty: nothing failed, the control survives


def expect(mine: Sequence[str], run: TreeRun) -> Expectation:
    """The expectation a completed run with the hunk reverted supports: the fix's tests that
    failed (`exact` when nothing else did, else `includes`), or the older tests that failed
    when none of the fix's did, or a residue when nothing failed."""
    keys = {canonical(t) for t in mine}
    failing = sorted(run.failing)
    own = tuple(t for t in failing if canonical(t) in keys)
    other = tuple(t for t in failing if canonical(t) not in keys)
    n = len(mine)
    if not failing:
        residue = NOT_CAUGHT.format(n=n) if n else NO_FIX_TEST
        return Expectation((), Match.EXACT, ("no test fails without this hunk",), residue)
    if not own:
        none = f"none of the {n} test(s) the fix added or changed fails" if n else "the fix "
        none += "" if n else "added or changed no test"
        said = f"{none} without this hunk; {len(other)} older test(s) do: expected exactly"
        return Expectation(other, Match.EXACT, (said,))
    first = f"{len(own)} of the {n} test(s) the fix added or changed fail without this hunk"
    if len(own) < n:
        passed = [t for t in mine if canonical(t) not in {canonical(o) for o in own}]
        first += f"; {len(passed)} pass: {names(passed)}"
    if other:
        also = f"{len(other)} other test(s) fail too, so match = includes: {names(other)}"
        return Expectation(own, Match.INCLUDES, (first, also))
    return Expectation(own, Match.EXACT, (first, "no other test fails: expected exactly"))
