"""Predictions: the move set stated before measuring, so that the result can falsify it.

A prediction names case ids and `tag:` selectors; every other case is predicted unchanged.
It is read from the harness, like the case table, and recorded with its sha256 and git
blob id, so that a prediction edited after the run cannot pass silently.
"""

from __future__ import annotations

import enum
import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from fidelity import schema
from fidelity.errors import UsageError
from fidelity.matrix.verdict import accept
from fidelity.matrix.verdict.accept import Allowance, Settled
from fidelity.matrix.verdict.compare import FAILURES, CaseResult, Comparison, Verdict
from fidelity.matrix.verdict.evidence import ReplayVerdict


@dataclass(frozen=True, slots=True)
class Prediction:
    path: str
    why: str
    selectors: tuple[str, ...]
    moved: frozenset[str]  # the selectors resolved to case ids
    sha256: str
    blob: str | None = None  # git blob id of the bytes read
    committed: bool = True  # the bytes are what the harness revision holds at `path`
    text: str = ""
    fixed: frozenset[str] = frozenset()  # fail at the baseline, run at the candidate
    broken: frozenset[str] = frozenset()  # run at the baseline, fail at the candidate
    unchanged: frozenset[str] = frozenset()  # named unchanged (all unnamed cases are too)
    failing: frozenset[str] = frozenset()  # fail the same way on both sides, known
    findings: tuple[Allowance, ...] = ()  # expected findings, each with its reason
    replay: Mapping[str, str] = field(default_factory=dict)  # case id -> candidate's replay
    stated: str | None = None  # the commit that last changed it in the candidate's history
    late: str = ""  # why it was not stated before the change it predicts (`ontime`)

    def expected_verdicts(self) -> dict[str, str]:
        """case id -> the verdict predicted for it, for every case a key names."""
        said = dict.fromkeys(self.unchanged, "unchanged")
        said |= dict.fromkeys(self.moved, Verdict.MOVED.value)
        said |= dict.fromkeys(self.fixed, Verdict.BASELINE_FAILED.value)
        said |= dict.fromkeys(self.broken, Verdict.CANDIDATE_ONLY_FAILED.value)
        said |= dict.fromkeys(self.failing, Verdict.BOTH_FAILED.value)
        return said


class PredictionError(UsageError):
    """An invalid prediction file, or a selector that matches no case."""


KEYS = ("moved", "fixed", "broken", "unchanged", "failing")


def parse(data: bytes, path: str) -> dict[str, Any]:
    """The prediction's body, schema-checked; PredictionError names the file and JSON path."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PredictionError(f"invalid prediction {path}: {exc}") from exc
    problems = schema.errors("prediction", raw)
    body = raw.get("prediction", {}) if isinstance(raw.get("prediction"), dict) else {}
    for i, entry in enumerate(body.get("findings", ()) if not problems else ()):
        why = accept.problem(entry["finding"], table=False)
        if why:
            problems.append((("prediction", "findings", i, "finding"), why))
    if problems:
        lines = "\n".join(f"  at {schema.json_path(p)}: {m}" for p, m in problems)
        raise PredictionError(f"invalid prediction {path}:\n{lines}")
    result: dict[str, Any] = raw["prediction"]
    return result


def resolve(
    selectors: Sequence[str], tags: Mapping[str, Sequence[str]], path: str
) -> frozenset[str]:
    """Case ids named by the selectors; a selector that matches no case is an error."""
    moved: set[str] = set()
    for selector in selectors:
        if selector.startswith("tag:"):
            hit = {cid for cid, case_tags in tags.items() if selector[4:] in case_tags}
        else:
            hit = {selector} if selector in tags else set()
        if not hit:
            known = ", ".join(sorted({t for ts in tags.values() for t in ts})) or "none"
            raise PredictionError(
                f"{path}: selector {selector!r} matches no case of the table; known tags: {known}"
            )
        moved |= hit
    return frozenset(moved)


def load(
    data: bytes, path: str, tags: Mapping[str, Sequence[str]], blob: str | None, committed: bool
) -> Prediction:
    body = parse(data, path)
    named = {key: resolve(body.get(key, ()), tags, f"{path} ({key})") for key in KEYS}
    for i, key in enumerate(KEYS):
        for other in KEYS[i + 1 :]:
            both = sorted(named[key] & named[other])
            if both:
                raise PredictionError(
                    f"{path}: {', '.join(both)} predicted both {key} and {other}; a case has "
                    "one predicted verdict"
                )
    expected = tuple(Allowance.parse(f) for f in body.get("findings", ()))
    for case_id in body.get("replay", {}):
        if case_id not in tags:
            raise PredictionError(f"{path}: replay names no case of the table: {case_id!r}")
    for allowance in expected:
        if allowance.case is not None and allowance.case not in tags:
            raise PredictionError(f"{path}: expected finding {allowance.label()} names no case")
    return Prediction(
        path=path,
        why=body["why"],
        selectors=tuple(body.get("moved", ())),
        moved=named["moved"],
        sha256=hashlib.sha256(data).hexdigest(),
        blob=blob,
        committed=committed,
        text=data.decode("utf-8"),
        fixed=named["fixed"],
        broken=named["broken"],
        unchanged=named["unchanged"],
        failing=named["failing"],
        findings=expected,
        replay=dict(body.get("replay", {})),
    )


class Held(enum.StrEnum):
    HELD = "HELD"
    FALSIFIED = "FALSIFIED"
    UNTRUSTED = "UNTRUSTED"


@dataclass(frozen=True, slots=True)
class PredictionVerdict:
    verdict: Held
    predicted: tuple[str, ...]
    moved: tuple[str, ...]
    confirmed: tuple[str, ...]  # moved, fixed or broken, as predicted
    unexpected: tuple[str, ...]  # moved, not predicted
    missed: tuple[str, ...]  # predicted to move, be fixed or broken, and did not
    failed: tuple[str, ...]  # failed on either side, not as predicted
    exit_code: int
    expected: tuple[str, ...] = ()  # expected findings that occurred
    unmet: tuple[str, ...] = ()  # expected findings that did not occur


def judge(comparison: Comparison, prediction: Prediction, settled: Settled) -> PredictionVerdict:
    """HELD exactly when every case did what was predicted of it (moved, fixed, broken, or
    else unchanged), every expected finding occurred and no other finding is left."""
    said = prediction.expected_verdicts()
    moved = {r.case_id for r in comparison.cases if r.verdict is Verdict.MOVED}
    predicted = set(prediction.moved)
    as_said = {r.case_id for r in comparison.cases if _as_said(r, said)}
    changing = predicted | prediction.fixed | prediction.broken | prediction.failing
    failed = tuple(
        r.case_id
        for r in comparison.cases
        if r.verdict in FAILURES and r.case_id not in as_said | settled.known
    )
    replays = _replays(comparison, prediction.replay)
    failed += tuple(c for c in replays["failed"] if c not in failed)
    missed = tuple(sorted((changing - as_said) | replays["missed"]))
    unmet = tuple(a.label() for a in settled.unmet)
    if settled.findings or comparison.summary.compared == 0:
        verdict, code = Held.UNTRUSTED, 3
    elif not (moved - predicted) and not missed and not failed and not unmet:
        verdict, code = Held.HELD, 0
    else:
        verdict, code = Held.FALSIFIED, 1
    return PredictionVerdict(
        verdict=verdict,
        predicted=tuple(sorted(changing | set(prediction.replay))),
        moved=tuple(sorted(moved)),
        confirmed=tuple(sorted((as_said & changing) | replays["confirmed"])),
        unexpected=tuple(sorted(moved - predicted)),
        missed=missed,
        failed=failed,
        exit_code=code,
        expected=tuple(a.label() for _, a in settled.expected),
        unmet=unmet,
    )


def _as_said(result: CaseResult, said: Mapping[str, str]) -> bool:
    """The case got its predicted verdict; a both-sides failure only when both sides failed
    the same way (a failure that changed kind is a move)."""
    if said.get(result.case_id) != result.verdict.value:
        return False
    return result.verdict is not Verdict.BOTH_FAILED or bool(result.same_failure)


def _replays(comparison: Comparison, said: Mapping[str, str]) -> dict[str, set[str]]:
    """Cases whose candidate replayed as predicted (confirmed) or not (missed), and the
    unnamed ones whose replay failed on a side (failed, not as predicted)."""
    found: dict[str, set[str]] = {"confirmed": set(), "missed": set(), "failed": set()}
    compared = {r.case_id for r in comparison.cases}
    found["missed"] |= {case_id for case_id in said if case_id not in compared}
    for r in comparison.cases:
        verdicts = dict(r.replay)
        if r.case_id in said:
            hit = verdicts.get("candidate") == said[r.case_id]
            found["confirmed" if hit else "missed"].add(r.case_id)
        elif any(ReplayVerdict(v).bad for v in verdicts.values()):
            found["failed"].add(r.case_id)
    return found


def to_json(prediction: Prediction | None) -> dict[str, Any] | None:
    if prediction is None:
        return None
    data = asdict(prediction)
    for key in KEYS:
        data[key] = sorted(getattr(prediction, key))
    data["findings"] = [a.to_json() for a in prediction.findings]
    data["replay"] = dict(prediction.replay)
    return data


def from_json(data: Mapping[str, Any] | None) -> Prediction | None:
    if data is None:
        return None
    sets = {key: frozenset(data.get(key, ())) for key in KEYS}
    found = tuple(Allowance.from_json(a) for a in data.get("findings", ()))
    return Prediction(
        **{
            **data,
            **sets,
            "selectors": tuple(data["selectors"]),
            "findings": found,
            "replay": dict(data.get("replay", {})),
        }
    )
