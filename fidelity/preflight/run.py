"""Plan and run every gate over the judged content; the one entry the CLI and hooks call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fidelity import config, git
from fidelity.errors import UsageError
from fidelity.preflight import settings, tree
from fidelity.preflight.context import PYPROJECT, Context, Gate, Plan
from fidelity.preflight.message import TRAILERS
from fidelity.preflight.outcome import GateResult, Report, Status
from fidelity.preflight.records import DOCS, STALE
from fidelity.preflight.tables import CASES, CONTROLS, FAILSET, PREDICTIONS

GATES: tuple[Gate, ...] = (CASES, CONTROLS, PREDICTIONS, FAILSET, DOCS, STALE, TRAILERS)


@dataclass(frozen=True, slots=True)
class Request:
    """What to judge: the index (`staged`, through `index` when a hook names one) or the work
    tree; the change against `base` (default: the parent the commit would have); everything
    configured with `everything`; a commit message file for the trailers gate."""

    repo: Path
    staged: bool = False
    index: Path | None = None
    base: str | None = None
    amend: bool = False
    everything: bool = False
    message: Path | None = None


def _parent(repo: Path, amend: bool) -> str | None:
    """The commit the judged content would sit on: HEAD, or HEAD's parent for --amend."""
    head = git.resolve(repo, "HEAD")
    if amend and head is not None:
        return git.resolve(repo, f"{head}^")
    return head


def _context(request: Request, judged: tree.Tree) -> Context:
    parent = _parent(request.repo, request.amend)
    base = git.rev_parse(request.repo, request.base) if request.base else parent
    changes = tree.changes(request.repo, judged, base, request.everything)
    data = judged.read(PYPROJECT)
    source = f"{PYPROJECT} in {judged.label}"
    tool = config.parse(data, source) if data is not None else {}
    return Context(
        repo=request.repo,
        tree=judged,
        changes=changes,
        tool=tool,
        settings=settings.from_tool(tool, source),
        parent=parent,
        message=request.message,
    )


def _plans(ctx: Context) -> list[tuple[Gate, Plan]]:
    wanted = ctx.settings.gates
    plans = []
    for gate in GATES:
        plan = gate.plan(ctx)
        if wanted is not None and gate.name not in wanted:
            plan = Plan("not in [tool.fidelity.preflight] gates", Status.NOT_CONFIGURED)
        elif wanted is not None and plan.skip is Status.NOT_CONFIGURED:
            raise UsageError(
                f"[tool.fidelity.preflight] gates names {gate.name!r}, but it has nothing to "
                f"judge: {plan.why}. Configure it, or drop it from gates."
            )
        plans.append((gate, plan))
    return plans


def plan(request: Request) -> list[tuple[str, str, Plan]]:
    """(gate, what it judges, whether it runs and why) for every gate, without running any."""
    with tree.judged(request.repo, request.staged, request.index) as judged:
        ctx = _context(request, judged)
        return [(gate.name, gate.what, p) for gate, p in _plans(ctx)]


def run(request: Request) -> Report:
    """Every gate that applies, on the judged content; a gate that does not run says why."""
    with tree.judged(request.repo, request.staged, request.index) as judged:
        ctx = _context(request, judged)
        results = []
        for gate, p in _plans(ctx):
            if p.skip is not None:
                results.append(GateResult(gate.name, p.skip, p.why))
            else:
                results.append(gate.check(ctx))
        return Report(judged.label, tuple(results), request.everything)
