"""Plan and run every gate over the judged content; the one entry the CLI and hooks call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fidelity import config
from fidelity.errors import UsageError
from fidelity.git import log, objects
from fidelity.preflight import merges, settings, tree
from fidelity.preflight.context import PYPROJECT, Context, Gate, Merge, Plan
from fidelity.preflight.gates import GATES
from fidelity.preflight.outcome import GateResult, Report, Status


@dataclass(frozen=True, slots=True)
class Request:
    """What to judge: the index (`staged`, through `index` when a hook names one), the work
    tree, or with `span` the commit `to` of a range `from..to` (pre-commit's `--from-ref`
    and `--to-ref`); the change against `base` (default: the parent the commit would have;
    for a range, its merge base), or the paths in `files` (pre-commit's `--all-files` and
    `--files`); with `commit`, that commit's whole tree; everything configured with
    `everything`; a commit message file for the trailers gate (`partial`: it holds only
    the trailers a commit adds, the rest of its message unknown); `label` names the judged
    content in the report. `automatic`: the heads (sha, name) of a merge git is making on its
    own, which its pre-merge-commit hook sees only in GITHEAD_* (`merges.automatic_heads`)."""

    repo: Path
    staged: bool = False
    index: Path | None = None
    base: str | None = None
    amend: bool = False
    everything: bool = False
    message: Path | None = None
    span: tuple[str, str] | None = None
    files: tuple[str, ...] | None = None
    commit: str | None = None  # judge this commit's whole tree (a branch's first push)
    partial: bool = False
    label: str = ""
    automatic: tuple[tuple[str, str], ...] = ()


def _parent(repo: Path, amend: bool) -> str | None:
    """The commit the judged content would sit on: HEAD, or HEAD's parent for --amend."""
    head = objects.resolve(repo, "HEAD")
    if amend and head is not None:
        return objects.resolve(repo, f"{head}^")
    return head


def _ends(request: Request) -> tuple[str, str] | None:
    if request.span is None:
        return None
    try:
        return (
            objects.rev_parse(request.repo, request.span[0]),
            objects.rev_parse(request.repo, request.span[1]),
        )
    except UsageError as exc:
        raise UsageError(
            f"{exc} A range needs both ends in the clone: in CI, fetch the history "
            "(actions/checkout with fetch-depth: 0)."
        ) from None


@contextmanager
def _judged(request: Request) -> Iterator[tuple[tree.Tree, tuple[str, str] | None]]:
    span = _ends(request)
    commit = span[1] if span else None
    if request.commit is not None:
        commit = objects.rev_parse(request.repo, request.commit)
    with tree.judged(request.repo, request.staged, request.index, commit, request.label) as judged:
        yield judged, span


def _merges(request: Request, span: tuple[str, str] | None) -> tuple[Merge, ...]:
    """Those a range brings, HEAD's under --all, and one waiting to be committed in the
    judged index or work tree (a merge, squash merge, cherry-pick or revert)."""
    if span is not None:
        return merges.in_range(request.repo, span)
    pending = not request.amend and request.commit is None
    return merges.at_head(request.repo, request.everything, pending, request.automatic)


def _context(request: Request, judged: tree.Tree, span: tuple[str, str] | None) -> Context:
    base: str | None
    if span is not None:
        parent: str | None = span[1]
        bases = log.merge_bases(request.repo, list(span))
        base = bases[0] if bases else span[0]
    elif request.commit is not None:
        parent = objects.rev_parse(request.repo, request.commit)
        base = parent
    else:
        parent = _parent(request.repo, request.amend)
        base = objects.rev_parse(request.repo, request.base) if request.base else parent
    if request.files is not None:
        changes = tree.given(request.repo, request.files)
    else:
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
        partial=request.partial,
        merges=_merges(request, span) if "records" in tool else (),  # only the rows gate reads them
        span=span,
    )


def _plans(ctx: Context) -> list[tuple[Gate, Plan]]:
    wanted = ctx.settings.gates
    plans = []
    for gate in GATES:
        plan = gate.applies(ctx)
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
    with _judged(request) as (judged, span):
        ctx = _context(request, judged, span)
        return [(gate.name, gate.what, p) for gate, p in _plans(ctx)]


def run(request: Request) -> Report:
    """Every gate that applies, on the judged content; a gate that does not run says why."""
    with _judged(request) as (judged, span):
        ctx = _context(request, judged, span)
        results = []
        for gate, p in _plans(ctx):
            if p.skip is not None:
                results.append(GateResult(gate.name, p.skip, p.why))
            else:
                results.append(gate.check(ctx))
        return Report(judged.label, tuple(results), request.everything)
