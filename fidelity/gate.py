"""`fidelity run` and `fidelity compare`: orchestration only, over the pure comparison.

The case table is read once, from the harness revision, and both sides run that same
table; each side runs in its own detached worktree, never in the user's checkout.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from fidelity import casetable, git, rundir
from fidelity.casetable import Matrix
from fidelity.compare import Comparison, compare
from fidelity.errors import UsageError
from fidelity.evidence import SideEvidence
from fidelity.explain import explanations
from fidelity.findings import Code, Finding, Harness, exit_code, provenance
from fidelity.runner import Progress, SidePlan, hash_tree, run_side

WORKTREE = "WORKTREE"


@dataclass(frozen=True, slots=True)
class Outcome:
    run_dir: Path
    harness: Harness
    baseline: SideEvidence
    candidate: SideEvidence
    comparison: Comparison
    findings: tuple[Finding, ...]
    exit_code: int


def table_path(repo: Path, cases: str | Path) -> str:
    """The table's path relative to the repository top, as git names it."""
    path = Path(cases)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(repo.resolve())
        except ValueError as exc:
            raise UsageError(f"case table {cases} is outside the repository {repo}") from exc
    return path.as_posix()


def read_harness(repo: Path, rel: str, harness_rev: str | None) -> tuple[Harness, Matrix]:
    """Read the case table once: from the checkout (default) or from a committed revision."""
    if harness_rev is None:
        sha = git.rev_parse(repo, "HEAD")
        path = repo / rel
        if not path.is_file():
            raise UsageError(
                f"no case table at {path}. Write one (see `fidelity cases --help`) or pass --cases."
            )
        data = path.read_bytes()
        dirty_paths = tuple(git.dirty_paths(repo))
        table_dirty = git.show_file(repo, sha, rel) != data
        rev = WORKTREE
    else:
        sha = git.rev_parse(repo, harness_rev)
        committed = git.show_file(repo, sha, rel)
        if committed is None:
            raise UsageError(f"the harness revision {harness_rev} has no case table {rel}")
        data, dirty_paths, table_dirty, rev = committed, (), False, harness_rev
    matrix = casetable.parse(data, f"{rel}@{rev if rev != WORKTREE else 'checkout'}")
    harness = Harness(rev, sha, bool(dirty_paths), dirty_paths, rel, matrix.sha256, table_dirty)
    return harness, matrix


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run(
    repo: Path,
    baseline: str,
    candidate: str,
    cases: str | Path,
    harness_rev: str | None = None,
    out: Path | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Outcome:
    """Run both sides under one harness table, compare, and write the run directory."""
    repo = git.toplevel(repo)
    rel = table_path(repo, cases)
    harness, matrix = read_harness(repo, rel, harness_rev)
    plans = [SidePlan("baseline", baseline, git.rev_parse(repo, baseline)),
             SidePlan("candidate", candidate, git.rev_parse(repo, candidate))]  # fmt: skip
    started = _now()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = rundir.prepare(out, repo, f"{stamp}-{plans[0].sha[:7]}-{plans[1].sha[:7]}")
    base, cand = (run_side(repo, p, matrix, rel, run_dir, jobs, progress) for p in plans)
    declared = tuple((c.id, c.definition_sha()) for c in matrix.cases)
    specs = {c.id: c.compare for c in matrix.cases}
    comparison = compare(declared, base, cand, explanations(run_dir, base, cand, specs))
    findings = provenance(harness, base, cand, comparison, specs)
    code = exit_code(comparison, findings)
    data = rundir.manifest(
        harness, matrix, base, cand, comparison, findings, code,
        {"started": started, "finished": _now()},
    )  # fmt: skip
    rundir.write(run_dir, data)
    return Outcome(run_dir, harness, base, cand, comparison, findings, code)


def altered_evidence(run_dir: Path, side: SideEvidence) -> list[Finding]:
    """Files in the run directory that no longer match the hashes recorded for them."""
    found = []
    for case_id, ev in side.cases.items():
        case_dir = run_dir / side.role / "cases" / case_id
        for kind, recorded in (("out", ev.outputs), ("cache", ev.cache)):
            present = hash_tree(case_dir / kind)
            bad = sorted(p for p, h in recorded.items() if present.get(p) != h)
            if bad:
                found.append(
                    Finding(
                        Code.EVIDENCE_ALTERED,
                        f"{len(bad)} recorded {kind} files are missing or changed: "
                        f"{', '.join(bad[:3])}",
                        side.role,
                        case_id,
                    )
                )
    return found


def recompare(run_dir: Path) -> Outcome:
    """Re-render the verdict from a run directory alone, re-checking its evidence files."""
    record = rundir.read(run_dir)
    explained = explanations(run_dir, record.baseline, record.candidate, record.specs)
    comparison = compare(record.declared, record.baseline, record.candidate, explained)
    findings = provenance(
        record.harness, record.baseline, record.candidate, comparison, record.specs
    )
    findings += tuple(
        altered_evidence(run_dir, record.baseline) + altered_evidence(run_dir, record.candidate)
    )
    return Outcome(
        run_dir,
        record.harness,
        record.baseline,
        record.candidate,
        comparison,
        findings,
        exit_code(comparison, findings),
    )
