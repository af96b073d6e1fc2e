"""The unmodified tree's traced run, reused by a later `controls run` of the same tree.

Tracing every call of the unmodified tree is most of a controls run's fixed cost, and an
author who runs the controls again (one more `--only`, an edited table) runs the same tree
again. A passing traced run is recorded in its run directory (`unmodified.json`) under a key
of everything that decides it: the tree (not the commit), the command, the table's `env`
and `setup`, the import guard's names, the interpreter and every installed distribution,
and fidelity's own version and plugins. A later run with the same key reads the trace and
the collected ids from there instead of running the tree again. Passing is not taken on
trust: the no-op control runs every test of the tree as it is now, and a failure there is
exit 3 as before. An environment variable the tests read is not in the key; `--fresh` runs
the tree again.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity.controls.table import ControlTable
from fidelity.controls.verdict import RunStatus, TreeRun

INDEX = "unmodified.json"
LOOKED_AT = 30  # newest kept run directories searched


@dataclass(frozen=True, slots=True)
class Kept:
    """A passing traced run of the same tree and command, from an earlier run directory."""

    run: TreeRun
    trace: dict[str, Any] | None
    collected: list[str] | None
    source: Path  # the run directory it came from


def environment() -> str:
    """The interpreter and every distribution it can import, as one digest: the names of
    the `*.dist-info`, `*.egg-info` and `.pth` entries on its path, which carry each
    version (reading every distribution's metadata instead cost 0.1 s per run)."""
    suffixes = (".dist-info", ".egg-info", ".pth")
    dists = sorted(
        entry.name
        for folder in sys.path
        if folder and Path(folder).is_dir()
        for entry in Path(folder).iterdir()
        if entry.suffix in suffixes
    )
    plugins = Path(__file__).resolve().parents[1] / "plugins"
    own = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(plugins.glob("*.py"))]
    text = json.dumps([sys.executable, sys.version, dists, own])
    return hashlib.sha256(text.encode()).hexdigest()


def key(
    tree: str,
    table: ControlTable,
    command: Sequence[str],
    guard: Sequence[str],
    env_digest: str,
) -> str:
    from fidelity import __version__

    parts = [
        tree,
        list(command),
        sorted(table.env.items()),
        [list(s) for s in table.setup],
        list(guard),
        env_digest,
        __version__,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def record(logs: Path, key: str, log: Path, run: TreeRun) -> None:
    """Note a passing traced run in its run directory, for later runs to find."""
    if run.status is not RunStatus.PASSED:
        return
    index = logs / INDEX
    entries = _read(index)
    entries[key] = {
        "log": log.name,
        "tests": sorted(run.tests),
        "duration_s": run.duration_s,
    }
    index.write_text(json.dumps(entries), encoding="utf-8")


def find(logs: Path, key: str) -> Kept | None:
    """The newest kept run directory beside logs that recorded key, read back."""
    siblings = sorted((p for p in logs.parent.iterdir() if p.is_dir() and p != logs), reverse=True)
    for folder in siblings[:LOOKED_AT]:
        entry = _read(folder / INDEX).get(key)
        if not isinstance(entry, dict):
            continue
        kept = _load(folder, entry)
        if kept is not None:
            return kept
    return None


def _load(folder: Path, entry: dict[str, Any]) -> Kept | None:
    log = folder / str(entry.get("log", ""))
    trace = _json(log.with_suffix(".trace.json"))
    collected = _json(log.with_suffix(".collected.json"))
    tests = entry.get("tests")
    if not isinstance(trace, dict) or not isinstance(tests, list):
        return None  # gone or damaged: run the tree again
    run = TreeRun(
        RunStatus.PASSED,
        tests=frozenset(str(t) for t in tests),
        duration_s=float(entry.get("duration_s") or 0.0),
        mode="reused",
    )
    listed = [str(i) for i in collected] if isinstance(collected, list) else None
    return Kept(run, trace, listed, folder)


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read(index: Path) -> dict[str, Any]:
    data = _json(index)
    return data if isinstance(data, dict) else {}
