"""A run plan: what one `fidelity run` is, fixed before any case runs, and plan.json, the
record of it that `--resume` reads back.

`gate.start` makes a plan for a fresh run and `gate.resume` one for an interrupted run from
its `PlanRecord`; `gate.execute` runs it. run.json's manifest is written from the plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.matrix.run import untrusted
from fidelity.matrix.run.request import RunRequest

if TYPE_CHECKING:  # types only: the run directory's readers import this without the runner
    from fidelity.matrix.cases.table import Matrix
    from fidelity.matrix.run.repo_state import RepoState
    from fidelity.matrix.verdict.accept import Allowance
    from fidelity.matrix.verdict.evidence import CaseEvidence
    from fidelity.matrix.verdict.findings import Harness
    from fidelity.matrix.verdict.outcome import Selection
    from fidelity.matrix.verdict.predict import Prediction
    from fidelity.progress import Progress

PLAN_SCHEMA = "fidelity.plan/1"


@dataclass(frozen=True, slots=True)
class SidePlan:
    role: str  # "baseline" or "candidate"
    rev: str
    sha: str


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run, resolved: what was asked, its directory, harness table, cases and sides, and
    (resumed) the evidence an earlier attempt already completed."""

    repo: Path
    run_dir: Path
    checkout: RepoState  # the user's checkout before the run: it must not change
    request: RunRequest  # as asked (resumed: as it began, with this command's jobs and ci)
    table_path: str  # the case table, relative to the repository
    harness: Harness
    full: Matrix  # the whole harness table
    matrix: Matrix  # the cases this run runs: the selection (or shard) of `full`
    sides: tuple[SidePlan, SidePlan]  # baseline, candidate
    started: str
    prediction: Prediction | None = None
    selection: Selection | None = None
    progress: Progress | None = None
    resumed: bool = False
    done: Mapping[str, Mapping[str, CaseEvidence]] = field(default_factory=dict)  # role -> id
    accepts: tuple[Allowance, ...] = ()  # the table's accepted findings, expiry decided


class InvalidPlan(ValueError):
    """plan.json is not a plan this fidelity can continue: where (a JSON path) and why."""

    def __init__(self, where: tuple[str | int, ...], why: str) -> None:
        super().__init__(where, why)
        self.where, self.why = where, why


@dataclass(frozen=True, slots=True)
class PlanRecord:
    """plan.json: the request a run began with, and what it resolved to before any case ran
    (the repository, the table's bytes and the harness's tree, the sides' commits)."""

    request: RunRequest  # sides by the revisions given, the table by its path
    sides: tuple[SidePlan, SidePlan]
    table_sha256: str
    started: str
    harness_tree: str | None = None  # None: a plan of an older fidelity
    repo: Path | None = None  # None: a plan of fidelity 0.2.0 or older

    @classmethod
    def of(cls, plan: RunPlan) -> PlanRecord:
        base, cand = plan.sides
        asked = replace(plan.request, baseline=base.rev, candidate=cand.rev, cases=plan.table_path)
        h = plan.harness
        return cls(asked, plan.sides, h.table_sha256, plan.started, h.tree, plan.repo)

    def to_json(self) -> dict[str, Any]:
        """The body of plan.json: what `resume` needs to continue the same run."""
        return {
            "schema": PLAN_SCHEMA,
            "repo": str(self.repo) if self.repo else None,  # so `--resume` finds it anywhere
            **self.request.to_json(),
            "table_sha256": self.table_sha256,
            "harness_tree": self.harness_tree,
            "sides": {p.role: {"rev": p.rev, "sha": p.sha} for p in self.sides},
            "started": self.started,
        }

    @classmethod
    def from_json(cls, data: Any) -> PlanRecord:
        """plan.json's content read back; InvalidPlan, located, when it is not a plan this
        fidelity wrote (a plan of an older fidelity is one: what it lacks is the default)."""
        problems = untrusted.plan_problems(data)
        if problems:
            where, why = problems[0]
            raise InvalidPlan(tuple(where), why)
        sides = tuple(SidePlan(r, data["sides"][r]["rev"], data["sides"][r]["sha"]) for r in ROLES)
        try:
            request = RunRequest.from_json(data, sides[0].rev, sides[1].rev)
        except ValueError as exc:
            key, why = exc.args
            raise InvalidPlan((key,), why) from exc
        repo = Path(data["repo"]) if data.get("repo") else None
        started, tree = data["started"], data.get("harness_tree")
        return cls(request, (sides[0], sides[1]), data["table_sha256"], started, tree, repo)


ROLES = ("baseline", "candidate")
