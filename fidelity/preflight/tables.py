"""Gates over TOML and JSON tables: the case table, the control table and its edit anchors,
prediction files, failing-set baselines. Each is read from the judged content and checked
by the capability's own validator; nothing is run."""

from __future__ import annotations

import fnmatch
import json
import posixpath
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from fidelity import config
from fidelity.errors import UsageError
from fidelity.git import patches, stage
from fidelity.preflight.context import Context, Plan, skip_unchanged, skip_unconfigured
from fidelity.preflight.outcome import GateResult, Status
from fidelity.preflight.settings import DEFAULT_FAILSET
from fidelity.text import counted


def _problems(exc: UsageError) -> tuple[str, ...]:
    """The located problem lines of a validator's error, one per detail line."""
    lines = [line.strip() for line in str(exc).splitlines()]
    return tuple(line for line in lines[1:] if line) or (lines[0],)


def _missing(ctx: Context, gate: str, path: str) -> GateResult:
    return GateResult(
        gate, Status.FAILED, f"{path} is configured but not in {ctx.tree.label}; add it"
    )


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TableFile:
    """A table at a `[tool.fidelity]` path setting, judged by gate `gate`: the case table
    (gate cases) and the control table (gate controls)."""

    gate: str
    key: str  # the path setting of [tool.fidelity]
    default: str
    noun: str

    def path(self, ctx: Context) -> str:
        return ctx.path_setting(self.key, self.default)

    def present(self, ctx: Context) -> bool:
        """Configured, or at its default path in the judged content."""
        return self.key in ctx.tool or ctx.tree.exists(self.path(ctx))

    def plan(self, ctx: Context) -> Plan | None:
        """Off when it is not present; runs when it or the configuration changed; None when
        neither decides."""
        path = self.path(ctx)
        if not self.present(ctx):
            return skip_unconfigured(f"no {self.noun} ({path})")
        if ctx.changes.touched(path) or ctx.config_touched():
            return Plan(f"{path} changed")
        return None

    def parse(self, ctx: Context, reader: Callable[[bytes, str], T]) -> T | GateResult:
        """The table parsed from the judged content, or the gate's failure saying why not."""
        path = self.path(ctx)
        data = ctx.tree.read(path)
        if data is None:
            return _missing(ctx, self.gate, path)
        try:
            return reader(data, path)
        except UsageError as exc:
            return GateResult(
                self.gate, Status.FAILED, f"{path}: invalid {self.noun}", _problems(exc)
            )


CASE_TABLE = TableFile("cases", "cases", config.DEFAULT_CASES, "case table")
CONTROL_TABLE = TableFile("controls", "controls", config.DEFAULT_CONTROLS, "control table")


# --- cases ---


def plan_cases(ctx: Context) -> Plan:
    return CASE_TABLE.plan(ctx) or skip_unchanged(f"{CASE_TABLE.path(ctx)} unchanged")


def check_cases(ctx: Context) -> GateResult:
    from fidelity.matrix.cases import table

    matrix = CASE_TABLE.parse(ctx, table.parse)
    if isinstance(matrix, GateResult):
        return matrix
    path = CASE_TABLE.path(ctx)
    return GateResult("cases", Status.OK, f"{path}: valid, {counted(len(matrix.cases), 'case')}")


# --- controls ---


def edit_targets(data: bytes | None) -> set[str]:
    """The files a control table's edits name, read leniently (validity is the gate's job)."""
    try:
        raw = tomllib.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    controls = raw.get("control", [])
    edits = (e for c in controls if isinstance(c, dict) for e in _as_list(c.get("edit")))
    return {e["file"] for e in edits if isinstance(e, dict) and isinstance(e.get("file"), str)}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def plan_controls(ctx: Context) -> Plan:
    decided = CONTROL_TABLE.plan(ctx)
    if decided is not None:
        return decided
    path = CONTROL_TABLE.path(ctx)
    hit = sorted(f for f in edit_targets(ctx.tree.read(path)) if ctx.changes.touched(f))
    if hit:
        more = f" and {len(hit) - 1} more" if len(hit) > 1 else ""
        return Plan(f"{hit[0]}{more} changed: the anchors of the controls editing it")
    return skip_unchanged(f"neither {path} nor a file its controls edit changed")


def _anchor_problems(ctx: Context, control: Any) -> Iterator[str]:
    """Why a control's edits would not apply to the judged content (find: exactly once, in
    order, as the runner applies them; patch: `git apply --check` on the unedited files)."""
    from fidelity.controls.edit import replace_once

    texts: dict[str, str] = {}
    for edit in control.edits:
        if edit.patch is not None:
            why = patches.apply_check(ctx.tree.folder(), edit.patch.encode())
            if why:
                yield f"control {control.id!r}: patch for {edit.file} does not apply: {why}"
            continue
        if edit.file not in texts:
            data = ctx.tree.read(edit.file)
            if data is None:
                yield f"control {control.id!r}: {edit.file}: no such file in {ctx.tree.label}"
                return
            try:
                texts[edit.file] = data.decode("utf-8")
            except UnicodeDecodeError:
                yield f"control {control.id!r}: {edit.file}: not UTF-8 text; use a patch edit"
                return
        new, why = replace_once(texts[edit.file], edit.find or "", edit.replace or "")
        if why:
            yield f"control {control.id!r}: {edit.file}: {why}"
            return
        texts[edit.file] = new


def check_controls(ctx: Context) -> GateResult:
    from fidelity.controls import table

    parsed = CONTROL_TABLE.parse(ctx, table.parse)
    if isinstance(parsed, GateResult):
        return parsed
    path, controls = CONTROL_TABLE.path(ctx), parsed.controls
    problems = tuple(p for c in controls for p in _anchor_problems(ctx, c))
    edits = sum(len(c.edits) for c in controls)
    if problems:
        summary = f"{path}: {len(problems)} of {counted(len(controls), 'control')} would not apply"
        return GateResult("controls", Status.FAILED, summary, problems)
    valid = counted(len(controls), "control")
    summary = f"{path}: valid, {valid}; {counted(edits, 'edit')}, every one applies"
    return GateResult("controls", Status.OK, summary)


# --- predictions ---


def _prediction_globs(ctx: Context) -> tuple[str, ...]:
    """The configured globs, else `predict*.toml` beside the case table (README's recipe)."""
    if ctx.settings.predictions:
        return ctx.settings.predictions
    folder = posixpath.dirname(CASE_TABLE.path(ctx))
    return (posixpath.join(folder, "predict*.toml"),)


def _prediction_files(ctx: Context) -> list[str]:
    """The prediction files to judge: those that changed, or all of them when the case table
    (which their selectors name) changed."""
    globs = _prediction_globs(ctx)
    cases_changed = ctx.changes.touched(CASE_TABLE.path(ctx)) or ctx.config_touched()
    pool = _all_paths(ctx) if cases_changed else sorted(ctx.changes.changed)
    return [p for p in pool if any(fnmatch.fnmatchcase(p, g) for g in globs) and ctx.tree.exists(p)]


def _all_paths(ctx: Context) -> list[str]:
    if ctx.tree.staged:
        return sorted(stage.index_entries(ctx.repo, ctx.tree.index))
    return sorted(set(stage.index_entries(ctx.repo)) | stage.unstaged_paths(ctx.repo))


def plan_predictions(ctx: Context) -> Plan:
    if not CASE_TABLE.present(ctx):
        why = f"no case table ({CASE_TABLE.path(ctx)}) to resolve selectors against"
        return skip_unconfigured(why)
    files = _prediction_files(ctx)
    if files:
        return Plan(f"{len(files)} prediction files to judge")
    globs = ", ".join(_prediction_globs(ctx))
    return skip_unchanged(f"no prediction file ({globs}) changed")


def check_predictions(ctx: Context) -> GateResult:
    from fidelity.matrix.cases import table
    from fidelity.matrix.verdict import predict

    path = CASE_TABLE.path(ctx)
    data = ctx.tree.read(path)
    if data is None:
        return _missing(ctx, "predictions", path)
    try:
        tags = {c.id: c.tags for c in table.parse(data, path).cases}
    except UsageError:
        why = f"the case table {path} is invalid (see the cases gate): selectors cannot resolve"
        return GateResult("predictions", Status.FAILED, why)
    files = _prediction_files(ctx)
    problems: list[str] = []
    for name in files:
        try:
            predict.load(ctx.tree.read(name) or b"", name, tags, None, committed=True)
        except UsageError as exc:
            problems += [f"{name}: {p}" if not p.startswith(name) else p for p in _problems(exc)]
    if problems:
        return GateResult(
            "predictions",
            Status.FAILED,
            f"{counted(len(problems), 'problem')} in prediction files",
            tuple(problems),
        )
    return GateResult(
        "predictions", Status.OK, f"{len(files)} prediction files valid against {path}"
    )


# --- failset ---


def _baselines(ctx: Context) -> list[str]:
    if ctx.settings.failset:
        return list(ctx.settings.failset)
    return [DEFAULT_FAILSET] if ctx.tree.exists(DEFAULT_FAILSET) else []


def plan_failset(ctx: Context) -> Plan:
    paths = _baselines(ctx)
    if not paths:
        return skip_unconfigured(f"no failing-set baseline ({DEFAULT_FAILSET})")
    touched = [p for p in paths if ctx.changes.touched(p)]
    if touched:
        return Plan(f"{', '.join(touched)} changed")
    return skip_unchanged(f"{', '.join(paths)} unchanged")


def baseline_problems(data: bytes, path: str) -> list[str]:
    """Why bytes are not a valid failing-set baseline (the shipped schema's verdict)."""
    from fidelity import schema

    try:
        raw: Mapping[str, Any] = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [f"{path}: not JSON: {exc}"]
    return [f"{path}: at {schema.json_path(p)}: {m}" for p, m in schema.errors("failset", raw)]


def check_failset(ctx: Context) -> GateResult:
    paths = [p for p in _baselines(ctx) if ctx.changes.touched(p)]
    problems: list[str] = []
    for path in paths:
        data = ctx.tree.read(path)
        if data is None:
            problems.append(f"{path}: configured but not in {ctx.tree.label}")
        else:
            problems += baseline_problems(data, path)
    if problems:
        return GateResult("failset", Status.FAILED, "invalid failing-set baseline", tuple(problems))
    return GateResult("failset", Status.OK, f"{', '.join(paths)}: valid baseline")
