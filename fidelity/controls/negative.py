"""`fidelity controls negative`: a fix's tests must fail on the code they fix.

The tree under test is NEW with the source paths taken from OLD. NEW itself must pass first
(else exit 3). The tests that fail there are reported, split by whether the change from OLD
to NEW touched their file (the fix's own tests) or not. When the fix's own tests fail there
only by crashing (a name the old source lacks, a new argument it does not take), that shows
the API changed, not that the tests check the fix: `caught-by-error`.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity import proc
from fidelity.controls import failkinds, treenames
from fidelity.controls.gate import log_dir
from fidelity.controls.lane import Tree
from fidelity.controls.lanes import parallel, run_tree
from fidelity.controls.table import ControlTable
from fidelity.controls.verdict import RunStatus, TreeRun, Verdict
from fidelity.git import objects, patches, stage


@dataclass(frozen=True, slots=True)
class NegativeReport:
    new: TreeRun  # NEW as it is: must pass
    mixed: TreeRun  # NEW's tests on OLD's source
    touched: frozenset[str]  # test files the change touched outside the source paths

    def _split(self) -> tuple[list[str], list[str]]:
        own = sorted(t for t in self.mixed.failing if t.split("::")[0] in self.touched)
        other = sorted(t for t in self.mixed.failing if t.split("::")[0] not in self.touched)
        return own, other

    def verdict(self) -> Verdict:
        if self.mixed.status in (RunStatus.TIMEOUT, RunStatus.CRASHED, RunStatus.UNVIABLE):
            return Verdict(str(self.mixed.status))
        own, other = self._split()
        if own:
            kinds = (self.mixed.kinds.get(t, failkinds.UNKNOWN) for t in own)
            return Verdict.CAUGHT_BY_ERROR if failkinds.only_errors(kinds) else Verdict.CAUGHT
        return Verdict.CAUGHT_DIFFERENTLY if other else Verdict.SURVIVED

    def exit_code(self) -> int:
        if self.new.status is not RunStatus.PASSED:
            return 3
        return 0 if self.verdict() is Verdict.CAUGHT else 1

    def table(self) -> tuple[list[str], list[list[str]]]:
        own, other = self._split()
        rows = [[t, "yes"] for t in own] + [[t, "no"] for t in other]
        return ["fails on the pre-fix source", "in a test file the change touched"], rows

    def to_json(self) -> dict[str, Any]:
        own, other = self._split()
        return {
            "verdict": str(self.verdict()),
            "new_status": str(self.new.status),
            "mixed_status": str(self.mixed.status),
            "detail": self.mixed.detail,
            "failing_touched": own,
            "failing_other": other,
            "kinds": {t: f.label() for t, f in sorted(self.mixed.kinds.items())},
            "touched_files": sorted(self.touched),
        }

    def summary(self) -> str:
        code = self.exit_code()
        if code == 3:
            failing = ", ".join(sorted(self.new.failing))
            return (
                f"UNTRUSTED: the new tree does not pass ({self.new.status}: "
                f"{self.new.detail or failing}) (exit 3)"
            )
        own, other = self._split()
        verdict = self.verdict()
        text = {
            Verdict.CAUGHT: f"CAUGHT: {len(own)} test(s) of the change fail on the pre-fix source",
            Verdict.CAUGHT_BY_ERROR: f"CAUGHT BY ERROR: the {len(own)} test(s) of the change "
            f"fail on the pre-fix source only by crashing "
            f"({failkinds.summary({t: self.mixed.kinds[t] for t in own if t in self.mixed.kinds})})"
            "; they show that the API changed, not that they check the fix: add an assertion "
            "that the old code fails",
            Verdict.CAUGHT_DIFFERENTLY: f"CAUGHT DIFFERENTLY: only {len(other)} test(s) the "
            "change did not touch fail on the pre-fix source",
            Verdict.SURVIVED: "SURVIVED: every test passes on the pre-fix source; the fix's "
            "tests do not test the fix",
        }.get(verdict, f"{str(verdict).upper()}: {self.mixed.detail}")
        return f"{text} (exit {code})"


def run(
    repo: Path, table: ControlTable, source_from: str, tests_from: str, paths: Sequence[str]
) -> NegativeReport:
    """Run NEW and NEW-with-OLD's-source side by side, each in its own worktree."""
    old, new = objects.rev_parse(repo, source_from), objects.rev_parse(repo, tests_from)
    noop = table.noop()
    scratch = Path(tempfile.mkdtemp(prefix="fidelity-negative-"))
    try:
        mixed_sha = stage.overlay_commit(repo, new, old, paths, scratch)
        prefixes = [p.strip("/") for p in paths]
        touched = frozenset(
            f
            for f in patches.changed_files(repo, old, new)
            if not any(f == p or f.startswith(p + "/") for p in prefixes)
        )
        logs = log_dir(repo, new)
        tree = treenames.top_level(
            objects.tree_files(repo, new), objects.show_file(repo, new, "pyproject.toml")
        )
        cancel = proc.Cancel()  # one token for both lanes: Ctrl-C stops them together
        tasks = [
            functools.partial(
                run_tree, Tree(repo, sha, table, tree, cancel), noop, logs / f"_{name}.log"
            )
            for name, sha in (("new", new), ("mixed", mixed_sha))
        ]
        new_run, mixed_run = parallel(tasks, 2, cancel)
        return NegativeReport(new_run, mixed_run, touched)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
