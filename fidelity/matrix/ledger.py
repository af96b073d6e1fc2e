"""What a run has done so far, kept as it happens, so an interrupted run can be resumed.

`plan.json` is written before anything runs: what the run is (harness, table, sides,
selection, prediction). Each case's evidence is written to its own `evidence.json`,
atomically, the moment the case completes; each side's own facts (cleanliness, setup,
imports) to `side.json`. `run.json` comes last, so a directory with a plan and no
run.json is an incomplete run: `fidelity run --resume DIR` runs only the cases without
complete evidence, and `compare` refuses it. While a run runs (or resumes) it holds a
shared lock on its plan.json (`running`); the kernel drops it when the process dies, so
`idle` tells a live run from an interrupted one, for `fidelity gc`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.matrix.evidence import (
    CaseEvidence,
    CaseStatus,
    SideEvidence,
    case_to_json,
    side_from_json,
    side_to_json,
)
from fidelity.matrix.recheck import drift

PLAN = "plan.json"
EVIDENCE = "evidence.json"
SIDE = "side.json"
PLAN_SCHEMA = "fidelity.plan/1"


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically: the file is whole or absent, also after SIGKILL or a full disk."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_plan(run_dir: Path, plan: Mapping[str, Any]) -> None:
    write_json(run_dir / PLAN, {"schema": PLAN_SCHEMA, **plan})


def incomplete(run_dir: Path) -> bool:
    return (run_dir / PLAN).is_file() and not (run_dir / "run.json").is_file()


@contextlib.contextmanager
def running(run_dir: Path) -> Iterator[None]:
    """Hold while the run runs: a shared lock on its plan.json (none when it has none)."""
    try:
        handle = (run_dir / PLAN).open("rb")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield


@contextlib.contextmanager
def idle(run_dir: Path) -> Iterator[bool]:
    """False when a live run holds run_dir; else True, and no run starts on it meanwhile."""
    try:
        handle = (run_dir / PLAN).open("rb")
    except OSError:
        yield True
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def read_plan(run_dir: Path) -> dict[str, Any]:
    """The plan of a run to resume; UsageError when there is none to resume."""
    if (run_dir / "run.json").is_file():
        raise UsageError(f"{run_dir} is a complete run: judge it with `fidelity compare {run_dir}`")
    plan = _read(run_dir / PLAN)
    if not isinstance(plan, dict) or plan.get("schema") != PLAN_SCHEMA:
        raise UsageError(f"{run_dir} holds no run to resume (no valid {PLAN})")
    return plan


def save_case(case_dir: Path, evidence: CaseEvidence) -> None:
    write_json(case_dir / EVIDENCE, case_to_json(evidence))


def _intact(case_dir: Path, ev: CaseEvidence) -> bool:
    """The files a case's evidence names are there and hash as recorded."""
    return not drift(case_dir, ev, None)


def completed(side_dir: Path, definitions: Mapping[str, str]) -> dict[str, CaseEvidence]:
    """Cases of one side already run to completion with this definition, their files intact."""
    found: dict[str, CaseEvidence] = {}
    for case_id, definition in definitions.items():
        case_dir = side_dir / "cases" / case_id
        data = _read(case_dir / EVIDENCE)
        if not isinstance(data, dict):
            continue
        try:
            ev = side_from_json({"cases": {case_id: data}, **_EMPTY_SIDE}).cases[case_id]
        except (KeyError, TypeError, ValueError):
            continue
        fits = ev.definition_sha == definition and ev.status is not CaseStatus.NOT_RUN
        if fits and _intact(case_dir, ev):
            found[case_id] = ev
    return found


_EMPTY_SIDE: dict[str, Any] = {
    "role": "baseline",
    "rev": "",
    "sha": "",
    "dirty_paths": [],
    "imports": [],
    "setup": [],
}


def save_side(side_dir: Path, side: SideEvidence) -> None:
    """A side's own facts (cases apart), once its setup and import check are done."""
    data = side_to_json(replace(side, cases={}))
    write_json(side_dir / SIDE, data)


def load_side(side_dir: Path) -> SideEvidence | None:
    data = _read(side_dir / SIDE)
    if not isinstance(data, dict):
        return None
    try:
        return side_from_json(data)
    except (KeyError, TypeError, ValueError):
        return None
