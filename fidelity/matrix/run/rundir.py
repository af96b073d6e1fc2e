"""The run directory: run.json (schema fidelity.run/1) beside per-side, per-case evidence."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity import __version__, workdir
from fidelity.errors import UntrustedError, UsageError
from fidelity.matrix.cases.table import Case, Matrix
from fidelity.matrix.run import untrusted
from fidelity.matrix.verdict import predict
from fidelity.matrix.verdict.compare import Comparison
from fidelity.matrix.verdict.evidence import SideEvidence, side_from_json, side_to_json
from fidelity.matrix.verdict.findings import Finding, Harness
from fidelity.matrix.verdict.widening import Specs

if TYPE_CHECKING:
    from fidelity.matrix.run.plan import RunPlan
    from fidelity.matrix.verdict.accept import Settled
    from fidelity.matrix.verdict.predict import PredictionVerdict

SCHEMA_ID = "fidelity.run/1"
MANIFEST = "run.json"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What `fidelity compare` needs, read back from a run directory alone."""

    harness: Harness
    declared: tuple[tuple[str, str], ...]  # (case id, harness definition sha)
    baseline: SideEvidence
    candidate: SideEvidence
    specs: Mapping[str, Specs]  # case id -> output glob -> comparison spec
    tags: Mapping[str, tuple[str, ...]]  # case id -> tags, to resolve tag: selectors
    raw: Mapping[str, Any]
    recorded: Mapping[str, str]  # case id -> the verdict the run itself gave
    integrity: str  # "" when the digest matches; else why run.json cannot be trusted
    checkout_changes: tuple[str, ...] = ()


def digest(data: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of everything but the digest itself."""
    body = {k: v for k, v in data.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }


def manifest(
    plan: RunPlan,
    *,
    sides: tuple[SideEvidence, SideEvidence],
    comparison: Comparison,
    findings: tuple[Finding, ...],
    exit_code: int,
    judged: PredictionVerdict | None,
    checkout_changes: Sequence[str],
    times: Mapping[str, str],
    settled: Settled | None = None,
) -> dict[str, Any]:
    """run.json's content (before its digest), from the run's plan and what it found."""
    baseline, candidate = sides
    data = {
        "schema": SCHEMA_ID,
        "tool": {"name": "fidelity", "version": __version__},
        "times": dict(times),
        "environment": environment(),
        "harness": asdict(plan.harness),
        "matrix": {
            **_matrix(plan.matrix),
            "accept": [a.to_json() for a in plan.accepts],
            "replay": plan.request.replay,  # --replay: the mode of every case without its own
        },
        "sides": {"baseline": side_to_json(baseline), "candidate": side_to_json(candidate)},
        "comparison": asdict(comparison),
        "findings": [asdict(f) for f in findings],
        "exit_code": exit_code,
        "run_dir": str(plan.run_dir),
        "checkout_changes": list(checkout_changes),
        "selection": plan.selection.to_json() if plan.selection else None,
        "prediction": predict.to_json(plan.prediction),
        "prediction_verdict": asdict(judged) if judged else None,
        **(settled_json(settled) if settled else {}),
    }
    return data  # made JSON-native once, by `write` (it was twice: 2 of 1,000 cases' 0.14 s)


def settled_json(settled: Settled) -> dict[str, Any]:
    """The findings the table accepted and the prediction expected, each with its entry."""
    return {
        key: [{"finding": asdict(f), "by": a.to_json()} for f, a in pairs]
        for key, pairs in (("accepted", settled.accepted), ("expected", settled.expected))
    }


def _matrix(matrix: Matrix) -> dict[str, Any]:
    return {
        "name": matrix.name,
        "source": matrix.source,
        "import_check": list(matrix.import_check),
        "cases": [
            {
                "id": c.id,
                "definition_sha": c.definition_sha(),
                "tags": list(c.tags),
                "definition": c.definition(),
                "compare": {k: dict(v) for k, v in c.compare.items()},
                **({"replay": _replay(c)} if c.replayed or c.nondeterministic else {}),
            }
            for c in matrix.cases
        ],
    }


def _replay(case: Case) -> dict[str, Any]:
    """How the case was run again on each side (`replay`, `repeat`, `nondeterministic`)."""
    return {
        "mode": case.replay or "repeat",
        "cold_runs": case.cold_runs,
        "warm": case.replay == "cold-warm",
        "nondeterministic": case.nondeterministic,
    }


def plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-native copy (tuples to lists, enums to strings), as it will be read back: the
    size of a move from or to NaN or an infinity, which JSON has no number for, as null."""
    result: dict[str, Any] = json.loads(json.dumps(data), parse_constant=lambda _: None)
    return result


def write(run_dir: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """Validate and write run.json atomically, with its digest (a crash or a full disk
    leaves no partial file behind)."""
    data = plain(data)
    data["digest"] = digest(data)  # validated where it is read (compare, verify), not here
    path = run_dir / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    try:
        # compact: json's C encoder (an indent falls back to the pure-Python one, 0.3 s for
        # 1,000 cases); `python -m json.tool run.json` shows it indented
        tmp.write_bytes(json.dumps(data, separators=(",", ":")).encode() + b"\n")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UntrustedError(
            f"could not write {path}: {exc.strerror or exc}; the case evidence is in {run_dir}, "
            "but without run.json it cannot be judged again: free space and run again"
        ) from exc
    return data


def read(run_dir: Path) -> RunRecord:
    """Read and check run.json: UsageError when the directory holds no complete run,
    DamagedRunError (exit 3, located) when run.json is not what `fidelity run` writes."""
    path = run_dir / MANIFEST
    if not path.is_file() and (run_dir / "plan.json").is_file():
        raise UsageError(
            f"{run_dir} is an incomplete run (interrupted before it was judged); finish it with "
            f"`fidelity run --resume {run_dir}`"
        )
    if not path.is_file():
        raise UsageError(f"{run_dir} is not a run directory: it has no {MANIFEST}")
    data = untrusted.read_run(path)
    h = data["harness"]
    lists = {k: tuple(h[k]) for k in ("dirty_paths", "paths", "changed") if k in h}
    harness = Harness(**{**h, **lists})
    declared = tuple((c["id"], c["definition_sha"]) for c in data["matrix"]["cases"])
    sides = data["sides"]
    cases = data["matrix"]["cases"]
    return RunRecord(
        harness,
        declared,
        side_from_json(sides["baseline"]),
        side_from_json(sides["candidate"]),
        {c["id"]: c.get("compare", {}) for c in cases},
        {c["id"]: tuple(c.get("tags", ())) for c in cases},
        data,
        {c["case_id"]: c["verdict"] for c in data["comparison"]["cases"]},
        _integrity(data),
        tuple(data.get("checkout_changes", ())),
    )


def _integrity(data: Mapping[str, Any]) -> str:
    if "digest" not in data:
        return (
            "run.json carries no digest (an older fidelity wrote it), so an edit to it "
            "cannot be detected; run the gate again to get a run that can be judged again"
        )
    if data["digest"] != digest(data):
        return "run.json was edited after the run: its digest does not match its content"
    return ""


def prepare(out: Path | None, repo: Path, label: str) -> Path:
    """Create a fresh run directory (absolute: cases run elsewhere); refuse one that
    already holds anything, or that cannot be made."""
    if out is None:
        return workdir.fresh(repo, "runs", label)
    out = out.absolute()
    try:
        return _fresh(out)
    except OSError as exc:
        raise UsageError(f"cannot make the run directory {out}: {exc.strerror or exc}") from exc


def _fresh(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise UsageError(f"run directory {out} exists and is not a directory; choose another --out")
    if out.exists() and any(out.iterdir()):
        raise UsageError(
            f"run directory {out} already exists and is not empty; choose another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    return out


def durations(run_dir: Path) -> dict[str, float]:
    """Each case's time on both sides in a stored run: what --shard-durations balances."""
    record = read(run_dir)
    return {
        cid: ev.duration_s + record.candidate.cases[cid].duration_s
        for cid, ev in record.baseline.cases.items()
        if cid in record.candidate.cases
    }
