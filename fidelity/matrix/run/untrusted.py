"""A run directory's JSON files read as untrusted input: whole, of the run schema, and
consistent in what a schema cannot say, before any of their values is used.

A run directory travels (a CI artifact, a copy, a disk that filled up) and anyone can edit
it, so `compare`, `verify`, `merge`, `--shard-durations` and `--resume` read run.json,
plan.json, side.json and evidence.jsonl through here. A damaged run.json is a located error
(file, JSON path, what is wrong) with exit 3: the evidence it carries cannot be trusted, and
only running the gate again makes new evidence. The ledger files of an interrupted run are
checked the same way; a damaged one only makes `--resume` run its case or side again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fidelity import schema
from fidelity.errors import UntrustedError

SHOWN = 5  # problems named in one message
Problem = tuple[Sequence[str | int], str]


class DamagedRunError(UntrustedError):
    """run.json cannot be read back as `fidelity run` wrote it: exit 3, located."""

    def __init__(self, path: Path, problems: Sequence[Problem] | str) -> None:
        if isinstance(problems, str):
            said = problems
        else:
            said = "; ".join(f"at {schema.json_path(p)}: {m}" for p, m in problems[:SHOWN])
            if len(problems) > SHOWN:
                said += f" (+{len(problems) - SHOWN} more)"
        super().__init__(
            f"{path}: {said}. The run directory is damaged or was edited, so its evidence "
            "cannot be judged again; run `fidelity run` again (or restore the directory from "
            "where it was copied)"
        )


def load(path: Path, constants: list[str] | None = None) -> Any:
    """The JSON document in path; DamagedRunError when it is not UTF-8 JSON (line:col).
    The NaN and Infinity the parser meets (`NaN`, `Infinity`, or a number too large for a
    float, `1e999`) are added to `constants` when it is given."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DamagedRunError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedRunError(path, f"not UTF-8 at byte {exc.start}") from exc
    try:
        if constants is None:
            return json.loads(text)

        def number(spelled: str) -> float:  # NaN, Infinity, and 1e999, read as inf
            value = float(spelled)
            if not math.isfinite(value):
                constants.append(spelled)
            return value

        return json.loads(text, parse_constant=number, parse_float=number)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise DamagedRunError(path, f"not valid JSON at {where}: {exc.msg}") from exc
    except (ValueError, RecursionError) as exc:  # a number too long, nesting too deep
        raise DamagedRunError(path, f"not valid JSON: {exc}") from exc


def _non_finite(data: Any) -> Iterator[Problem]:
    """NaN and Infinity, which Python's json reads but JSON has not: iteratively, since a
    document may nest as deep as the parser allowed."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            yield where, f"{value} is not a number JSON allows"
        elif isinstance(value, dict):
            stack += [((*where, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [((*where, i), v) for i, v in enumerate(value)]


def _sides(sides: Mapping[str, Any]) -> Iterator[Problem]:
    for role, side in sides.items():
        if side["role"] != role:
            yield ("sides", role, "role"), f"{side['role']!r} under {role!r}"
        for key, case in side["cases"].items():
            if case["case_id"] != key:
                where = ("sides", role, "cases", key, "case_id")
                yield where, f"{case['case_id']!r} under {key!r}"


def _consistent(data: Mapping[str, Any]) -> Iterator[Problem]:
    """What the schema cannot say: each side and case stored under its own name, each case
    declared once, a shard K of N with K <= N."""
    yield from _sides(data["sides"])
    seen: set[str] = set()
    for i, case in enumerate(data["matrix"]["cases"]):
        if case["id"] in seen:
            yield ("matrix", "cases", i, "id"), f"case {case['id']!r} is declared twice"
        seen.add(case["id"])
    shard = (data.get("selection") or {}).get("shard")
    if shard and shard[0] > shard[1]:
        yield ("selection", "shard"), f"shard {shard[0]} of {shard[1]} does not exist"


def problems(data: Any, *, non_finite: bool = True) -> list[Problem]:
    """Every reason `data` is not a run.json this fidelity can judge; [] when it is one.
    `non_finite=False`: the parser met no NaN or Infinity, so none is looked for."""
    if not isinstance(data, dict):
        return [((), f"must be an object, not {type(data).__name__}")]
    found = list(_non_finite(data)) if non_finite else []
    found += schema.errors("run", data)
    return found or list(_consistent(data))


def read_run(path: Path) -> dict[str, Any]:
    """run.json, checked; DamagedRunError names the file and JSON path of each problem."""
    constants: list[str] = []
    data = load(path, constants)
    found = problems(data, non_finite=bool(constants))  # the walk: 13 ms of 200 cases
    if found:
        raise DamagedRunError(path, found)
    result: dict[str, Any] = data
    return result


def part(path: Path, definition: str) -> dict[str, Any] | None:
    """A ledger file (a side's side.json; a case's evidence.json, as fidelity wrote it
    before evidence.jsonl), or None when it is missing or damaged: `--resume` then runs
    that case or side again."""
    try:
        data = load(path)
    except DamagedRunError:
        return None
    return _checked(data, definition)


def _checked(data: Any, definition: str) -> dict[str, Any] | None:
    if not isinstance(data, dict) or list(_non_finite(data)):
        return None
    if schema.part_errors("run", definition, data):
        return None
    return data


def lines(path: Path, definition: str) -> list[dict[str, Any]]:
    """The entries of a JSON-lines ledger (a side's evidence.jsonl) that are whole and of
    the definition, in order; a damaged or cut-short line is skipped, so `--resume` runs
    its case again. No file: none."""
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    found = []
    for line in raw.split(b"\n"):
        try:
            data = json.loads(line.decode("utf-8")) if line.strip() else None
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        entry = _checked(data, definition) if data is not None else None
        if entry is not None:
            found.append(entry)
    return found


def plan_problems(data: Any) -> list[Problem]:
    """Why plan.json is not a plan `fidelity run --resume` can continue; [] when it is one."""
    if not isinstance(data, dict):
        return [((), f"must be an object, not {type(data).__name__}")]
    return list(_non_finite(data)) or schema.part_errors("run", "plan", data)
