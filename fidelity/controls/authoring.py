"""Controls that write themselves: `suggest` (run an edit, print what fails as a ready TOML
entry), `from-fix` (one proposed control per hunk of a fix, the hunk reverted) and
`validate` (every anchor and expected id checked without running the suite).

Entries are printed, never written into the table: a person reads them and pastes them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.controls import anchors, failkinds, gate
from fidelity.controls.lane import Job, Lanes, Tree
from fidelity.controls.table import Control, ControlTable, Edit
from fidelity.controls.verdict import RunStatus, TreeRun
from fidelity.errors import UsageError
from fidelity.git import objects, patches

NO_TEST = "no test fails for this edit: say why that is acceptable, or write the test"
NO_FIX_TEST = "the fix added or changed no test: write one that fails without this hunk"


def _s(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def _edit(e: Edit) -> str:
    if e.patch is not None:
        return f"{{ file = {_s(e.file)}, patch = {_s(e.patch)} }}"
    return f"{{ file = {_s(e.file)}, find = {_s(e.find or '')}, replace = {_s(e.replace or '')} }}"


def toml_entry(
    control: Control,
    table: ControlTable,
    failing: Sequence[str],
    comment: Sequence[str] = (),
    residue: str = NO_TEST,
) -> str:
    """A `[[control]]` entry expecting exactly failing (or a residue when nothing failed)."""
    lines = [f"# {c}" for c in comment]
    lines += ["[[control]]", f"id = {_s(control.id)}", f"why = {_s(control.why)}"]
    edits = ", ".join(_edit(e) for e in control.edits)
    lines.append(f"edit = [{edits}]")
    if control.command != table.command:
        lines.append(f"command = [{', '.join(_s(a) for a in control.command)}]")
    if failing:
        lines.append("caught_by = [")
        lines += [f"  {_s(t)}," for t in failing]
        lines.append("]")
    else:
        lines += ["survives = true", f"residue = {_s(residue)}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Suggestion:
    control: Control
    baseline: TreeRun
    run: TreeRun | None
    entry: str
    how: str  # which tests ran, and why

    def exit_code(self) -> int:
        if self.baseline.status is not RunStatus.PASSED:
            return 3
        if self.run is None or self.run.status not in (RunStatus.PASSED, RunStatus.FAILED):
            return 1
        return 0

    def summary(self) -> str:
        code = self.exit_code()
        if code == 3:
            return f"UNTRUSTED: the unmodified tree does not pass ({self.baseline.detail}) (exit 3)"
        if code == 1:
            run = self.run
            why = f"{run.status}: {run.detail}" if run else "it did not run"
            return f"NO ENTRY: the edit gave no usable failing set ({why}) (exit 1)"
        n = len(self.run.failing) if self.run else 0
        said = f"{n} test(s) fail" if n else "no test fails (a residue entry)"
        crash = ""
        kinds = self.run.kinds if self.run else {}
        found = {t: failkinds.declared(f, self.control.raises) for t, f in kinds.items()}
        if failkinds.only_errors(found.values()):
            crash = (
                f"; but every one fails by crashing ({failkinds.summary(found)}), so `controls "
                "run` will judge it caught-by-error: make the edit a change of behaviour, or "
                "name the exception in `raises` if raising it is the behaviour under test"
            )
        return f"SUGGESTED: {said} for {self.control.id!r}{crash}; paste the entry above (exit 0)"


def suggest(
    repo: Path,
    table: ControlTable,
    control: Control,
    rev: str = "HEAD",
    *,
    with_uncommitted: bool = False,
    full: bool = False,
) -> Suggestion:
    """Run one control's edit (its expectation ignored) and write the entry it deserves."""
    probe = replace(control, caught_by=(), survives=True, residue="(probe)")
    with gate.tree_under_test(repo, rev, with_uncommitted) as sha:
        gate.check_edits(repo, sha, table, [probe], rev)
        tree = gate.tree_names(repo, sha)
        logs = gate.log_dir(repo, sha)
        with Lanes(Tree(repo, sha, table, tree), 1) as lanes:
            runs = gate.unmodified(lanes, table, [probe], logs)
            base = runs[probe.command]
            if base.run.status is not RunStatus.PASSED:
                return Suggestion(control, base.run, None, "", "")
            plan = gate.plans([probe], runs, gate.originals(repo, sha, [probe]), logs, full)[0]
            run = _run_once_or_twice(lanes, plan.job)
    how = plan.job.selection.why if plan.job.selection else "all tests"
    if run.status not in (RunStatus.PASSED, RunStatus.FAILED):
        return Suggestion(control, base.run, run, "", how)
    comment = [
        f"observed at {sha[:10]} ({rev}) by `fidelity controls suggest`: {len(run.tests)} of "
        f"{len(base.run.tests)} tests ran ({how})"
    ]
    entry = toml_entry(control, table, sorted(run.failing), comment)
    return Suggestion(control, base.run, run, entry, how)


def _run_once_or_twice(lanes: Lanes, job: Job) -> TreeRun:
    first = lanes.map([lambda lane: lane.run(job)])[0]
    if first.status is RunStatus.TIMEOUT:
        return lanes.map([lambda lane: lane.run(job)])[0]
    return first


# --- from-fix ---

_TEST_FILE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")


def is_test_path(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


@dataclass(frozen=True, slots=True)
class Hunk:
    file: str
    patch: str  # a one-hunk patch that applies to FIX
    first_line: int


def split_hunks(diff: str) -> list[Hunk]:
    """One patch per hunk of a `git diff` (binary files and mode-only changes skipped)."""
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


def _added_lines(diff: str) -> dict[str, set[int]]:
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


def _tests_touching(path: str, source: str, lines: set[int]) -> list[str]:
    """Node ids of the test functions (and Test* class methods) whose lines were added."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []

    def touched(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        end = node.end_lineno or node.lineno
        return any(node.lineno <= n <= end for n in lines)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test") and touched(node):
                found.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if (
                    isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and item.name.startswith("test")
                    and touched(item)
                ):
                    found.append(f"{path}::{node.name}::{item.name}")
    return found


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "x"


@dataclass(frozen=True, slots=True)
class FixProposal:
    base: str
    fix: str
    controls: tuple[Control, ...]
    tests: tuple[str, ...]
    text: str

    def exit_code(self) -> int:
        return 0 if self.controls else 1

    def summary(self) -> str:
        if not self.controls:
            return (
                f"NOTHING TO PROPOSE: {self.base[:10]}..{self.fix[:10]} changes no source "
                "outside test files (exit 1)"
            )
        return (
            f"PROPOSED: {len(self.controls)} control(s), one per source hunk of the fix, each "
            f"expecting the {len(self.tests)} test(s) the fix added or changed; run them with "
            "`fidelity controls run --only ID` (exit 0)"
        )


def from_fix(repo: Path, table: ControlTable, spec: str) -> FixProposal:
    """One control per source hunk of BASE..FIX: the hunk reverted, the fix's tests expected."""
    base_rev, sep, fix_rev = spec.partition("..")
    if not sep or not base_rev or not fix_rev or fix_rev.startswith("."):
        raise UsageError(f"from-fix takes a range BASE..FIX (two dots), not {spec!r}")
    base, fix = objects.rev_parse(repo, base_rev), objects.rev_parse(repo, fix_rev)
    changed = patches.changed_files(repo, base, fix)
    sources = [f for f in changed if not is_test_path(f)]
    test_files = [f for f in changed if is_test_path(f) and f.endswith(".py")]
    tests: list[str] = []
    added = _added_lines(patches.diff_text(repo, base, fix, test_files)) if test_files else {}
    for path, lines in sorted(added.items()):
        data = objects.show_file(repo, fix, path)
        if data is not None:
            tests += _tests_touching(path, data.decode("utf-8", errors="replace"), lines)
    hunks = split_hunks(patches.diff_text(repo, fix, base, sources)) if sources else []
    controls = []
    for i, hunk in enumerate(hunks, 1):
        controls.append(
            Control(
                id=f"{fix[:7]}-{_slug(Path(hunk.file).stem)}-{i}",
                why=f"reverts hunk {i} of {fix_rev} ({hunk.file}, line {hunk.first_line}): "
                "the fix's tests must catch it",
                edits=(Edit(hunk.file, patch=hunk.patch),),
                command=table.command,
                caught_by=tuple(tests),
            )
        )
    header = [
        f"# proposed by `fidelity controls from-fix {spec}` ({base[:10]}..{fix[:10]}): one",
        "# control per source hunk, the hunk reverted; expected: the tests the fix added or",
        "# changed, all of which must fail (match = includes). Unverified until run: check each",
        "# with `fidelity controls run --only ID`, or record what fails with `controls suggest`.",
    ]
    parts = []
    for c in controls:
        entry = toml_entry(c, table, c.caught_by, residue=NO_FIX_TEST)
        if c.caught_by:
            entry = entry.replace("caught_by = [", 'match = "includes"\ncaught_by = [', 1)
        parts.append(entry)
    text = "\n".join(header) + "\n\n" + "\n".join(parts) if controls else ""
    return FixProposal(base, fix, tuple(controls), tuple(tests), text)


# --- validate ---


@dataclass(frozen=True, slots=True)
class Validation:
    table: str
    rev: str
    controls: int
    problems: tuple[str, ...]
    collected: int | None  # None: not collected (not pytest, or collection failed)
    unchecked: str = ""  # why expected ids could not be checked

    def exit_code(self) -> int:
        if self.problems:
            return 2
        return 3 if self.unchecked else 0

    def summary(self) -> str:
        if self.problems:
            return (
                f"INVALID: {len(self.problems)} problem(s) in {self.table} at {self.rev} (exit 2)"
            )
        if self.unchecked:
            return f"UNCHECKED: anchors match {self.rev}, but {self.unchecked} (exit 3)"
        return (
            f"VALID: {self.controls} controls; every edit applies at {self.rev} and every "
            f"caught_by names one of the {self.collected} collected tests (exit 0)"
        )


def validate(
    repo: Path, table: ControlTable, rev: str = "HEAD", *, with_uncommitted: bool = False
) -> Validation:
    """Anchors against the tree, expected ids against `pytest --collect-only`: no test runs."""
    import shutil
    import tempfile

    with gate.tree_under_test(repo, rev, with_uncommitted) as sha:
        scratch = Path(tempfile.mkdtemp(prefix="fidelity-anchors-"))
        try:
            problems = anchors.edit_problems(repo, sha, table, table.controls, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        tree = gate.tree_names(repo, sha)
        logs = gate.log_dir(repo, sha)
        commands = list(dict.fromkeys([table.command, *(c.command for c in table.controls)]))
        collected_all: list[str] = []
        unchecked = ""
        with Lanes(Tree(repo, sha, table, tree), 1) as lanes:
            for i, command in enumerate(commands, 1):
                mine = [c for c in table.controls if c.command == command]
                found, why = _collect(lanes, table, command, logs / f"_collect-{i}.log")
                if found is None:
                    unchecked = unchecked or why
                    continue
                collected_all += found
                problems += anchors.id_problems(table, mine, found)
    return Validation(
        table.source,
        rev,
        len(table.controls),
        tuple(problems),
        None if unchecked else len(set(collected_all)),
        unchecked,
    )


def _collect(
    lanes: Lanes, table: ControlTable, command: tuple[str, ...], log: Path
) -> tuple[list[str] | None, str]:
    from fidelity.controls.runner import is_pytest

    if not is_pytest(command):
        return None, f"the command {' '.join(command)!r} is not pytest, so its ids cannot be listed"
    out = log.with_suffix(".json")
    probe = replace(table.noop(), command=(*command, "--collect-only", "-q"))
    job = Job(
        probe,
        log,
        table.timeout_s or gate.UNMODIFIED_TIMEOUT_S,
        env={"FIDELITY_COLLECTED": str(out)},
    )
    run = lanes.map([lambda lane: lane.run(job)])[0]
    try:
        found = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, f"the tests could not be collected ({run.detail})"
    if run.status is RunStatus.UNVIABLE and "collection error" in run.detail:
        return None, f"the tests could not all be collected ({run.detail})"
    return [str(x) for x in found], ""
