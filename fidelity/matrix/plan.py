"""A run plan: what one `fidelity run` is, fixed before any case runs.

`gate.start` makes one for a fresh run and `gate.resume` reads one back from an interrupted
run's directory; `gate.execute` runs it. The plan is what `plan.json` records and what
run.json's manifest is written from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the run directory's readers import this without the runner
    from fidelity.matrix.accept import Allowance
    from fidelity.matrix.evidence import CaseEvidence
    from fidelity.matrix.findings import Harness
    from fidelity.matrix.outcome import Selection
    from fidelity.matrix.predict import Prediction
    from fidelity.matrix.repo_state import RepoState
    from fidelity.matrix.table import Matrix
    from fidelity.progress import Progress


@dataclass(frozen=True, slots=True)
class SidePlan:
    role: str  # "baseline" or "candidate"
    rev: str
    sha: str


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run, resolved: its directory, harness table, cases and sides, and (resumed) the
    evidence an earlier attempt already completed."""

    repo: Path
    run_dir: Path
    checkout: RepoState  # the user's checkout before the run: it must not change
    harness_rev: str | None
    table_path: str  # the case table, relative to the repository
    harness: Harness
    full: Matrix  # the whole harness table
    matrix: Matrix  # the cases this run runs: the selection (or shard) of `full`
    sides: tuple[SidePlan, SidePlan]  # baseline, candidate
    started: str
    expect: str | None = None  # the prediction file, as given
    prediction: Prediction | None = None
    selectors: tuple[str, ...] = ()
    selection: Selection | None = None
    shard: str | None = None
    durations: Mapping[str, float] | None = None
    jobs: int = 2
    progress: Progress | None = None
    resumed: bool = False
    done: Mapping[str, Mapping[str, CaseEvidence]] = field(default_factory=dict)  # role -> id
    accepts: tuple[Allowance, ...] = ()  # the table's accepted findings, expiry decided
    replay: str | None = None  # --replay: the mode of every case without its own
    ci: bool = False  # the command runs under CI: a partial run not meant is a finding

    def to_json(self) -> dict[str, Any]:
        """The body of plan.json: what `resume` needs to continue the same run."""
        return {
            "repo": str(self.repo),  # so `--resume` finds it from anywhere
            "harness_rev": self.harness_rev,
            "table_path": self.table_path,
            "table_sha256": self.harness.table_sha256,
            "harness_tree": self.harness.tree,
            "sides": {p.role: {"rev": p.rev, "sha": p.sha} for p in self.sides},
            "expect": self.expect,
            "selectors": list(self.selectors),
            "started": self.started,
            "shard": self.shard,
            "durations": dict(self.durations) if self.durations is not None else None,
            "replay": self.replay,
            "partial": self.selection.meant if self.selection else False,
        }
