"""`fidelity controls from-fix BASE..FIX`: one control per source hunk of a fix, expecting
the fix's tests that fail without it, each proposal run once before it is printed; a hunk
that cannot be reverted alone is reverted with the hunks it is linked to (`hunkdeps`).

BASE's tests are collected (`pytest --collect-only`) in a worktree of BASE; FIX runs
unmodified in a lane of its own, listing its tests as it goes. Each source hunk is then
reverted in that lane (exactly the proposed control's edit: the pre-fix source with the
post-fix tests) and the tests that can tell it apart run (`selection`); `fixtests` turns
what failed into the expectation. Each proposal then runs once more as the control it is
and is judged, as `controls run` would judge it: the output says whether it held, or what
happened. The checkout is never touched; nothing is written into the table.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.controls import authoring, gate, hunkdeps, planning, unmodified
from fidelity.controls.fixtests import (
    Expectation,
    Hunk,
    expect,
    fix_tests,
    is_test_path,
    split_hunks,
    touched_functions,
)
from fidelity.controls.fixtests import added_lines as added
from fidelity.controls.lane import Tree
from fidelity.controls.lanes import Lanes
from fidelity.controls.table import Control, ControlTable, Edit
from fidelity.controls.verdict import ControlResult, RunStatus, TreeRun, Verdict, judge
from fidelity.errors import UsageError
from fidelity.git import objects, patches

_USABLE = (RunStatus.PASSED, RunStatus.FAILED)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "x"


@dataclass(frozen=True, slots=True)
class Proposed:
    """One hunk's control, the run with the hunk reverted, and the proposal's own run."""

    control: Control  # with the expectation the reverted run supports
    reverted: TreeRun
    said: tuple[str, ...]  # what the reverted run showed, for the entry's comment
    how: str = ""  # which tests ran with the hunk reverted, and why
    check: ControlResult | None = None  # None: the reverted run was unusable, nothing proposed

    @property
    def held(self) -> bool:
        return self.check is not None and self.check.met


@dataclass(frozen=True, slots=True)
class FixProposal:
    base: str
    fix: str
    spec: str
    baseline: TreeRun | None  # FIX as it is; None when nothing ran (no source hunk)
    proposed: tuple[Proposed, ...] = ()
    tests: tuple[str, ...] = ()  # the fix's tests
    notes: tuple[str, ...] = ()
    table: ControlTable | None = None

    def exit_code(self) -> int:
        if not self.proposed and self.baseline is None:
            return 1
        if self.baseline is not None and self.baseline.status is not RunStatus.PASSED:
            return 3
        return 0 if self.proposed and all(p.held for p in self.proposed) else 1

    def summary(self) -> str:
        code, fix = self.exit_code(), self.fix[:10]
        if self.baseline is None:
            return (
                f"NOTHING TO PROPOSE: {self.base[:10]}..{fix} changes no source outside test "
                "files (exit 1)"
            )
        if code == 3:
            return (
                f"UNTRUSTED: {fix} itself does not pass ({self.baseline.status}: "
                f"{self.baseline.detail or ', '.join(sorted(self.baseline.failing))}), so no "
                "hunk can be judged there (exit 3)"
            )
        missed = [p for p in self.proposed if not p.held]
        if missed:
            what = "; ".join(f"{p.control.id}: {_outcome(p)}" for p in missed)
            return (
                f"NOT HELD: {len(missed)} of {len(self.proposed)} hunk(s) gave no entry that "
                f"held when run once at {fix} ({what}); the comment above each entry says what "
                "happened (exit 1)"
            )
        counts: dict[str, int] = {}
        for p in self.proposed:
            verdict = str(p.check.verdict) if p.check else ""
            counts[verdict] = counts.get(verdict, 0) + 1
        said = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        return (
            f"PROPOSED: {len(self.proposed)} control(s), one per source hunk of the fix or group "
            "of hunks reverted together, each "
            f"run once at {fix} as written and held ({said}); paste the entries above "
            "(exit 0)"
        )

    def text(self) -> str:
        """The header and every entry, ready to paste ('' when nothing ran)."""
        if self.baseline is None or self.table is None or self.exit_code() == 3:
            return ""
        table = self.table
        parts = [_entry(p, table, self.fix, len(self.baseline.tests)) for p in self.proposed]
        return "\n".join(self._header()) + "\n\n" + "\n".join(parts)

    def _header(self) -> list[str]:
        said = (
            f"proposed by `fidelity controls from-fix {self.spec}` ({self.base[:10]}.."
            f"{self.fix[:10]}): one control per source hunk, the hunk reverted at FIX (a hunk that "
            "cannot be reverted alone, with the hunks it is linked to). The "
            f"fix's tests ({len(self.tests)}): the ids collected at FIX that BASE lacks, and "
            "the cases of test functions whose lines the fix changed. Each entry expects what "
            "failed with its hunk reverted, and was run once as written before it was printed."
        )
        return [f"# {line}" for line in textwrap.wrap(said, 88)] + [
            f"# note: {n}" for n in self.notes
        ]


def _outcome(p: Proposed) -> str:
    if p.check is None:
        return f"not proposed, the reverted run was {p.reverted.status}"
    if p.check.met:
        return f"{p.check.verdict}, held"
    return f"{p.check.verdict}, did not hold" + (f": {p.check.detail}" if p.check.detail else "")


def _entry(p: Proposed, table: ControlTable, fix: str, total: int) -> str:
    c = p.control
    ran = f"reverted at {fix[:10]}: {len(p.reverted.tests)} of {total} tests ran ({p.how})"
    if p.check is not None and p.reverted.detail:
        ran += f"; {p.reverted.detail}"
    lines = [ran, *p.said]
    if p.check is None:
        text = authoring.toml_entry(c, table, (), residue="(not proposed)")
        cut = "\n".join(f"# {line}" for line in text.splitlines())
        lines.append(
            "NOT PROPOSED: with this hunk reverted the tests gave no verdict; write the "
            "control by hand with a smaller edit, and check it with `fidelity controls "
            "suggest --file F --find X --replace Y`"
        )
        return "\n".join(f"# {x}" for x in lines) + "\n" + cut + "\n"
    lines.append(f"run once as written at {fix[:10]}: {_outcome(p)}")
    return authoring.toml_entry(c, table, c.caught_by, lines, residue=c.residue, match=c.match)


def touched_tests(repo: Path, base: str, fix: str, changed: Sequence[str]) -> list[str]:
    """Node ids of the test functions whose lines BASE..FIX added or changed."""
    files = [f for f in changed if is_test_path(f) and f.endswith(".py")]
    if not files:
        return []
    found: list[str] = []
    for path, lines in sorted(added(patches.diff_text(repo, base, fix, files)).items()):
        data = objects.show_file(repo, fix, path)
        if data is not None:
            found += touched_functions(path, data.decode("utf-8", errors="replace"), lines)
    return found


def _range(repo: Path, spec: str) -> tuple[str, str, str]:
    base_rev, sep, fix_rev = spec.partition("..")
    if not sep or not base_rev or not fix_rev or fix_rev.startswith("."):
        raise UsageError(f"from-fix takes a range BASE..FIX (two dots), not {spec!r}")
    return objects.rev_parse(repo, base_rev), objects.rev_parse(repo, fix_rev), fix_rev


def from_fix(repo: Path, table: ControlTable, spec: str) -> FixProposal:
    """One control per source hunk of BASE..FIX, the hunk reverted, expecting the fix's tests
    that fail there; each proposal run once as written."""
    base, fix, fix_rev = _range(repo, spec)
    changed = patches.changed_files(repo, base, fix)
    sources = [f for f in changed if not is_test_path(f)]
    hunks = split_hunks(patches.diff_text(repo, fix, base, sources)) if sources else []
    if not hunks:
        return FixProposal(base, fix, spec, None)
    controls = [_control(fix, fix_rev, i, h, table) for i, h in enumerate(hunks, 1)]
    logs = gate.log_dir(repo, fix)
    with Lanes(Tree(repo, base, table, gate.tree_names(repo, base)), 1) as lanes:
        base_ids, why = authoring.collect(lanes, table, table.command, logs / "_base.log")
    notes: tuple[str, ...] = ()
    if base_ids is None:
        notes = (
            f"BASE's tests were not listed ({why}): only tests whose lines the fix changed "
            "count as the fix's",
        )
    found = FixProposal(base, fix, spec, None, notes=notes, table=table)
    touched = touched_tests(repo, base, fix, changed)
    with Lanes(Tree(repo, fix, table, gate.tree_names(repo, fix)), 1) as lanes:
        return _propose(
            lanes, found, controls, base_ids=base_ids, touched=touched, logs=logs, hunks=hunks
        )


def _control(fix: str, fix_rev: str, i: int, hunk: Hunk, table: ControlTable) -> Control:
    return Control(
        id=f"{fix[:7]}-{_slug(Path(hunk.file).stem)}-{i}",
        why=f"reverts hunk {i} of {fix_rev} ({hunk.file}, line {hunk.first_line}): "
        "the fix's tests must catch it",
        edits=(Edit(hunk.file, patch=hunk.patch),),
        command=table.command,
    )


def _propose(
    lanes: Lanes,
    found: FixProposal,
    controls: Sequence[Control],
    *,
    base_ids: Sequence[str] | None,
    touched: Sequence[str],
    logs: Path,
    hunks: Sequence[Hunk],
) -> FixProposal:
    """FIX unmodified, each hunk reverted, then each proposal run once as written; hunks that
    cannot be reverted alone, then, with the hunks they are linked to."""
    table = lanes.tree.table
    runs = unmodified.runs(lanes, table, controls, logs)  # no control expects a test yet
    fixed = runs[table.command]
    found = replace(found, baseline=fixed.run)
    if fixed.run.status is not RunStatus.PASSED:
        return found
    fix_ids = fixed.collected or tuple(sorted(fixed.run.tests))
    trial = _Trial(lanes, runs, logs, fix_tests(fix_ids, base_ids, touched))
    alone = trial.tried(controls)
    done, notes = _regrouped(trial, alone, hunks, found.fix)
    return replace(found, proposed=tuple(done), tests=trial.mine, notes=(*found.notes, *notes))


@dataclass(frozen=True, slots=True)
class _Trial:
    """What every proposal of one fix is tried against: FIX's lanes and unmodified runs."""

    lanes: Lanes
    runs: Mapping[tuple[str, ...], unmodified.Unmodified]
    logs: Path
    mine: tuple[str, ...]  # the fix's tests

    def tried(self, controls: Sequence[Control]) -> list[Proposed]:
        """Each control's edit reverted and run for its expectation, then run as written."""
        probes = [
            replace(c, id=f"{c.id}-reverted", survives=True, residue="(probe)") for c in controls
        ]
        originals = gate.originals(self.lanes.tree.repo, self.lanes.tree.sha, controls)
        proposed = []
        plans = planning.plans(probes, self.runs, originals, self.logs, False)
        for c, plan in zip(controls, plans, strict=True):
            how = plan.job.selection.why if plan.job.selection else "all tests"
            reverted = authoring.run_once_or_twice(self.lanes, plan.job)
            proposed.append(replace(_expecting(c, reverted, self.mine), how=how))
        usable = [p.control for p in proposed if p.reverted.status in _USABLE]
        known = tuple(self.runs[self.lanes.tree.table.command].run.tests)
        checks = {
            plan.control.id: judge(
                plan.control, authoring.run_once_or_twice(self.lanes, plan.job), known
            )
            for plan in planning.plans(usable, self.runs, originals, self.logs, False)
        }
        return [replace(p, check=checks.get(p.control.id)) for p in proposed]


def _cannot_stand_alone(p: Proposed) -> bool:
    """Reverted alone, the hunk gave no verdict, or the tests could only crash on it."""
    return p.check is None or p.check.verdict is Verdict.CAUGHT_BY_ERROR


def _regrouped(
    trial: _Trial, alone: Sequence[Proposed], hunks: Sequence[Hunk], fix: str
) -> tuple[list[Proposed], list[str]]:
    """Each hunk that cannot be reverted alone, tried with the hunks it is linked to by name
    (`hunkdeps`); a group that holds replaces its members' single entries."""
    failing = [i for i, p in enumerate(alone) if _cannot_stand_alone(p)]
    groups = hunkdeps.groups(hunks, failing) if failing else []
    if not groups:
        return list(alone), []
    tried = trial.tried([_group_control(alone, hunks, g, fix) for g in groups])
    replaced: set[int] = set()
    kept, notes = [], []
    for group, p in zip(groups, tried, strict=True):
        members = [i for i in group if i in failing]  # groups are disjoint components
        listed = ", ".join(str(i + 1) for i in group)
        if not p.held:
            notes.append(f"hunks {listed} reverted together did not hold either: {_outcome(p)}")
            continue
        replaced |= set(members)
        why = "; ".join(f"hunk {i + 1} alone was {_outcome(alone[i])}" for i in members)
        kept.append(replace(p, said=(f"hunks {listed} reverted together: {why}", *p.said)))
    return [p for i, p in enumerate(alone) if i not in replaced] + kept, notes


def _group_control(
    alone: Sequence[Proposed], hunks: Sequence[Hunk], group: Sequence[int], fix: str
) -> Control:
    first = alone[group[0]].control
    numbers = [str(i + 1) for i in group]
    files = sorted({hunks[i].file for i in group})
    patched = hunkdeps.together([hunks[i] for i in group])
    return replace(
        first,
        id=f"{fix[:7]}-{_slug(Path(hunks[group[0]].file).stem)}-{'-'.join(numbers)}",
        why=f"reverts hunks {', '.join(numbers)} of {fix[:10]} together ({', '.join(files)}): "
        "reverted alone, one of them leaves code that can only crash",
        edits=tuple(Edit(f, patch=text) for f, text in patched.items()),
    )


def _expecting(control: Control, reverted: TreeRun, mine: Sequence[str]) -> Proposed:
    if reverted.status not in _USABLE:
        said = f"the reverted run was {reverted.status}: {reverted.detail}"
        return Proposed(control, reverted, (said,))
    e: Expectation = expect(mine, reverted)
    expecting = replace(
        control,
        caught_by=e.caught_by,
        match=e.match,
        survives=bool(e.residue),
        residue=e.residue,
    )
    return Proposed(expecting, reverted, e.said)
