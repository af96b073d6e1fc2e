"""Controls that write themselves: `suggest` (run an edit, print what fails as a ready TOML
entry) and `validate` (every anchor and expected id checked without running the suite);
`fromfix` builds on both.

Entries are printed, never written into the table: a person reads them and pastes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.controls import anchors, failkinds, gate, planning, unmodified
from fidelity.controls.lane import Job, Lane, Tree
from fidelity.controls.lanes import Lanes
from fidelity.controls.table import Control, ControlTable, Edit, Match
from fidelity.controls.verdict import RunStatus, TreeRun

NO_TEST = "no test fails for this edit: say why that is acceptable, or write the test"


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
    *,
    residue: str = NO_TEST,
    match: Match = Match.EXACT,
) -> str:
    """A `[[control]]` entry expecting failing (exactly, or as match says), or a residue
    when nothing failed."""
    lines = [f"# {c}" for c in comment]
    lines += ["[[control]]", f"id = {_s(control.id)}", f"why = {_s(control.why)}"]
    edits = ", ".join(_edit(e) for e in control.edits)
    lines.append(f"edit = [{edits}]")
    if control.command != table.command:
        lines.append(f"command = [{', '.join(_s(a) for a in control.command)}]")
    if failing:
        if match is not Match.EXACT:
            lines.append(f"match = {_s(str(match))}")
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
        adhoc = control not in table.controls  # from --file/--find, not the table
        gate.check_edits(repo, sha, table, [probe], rev, given="--file/--find" if adhoc else "")
        tree = gate.tree_names(repo, sha)
        logs = gate.log_dir(repo, sha)
        with Lanes(Tree(repo, sha, table, tree), 1) as lanes:
            runs = unmodified.runs(lanes, table, [probe], logs)
            base = runs[probe.command]
            if base.run.status is not RunStatus.PASSED:
                return Suggestion(control, base.run, None, "", "")
            plan = planning.plans([probe], runs, gate.originals(repo, sha, [probe]), logs, full)[0]
            run = run_once_or_twice(lanes, plan.job)
    how = plan.job.selection.why if plan.job.selection else "all tests"
    if run.status not in (RunStatus.PASSED, RunStatus.FAILED):
        return Suggestion(control, base.run, run, "", how)
    comment = [
        f"observed at {sha[:10]} ({rev}) by `fidelity controls suggest`: {len(run.tests)} of "
        f"{len(base.run.tests)} tests ran ({how})"
    ]
    entry = toml_entry(control, table, sorted(run.failing), comment)
    return Suggestion(control, base.run, run, entry, how)


def run_once_or_twice(lanes: Lanes, job: Job) -> TreeRun:
    """The job's run; a timeout is run once more before it is believed."""

    def run(lane: Lane) -> TreeRun:
        return lane.run(job)

    first = lanes.map([run])[0]
    return lanes.map([run])[0] if first.status is RunStatus.TIMEOUT else first


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
            also = f"; and {self.unchecked}, not checked either" if self.unchecked else ""
            return (
                f"INVALID: {len(self.problems)} problem(s) in {self.table} at {self.rev}{also} "
                "(exit 2)"
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
                raises = logs / f"_collect-{i}-raises.json"
                names = sorted({n for c in mine for n in c.raises})
                raises.write_text(json.dumps({"names": names}), encoding="utf-8")
                found, why = collect(lanes, table, command, logs / f"_collect-{i}.log", raises)
                if found is None:
                    unchecked = unchecked or why
                    continue
                collected_all += found
                problems += anchors.id_problems(table, mine, found)
                problems += anchors.raises_problems(table, mine, _unknown(raises))
    return Validation(
        table.source,
        rev,
        len(table.controls),
        tuple(problems),
        None if unchecked else len(set(collected_all)),
        unchecked,
    )


def _unknown(raises: Path) -> set[str]:
    """The `raises` names collection could not resolve (none when the plugin did not say)."""
    try:
        return {str(n) for n in json.loads(raises.read_text(encoding="utf-8"))["unknown"]}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def collect(
    lanes: Lanes,
    table: ControlTable,
    command: tuple[str, ...],
    log: Path,
    raises: Path | None = None,
) -> tuple[list[str] | None, str]:
    """The node ids `pytest --collect-only` lists in the lanes' tree, or None and why not;
    with `raises`, the plugin also resolves the exception names that file holds."""
    from fidelity.controls.runner import is_pytest

    if not is_pytest(command):
        return None, f"the command {' '.join(command)!r} is not pytest, so its ids cannot be listed"
    out = log.with_suffix(".json")
    probe = replace(table.noop(), command=(*command, "--collect-only", "-q"))
    job = Job(
        probe,
        log,
        table.timeout_s or unmodified.UNMODIFIED_TIMEOUT_S,
        env={"FIDELITY_COLLECTED": str(out)} | ({"FIDELITY_RAISES": str(raises)} if raises else {}),
    )
    run = lanes.map([lambda lane: lane.run(job)])[0]
    try:
        found = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, f"the tests could not be collected ({run.detail})"
    if run.status is RunStatus.UNVIABLE and "collection error" in run.detail:
        return None, f"the tests could not all be collected ({run.detail})"
    return [str(x) for x in found], ""
