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
from dataclasses import asdict, dataclass
from typing import Any

from fidelity import schema
from fidelity.errors import UsageError
from fidelity.matrix.compare import FAILURES, Comparison, Verdict
from fidelity.matrix.findings import Finding


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


class PredictionError(UsageError):
    """An invalid prediction file, or a selector that matches no case."""


def parse(data: bytes, path: str) -> tuple[str, tuple[str, ...]]:
    """The prediction's why and selectors; PredictionError names the file and JSON path."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PredictionError(f"invalid prediction {path}: {exc}") from exc
    problems = schema.errors("prediction", raw)
    if problems:
        lines = "\n".join(f"  at {schema.json_path(p)}: {m}" for p, m in problems)
        raise PredictionError(f"invalid prediction {path}:\n{lines}")
    body = raw["prediction"]
    return body["why"], tuple(body["moved"])


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
    why, selectors = parse(data, path)
    return Prediction(
        path=path,
        why=why,
        selectors=selectors,
        moved=resolve(selectors, tags, path),
        sha256=hashlib.sha256(data).hexdigest(),
        blob=blob,
        committed=committed,
        text=data.decode("utf-8"),
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
    confirmed: tuple[str, ...]  # moved, as predicted
    unexpected: tuple[str, ...]  # moved, not predicted
    missed: tuple[str, ...]  # predicted, did not move
    failed: tuple[str, ...]  # failed on either side: no verdict on their movement
    exit_code: int


def judge(
    comparison: Comparison, predicted: frozenset[str], findings: Sequence[Finding]
) -> PredictionVerdict:
    """HELD exactly when the moved set equals the predicted set, nothing failed, no findings."""
    moved = {r.case_id for r in comparison.cases if r.verdict is Verdict.MOVED}
    failed = tuple(r.case_id for r in comparison.cases if r.verdict in FAILURES)
    if findings or comparison.summary.compared == 0:
        verdict, code = Held.UNTRUSTED, 3
    elif moved == predicted and not failed:
        verdict, code = Held.HELD, 0
    else:
        verdict, code = Held.FALSIFIED, 1
    return PredictionVerdict(
        verdict=verdict,
        predicted=tuple(sorted(predicted)),
        moved=tuple(sorted(moved)),
        confirmed=tuple(sorted(moved & predicted)),
        unexpected=tuple(sorted(moved - predicted)),
        missed=tuple(sorted(predicted - moved)),
        failed=failed,
        exit_code=code,
    )


def to_json(prediction: Prediction | None) -> dict[str, Any] | None:
    if prediction is None:
        return None
    data = asdict(prediction)
    data["moved"] = sorted(prediction.moved)
    return data


def from_json(data: Mapping[str, Any] | None) -> Prediction | None:
    if data is None:
        return None
    return Prediction(
        **{**data, "selectors": tuple(data["selectors"]), "moved": frozenset(data["moved"])}
    )
