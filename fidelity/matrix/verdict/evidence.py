"""What one side of a run produced, as frozen values that round-trip through run.json."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from fidelity.proc import ProcStatus


class CaseStatus(enum.StrEnum):
    OK = "ok"
    FAILED = "failed"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    NOT_FOUND = "not-found"
    NOT_RUN = "not-run"  # setup failed, interrupted, or never reached

    @property
    def executed(self) -> bool:
        return self is not CaseStatus.NOT_RUN

    @property
    def failed(self) -> bool:
        return self not in (CaseStatus.OK, CaseStatus.NOT_RUN)

    @property
    def said(self) -> str:
        """As a verb phrase: `the warm run timed out`."""
        return {
            CaseStatus.OK: "ran",
            CaseStatus.FAILED: "failed",
            CaseStatus.CRASHED: "crashed",
            CaseStatus.TIMEOUT: "timed out",
            CaseStatus.NOT_FOUND: "found no command to run",
            CaseStatus.NOT_RUN: "did not run",
        }[self]


class ReplayVerdict(enum.StrEnum):
    """What running a case again on the same side showed (`replay`, `repeat`)."""

    CACHE_REPRODUCES = "cache-reproduces"  # warm outputs as cold, and warm wrote no cache
    CACHE_DIVERGES = "cache-diverges"  # warm outputs differ from cold
    CACHE_NOT_USED = "cache-not-used"  # nothing cached, cache written again, or not faster
    NONDETERMINISTIC = "nondeterministic"  # cold runs differ from each other
    REPRODUCES = "reproduces"  # cold runs identical
    REPLAY_FAILED = "replay-failed"  # a later run failed where the first did not
    NOT_REPLAYED = "not-replayed"  # the first run failed: nothing to reproduce

    @property
    def bad(self) -> bool:
        """A replay verdict that fails the gate, as a failed case does."""
        return self in (
            ReplayVerdict.CACHE_DIVERGES,
            ReplayVerdict.CACHE_NOT_USED,
            ReplayVerdict.REPLAY_FAILED,
        )


@dataclass(frozen=True, slots=True)
class ReplayRun:
    """One more run of a case on the same side, kept under the case's folder."""

    kind: str  # "cold" (fresh cache) or "warm" (a copy of the first run's cache)
    folder: str  # under the case's folder: replay/cold-2, replay/warm
    status: CaseStatus
    exit_code: int | None = None
    duration_s: float = 0.0
    outputs: Mapping[str, str] = field(default_factory=dict)  # paired name -> sha256
    paths: Mapping[str, str] = field(default_factory=dict)  # paired name -> path under out/
    cache: Mapping[str, str] = field(default_factory=dict)  # path under its cache -> sha256
    cache_written: tuple[str, ...] = ()  # cache files it added or wrote again
    cpu_s: float | None = None  # CPU of its process tree; None where it could not be read

    def path_of(self, name: str) -> str:
        return self.paths.get(name, name)


@dataclass(frozen=True, slots=True)
class Replay:
    """A case's runs on one side beyond the first, and what they showed."""

    mode: str  # "cold-warm", "twice" or "repeat"
    verdict: ReplayVerdict
    runs: tuple[ReplayRun, ...] = ()
    varying: tuple[str, ...] = ()  # outputs (and cache/ files) that differ between cold runs
    detail: str = ""
    differences: tuple[str, ...] = ()  # the differing values, said by the case's comparators
    declared: bool = False  # the table declares the case nondeterministic
    # varying file -> column (CSV) or JSON path -> the largest difference seen between cold
    # runs (None: no size applies); {"*": None}: the file as a whole (`spread.reach`)
    spread: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["runs"] = [
            _without_unknown_cpu({**asdict(r), "status": r.status.value}) for r in self.runs
        ]
        data["verdict"] = self.verdict.value
        return data

    @staticmethod
    def from_json(data: Mapping[str, Any] | None) -> Replay | None:
        if data is None:
            return None
        runs = tuple(
            ReplayRun(
                **{
                    **r,
                    "status": CaseStatus(r["status"]),
                    "cache_written": tuple(r.get("cache_written", ())),
                }
            )
            for r in data["runs"]
        )
        return Replay(
            mode=data["mode"],
            verdict=ReplayVerdict(data["verdict"]),
            runs=runs,
            varying=tuple(data.get("varying", ())),
            detail=data.get("detail", ""),
            differences=tuple(data.get("differences", ())),
            declared=bool(data.get("declared", False)),
            spread={k: dict(v) for k, v in data.get("spread", {}).items()},
        )


@dataclass(frozen=True, slots=True)
class CaseEvidence:
    case_id: str
    definition_sha: str
    status: CaseStatus
    exit_code: int | None = None
    duration_s: float = 0.0
    outputs: Mapping[str, str] = field(default_factory=dict)  # path under {out} -> sha256
    missing_outputs: tuple[str, ...] = ()  # declared globs that matched no file
    cache: Mapping[str, str] = field(default_factory=dict)  # path under {cache} -> sha256
    cache_preexisting: tuple[str, ...] = ()  # files found in the cache dir before the case ran
    error: str = ""
    links: tuple[str, ...] = ()  # symbolic links (and special files) in out/ or cache/
    leftover: tuple[str, ...] = ()  # processes the case left running when it exited, killed
    stderr_tail: str = ""  # the last lines of its stderr, to say why it failed
    paths: Mapping[str, str] = field(default_factory=dict)  # paired name -> path under out/
    unexpected: tuple[str, ...] = ()  # files of outputs declared absent
    output_problems: tuple[str, ...] = ()  # e.g. two files paired under one name
    replay: Replay | None = None  # its runs beyond the first on this side, if replayed
    cpu_s: float | None = None  # CPU of its process tree; None where it could not be read
    replaced: tuple[str, ...] = ()  # its {out} or {cache} folder, replaced by a link

    def path_of(self, name: str) -> str:
        """Where the output compared under `name` lies under out/."""
        return self.paths.get(name, name)


@dataclass(frozen=True, slots=True)
class ImportResolution:
    module: str
    origin: str | None
    inside: bool
    error: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class SetupStep:
    argv: str
    status: ProcStatus
    exit_code: int | None
    duration_s: float


@dataclass(frozen=True, slots=True)
class SideEvidence:
    role: str  # "baseline" or "candidate"
    rev: str
    sha: str
    source_dirty: bool = False
    dirty_paths: tuple[str, ...] = ()
    own_definitions: Mapping[str, str] | None = None  # case id -> definition sha, own table
    own_table_note: str = ""
    own_compare: Mapping[str, Mapping[str, Any]] | None = None  # case id -> output -> spec
    imports: tuple[ImportResolution, ...] = ()
    setup: tuple[SetupStep, ...] = ()
    cases: Mapping[str, CaseEvidence] = field(default_factory=dict)
    worktree: str = ""
    worktree_removed: bool = True  # False for a kept set-up worktree (see `kept`)
    kept: str = ""  # the set-up worktree kept for the next run (reuse_setup); "" if none
    reused: bool = False  # its setup was reused from an earlier run, not run again
    changed: tuple[str, ...] = ()  # what the cases changed in their own worktree


def case_to_json(case: CaseEvidence) -> dict[str, Any]:
    """Field by field: every value is already JSON-shaped (str, numbers, tuples, flat dicts),
    and dataclasses.asdict's deep copy was most of the cost of writing a large run."""
    data = {f.name: getattr(case, f.name) for f in fields(case)}
    data["outputs"], data["cache"], data["paths"] = (
        dict(case.outputs),
        dict(case.cache),
        dict(case.paths),
    )
    if case.replay is None:
        del data["replay"]  # run.json of a run without replays is as before
    else:
        data["replay"] = case.replay.to_json()
    if not case.replaced:
        del data["replaced"]  # nor of one whose cases kept their folders
    return _without_unknown_cpu(data)


def _without_unknown_cpu(data: dict[str, Any]) -> dict[str, Any]:
    """No `cpu_s` key where it is unknown: run.json of older runs reads the same."""
    if data.get("cpu_s", 0) is None:
        del data["cpu_s"]
    return data


def side_to_json(side: SideEvidence) -> dict[str, Any]:
    data = asdict(replace(side, cases={}))
    data["cases"] = {k: case_to_json(v) for k, v in side.cases.items()}
    return data


def side_from_json(data: Mapping[str, Any]) -> SideEvidence:
    cases = {
        k: CaseEvidence(
            **{
                **v,
                "status": CaseStatus(v["status"]),
                "missing_outputs": tuple(v["missing_outputs"]),
                "cache_preexisting": tuple(v["cache_preexisting"]),
                "links": tuple(v.get("links", ())),
                "leftover": tuple(v.get("leftover", ())),
                "unexpected": tuple(v.get("unexpected", ())),
                "output_problems": tuple(v.get("output_problems", ())),
                "replay": Replay.from_json(v.get("replay")),
                "replaced": tuple(v.get("replaced", ())),
            }
        )
        for k, v in data["cases"].items()
    }
    return SideEvidence(
        **{
            **data,
            "dirty_paths": tuple(data["dirty_paths"]),
            "changed": tuple(data.get("changed", ())),
            "imports": tuple(ImportResolution(**i) for i in data["imports"]),
            "setup": tuple(
                SetupStep(**{**s, "status": ProcStatus(s["status"])}) for s in data["setup"]
            ),
            "cases": cases,
        }
    )
