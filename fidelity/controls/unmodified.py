"""The unmodified tree under each command the chosen controls use: run once, traced so that
each control can select its tests, with the ids it collected; or, when an earlier run of the
same tree, command and environment passed, its trace read back (`reuse`).
"""

from __future__ import annotations

import enum
import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.controls import reuse
from fidelity.controls.lane import Job, Lane, Tree, edited_files
from fidelity.controls.lanes import Lanes
from fidelity.controls.runner import is_pytest
from fidelity.controls.selection import Trace, parse_trace
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.verdict import TreeRun
from fidelity.git import objects

UNMODIFIED_TIMEOUT_S = 3600.0


class Tracing(enum.Enum):
    """How the unmodified tree is traced for the controls' selection."""

    NONE = "none"  # `--full`: every control runs every test, nothing reads a trace
    FRESH = "fresh"  # traced now (and kept for later runs)
    REUSE = "reuse"  # a kept trace of the same tree, command and environment, else FRESH;
    # only where a no-op control runs all of that command's tests again now


@dataclass(frozen=True, slots=True)
class Unmodified:
    """The unmodified tree under one command: its run, its trace, what it collected."""

    command: tuple[str, ...]
    run: TreeRun
    trace: Trace | None
    collected: tuple[str, ...] | None
    reused: str = ""  # the earlier run directory its trace came from (`reuse`)


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _unmodified_one(
    lane: Lane,
    table: ControlTable,
    command: tuple[str, ...],
    expected: list[str],
    log: Path,
    *,
    traced: bool = True,
    reuse_key: str = "",
    fresh: bool = False,
    serve: bool = False,
    probe: Mapping[str, Sequence[str]] | None = None,
) -> Unmodified:
    probe = probe or {}
    kept = reuse.find(log.parent, reuse_key) if reuse_key and not fresh else None
    if kept is not None and _covers(kept.trace, probe):
        kept_trace = parse_trace(kept.trace) if kept.trace is not None else None
        listed = tuple(kept.collected) if kept.collected is not None else None
        return Unmodified(command, kept.run, kept_trace, listed, reused=kept.source.name)
    noop = replace(table.noop(), command=command)
    # serve: the run is the first child of a collected server, which then serves the
    # controls under this command in this lane (`Job.traced`), and traces by probes
    serve = serve and traced and is_pytest(command)
    kinds = ("trace", "expect", "collected") if traced else ("expect", "collected")
    kinds = (*kinds, "probe") if serve else kinds
    files = {k: log.with_suffix(f".{k}.json") for k in kinds}
    files["expect"].write_text(json.dumps(expected))
    if serve:
        files["probe"].write_text(json.dumps({f: list(probe[f]) for f in sorted(probe)}))
    env = {f"FIDELITY_{k.upper()}": str(p) for k, p in files.items()}
    timeout = table.timeout_s or UNMODIFIED_TIMEOUT_S
    job = Job(noop, log, timeout, env=env if is_pytest(command) else {})
    run = lane.run(replace(job, swap=serve, collect=serve, traced=serve))
    trace = _read_json(files["trace"]) if traced else None
    collected = _read_json(files["collected"])
    if reuse_key and isinstance(trace, dict):
        reuse.record(log.parent, reuse_key, log, run)
    return Unmodified(
        command,
        run,
        parse_trace(trace) if isinstance(trace, dict) else None,
        tuple(collected) if isinstance(collected, list) else None,
    )


def runs(
    lanes: Lanes,
    table: ControlTable,
    chosen: Sequence[Control],
    logs: Path,
    *,
    tracing: Tracing = Tracing.FRESH,
    serve: bool = False,
    statements: Mapping[str, Sequence[str]] | None = None,
) -> dict[tuple[str, ...], Unmodified]:
    """The unmodified tree under each command the chosen controls use, traced as `tracing`
    says; a trace made now is kept for later runs under the no-op control's command. With
    `serve`, a traced pytest run is a collected server's first child (`Job.traced`)."""
    commands = list(dict.fromkeys(c.command for c in chosen)) or [table.command]
    # only the no-op control's command: the no-op runs all of its tests again now
    again = table.command if table.command in commands else commands[0]
    traced = tracing is not Tracing.NONE
    keys = _reuse_keys(lanes.tree, [again]) if traced else {}
    tasks: list[Callable[[Lane], Unmodified]] = []
    for i, command in enumerate(commands, 1):
        expected = list(
            dict.fromkeys(t for c in chosen if c.command == command for t in c.caught_by)
        )
        log = logs / f"_unmodified-{i}.log"
        tasks.append(
            functools.partial(
                _unmodified_one,
                table=table,
                command=command,
                expected=expected,
                log=log,
                traced=traced,
                reuse_key=keys.get(command, ""),
                fresh=tracing is not Tracing.REUSE,
                serve=serve,
                probe={
                    f: sorted((statements or {}).get(f, ()))
                    for c in chosen
                    if c.command == command
                    for f in edited_files(c)
                },
            )
        )
    found = lanes.map(tasks)
    return {u.command: u for u in found}


def _covers(trace: object, probe: Iterable[str]) -> bool:
    """Whether a kept trace follows every Python file probe names: one made by probes holds
    the functions of the files it probed alone (`fidelity_probe`); other files are selected
    by what was opened, which every trace holds."""
    probed = trace.get("probed") if isinstance(trace, dict) else None
    return probed is None or {p for p in probe if p.endswith(".py")} <= set(probed)


def _reuse_keys(tree: Tree, commands: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Each command's `reuse` key for the tree under test."""
    tree_id, env = objects.tree_of(tree.repo, tree.sha), reuse.environment()
    return {c: reuse.key(tree_id, tree.table, c, tree.names, env) for c in commands}


def reused_note(u: Unmodified) -> str:
    return (
        f"the unmodified tree was not traced again under {' '.join(u.command)!r}: the same "
        f"tree, command and environment passed in run {u.reused} ({len(u.run.tests)} tests, "
        f"{u.run.duration_s:.1f} s), whose trace selects the tests; the no-op control runs "
        "all of them again now (--fresh traces the tree again)"
    )
