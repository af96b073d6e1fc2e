"""What a run has done so far, kept as it happens, so an interrupted run can be resumed.

`plan.json` is written before anything runs: what the run is (harness, table, sides,
selection, prediction). Each case's evidence is appended to its side's `evidence.jsonl`,
one line in one write, the moment the case completes (a line cut short by a crash is read
as none, and its case runs again; no file per case, since on a busy disk each new file is
a good part of a trivial case's cost); each side's own facts (cleanliness, setup, imports)
to `side.json`. `run.json` comes last, so a directory with a plan and no
run.json is an incomplete run: `fidelity run --resume DIR` runs only the cases without
complete evidence, and `compare` refuses it. While a run runs (or resumes) it holds a
shared lock on its plan.json (`running`); the kernel drops it when the process dies, so
`idle` tells a live run from an interrupted one, for `fidelity gc`. It also holds an
exclusive lock on the folder itself (`sole`): one process at a time runs a run directory.
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

from fidelity.errors import UntrustedError, UsageError
from fidelity.matrix.run import untrusted
from fidelity.matrix.run.plan import InvalidPlan, PlanRecord
from fidelity.matrix.run.recheck import drift
from fidelity.matrix.verdict.evidence import (
    CaseEvidence,
    CaseStatus,
    SideEvidence,
    case_to_json,
    side_from_json,
    side_to_json,
)
from fidelity.schema import json_path

PLAN = "plan.json"
EVIDENCE = "evidence.jsonl"  # in a side's folder: a line per completed case
OLD_EVIDENCE = "evidence.json"  # in a case's folder, as fidelity wrote it before
SIDE = "side.json"


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically: the file is whole or absent, also after SIGKILL or a full disk."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, exc) from exc


def _unwritable(path: Path, exc: OSError) -> UntrustedError:
    run_dir = next((d for d in path.parents if (d / PLAN).is_file()), path.parent)
    return UntrustedError(
        f"could not write {path}: {exc.strerror or exc}; free space under {run_dir} (or "
        f"make it writable), then finish the run with `fidelity run --resume {run_dir}`"
    )


def write_plan(run_dir: Path, plan: PlanRecord) -> None:
    write_json(run_dir / PLAN, plan.to_json())


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
def sole(run_dir: Path) -> Iterator[None]:
    """Hold while a run runs or resumes: an exclusive lock on its folder (the kernel drops
    it when the process dies). A second `--resume` of the run, or a resume of a run still
    running, is refused: it would kill the first one's cases as a killed run's leftovers
    and write into the same evidence."""
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"{run_dir} is being run by another fidelity process right now; wait for it "
                f"to finish (then `fidelity compare {run_dir}`), or stop it and run "
                f"`fidelity run --resume {run_dir}` again"
            ) from None
        yield
    finally:
        os.close(fd)


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


def read_plan(run_dir: Path) -> PlanRecord:
    """The plan of a run to resume; UsageError (exit 2: nothing is judged) when there is
    none to resume, naming the file and the JSON path of what is wrong."""
    if (run_dir / "run.json").is_file():
        raise UsageError(f"{run_dir} is a complete run: judge it with `fidelity compare {run_dir}`")
    try:
        return load_plan(run_dir)
    except untrusted.DamagedRunError as exc:
        raise UsageError(f"{run_dir} holds no run to resume: {exc}") from exc
    except InvalidPlan as exc:
        raise UsageError(
            f"{run_dir} holds no run to resume: {run_dir / PLAN} at {json_path(exc.where)}: "
            f"{exc.why}; start a new run without --resume"
        ) from exc


def load_plan(run_dir: Path) -> PlanRecord:
    """run_dir's plan.json read back; DamagedRunError when it is no JSON, InvalidPlan
    (located) when it is no plan this fidelity can continue."""
    return PlanRecord.from_json(untrusted.load(run_dir / PLAN))


def began_in(run_dir: Path) -> Path | None:
    """The repository an interrupted run began in, as its plan.json names it (None: a plan
    of an older fidelity, or no plan, or that folder is gone), so that `fidelity run --resume
    DIR` runs wherever it is printed, not only inside the repository."""
    try:
        named = load_plan(run_dir).repo
    except (untrusted.DamagedRunError, InvalidPlan):
        return None
    return named if named is not None and named.is_dir() else None


def save_case(case_dir: Path, evidence: CaseEvidence) -> None:
    """Append a completed case's evidence to its side's ledger (case_dir is
    `<side>/cases/<id>`). Each line starts with a newline, so a line a crash cut short
    never swallows the next; O_APPEND keeps lines of cases finishing together apart."""
    path = case_dir.parent.parent / EVIDENCE
    line = b"\n" + json.dumps(case_to_json(evidence), separators=(",", ":")).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if os.write(fd, line) != len(line):
                raise OSError(28, "No space left on device")  # a short write: the disk is full
        finally:
            os.close(fd)
    except OSError as exc:
        raise _unwritable(path, exc) from exc


def _intact(case_dir: Path, ev: CaseEvidence) -> bool:
    """The files a case's evidence names are there and hash as recorded."""
    return not drift(case_dir, ev, None)


def completed(side_dir: Path, definitions: Mapping[str, str]) -> dict[str, CaseEvidence]:
    """Cases of one side already run to completion with this definition, their files intact."""
    found: dict[str, CaseEvidence] = {}
    latest = {data["case_id"]: data for data in untrusted.lines(side_dir / EVIDENCE, "case")}
    for case_id, definition in definitions.items():
        case_dir = side_dir / "cases" / case_id
        data = latest.get(case_id) or untrusted.part(case_dir / OLD_EVIDENCE, "case")
        if data is None or data["case_id"] != case_id:
            continue
        ev = side_from_json({"cases": {case_id: data}, **_EMPTY_SIDE}).cases[case_id]
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


def finished(run_dir: Path) -> int:
    """How many case runs, both sides together, a run directory keeps whole evidence of."""
    return sum(len(untrusted.lines(side / EVIDENCE, "case")) for side in run_dir.glob("*/"))


def save_side(side_dir: Path, side: SideEvidence) -> None:
    """A side's own facts (cases apart), once its setup and import check are done."""
    data = side_to_json(replace(side, cases={}))
    write_json(side_dir / SIDE, data)


def load_side(side_dir: Path) -> SideEvidence | None:
    data = untrusted.part(side_dir / SIDE, "side")
    if data is None or data["role"] != side_dir.name:
        return None
    return side_from_json(data)
