"""Where each checked module resolves, with the side's interpreter and environment.

An editable install's meta-path finder precedes every `sys.path` entry, so neither the
working directory nor PYTHONPATH wins against it: a worktree can silently run another
checkout's code. Resolving the module exactly as the cases will run exposes that.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fidelity import proc
from fidelity.matrix.verdict.evidence import ImportResolution

_PROBE = """
import importlib, importlib.util, json, sys

def where(name):
    try:
        spec = importlib.util.find_spec(name)
    except Exception as exc:
        return {"origin": None, "locations": [], "error": f"{type(exc).__name__}: {exc}"}
    if spec is None:
        return {"origin": None, "locations": [], "error": "no module of that name"}
    origin = spec.origin if spec.has_location else None
    return {"origin": origin, "locations": list(spec.submodule_search_locations or []),
            "error": ""}

def forget(name):
    top = name.split(".")[0]
    for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
        del sys.modules[key]
    importlib.invalidate_caches()

names = sys.argv[1:]
cwd_entry = sys.path.pop(0) if sys.path and sys.path[0] == "" else None
bare = {}
for name in names:
    bare[name] = where(name)
    forget(name)
if cwd_entry is not None:
    sys.path.insert(0, cwd_entry)
print(json.dumps({name: {"cwd": where(name), "bare": bare[name]} for name in names}))
"""


def _inside(path: str, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def _places(found: Mapping[str, Any]) -> list[str]:
    return [found["origin"]] if found["origin"] else list(found["locations"])


def classify(
    module: str, cwd: Mapping[str, Any], bare: Mapping[str, Any], root: Path
) -> ImportResolution:
    """Pure: inside when the module's file (or every namespace location) is under root.

    `cwd` is the resolution with the working directory first on sys.path (as for
    `python -m`); `bare` without it (as for a script in a subdirectory, or a subprocess
    started elsewhere). An editable install of another checkout shows up in either.
    """
    if cwd["error"]:
        return ImportResolution(module, None, False, cwd["error"])
    places = _places(cwd)
    if not places:
        return ImportResolution(module, None, False, "resolved to no file (built-in or frozen)")
    if not all(_inside(p, root) for p in places):
        return ImportResolution(module, places[0], False)
    elsewhere = [p for p in _places(bare) if not _inside(p, root)] if not bare["error"] else []
    if elsewhere:
        return ImportResolution(
            module,
            elsewhere[0],
            False,
            note="resolves inside only while the worktree root is the first sys.path entry",
        )
    return ImportResolution(module, places[0], True)


def resolve(
    python: str, modules: Sequence[str], worktree: Path, env: Mapping[str, str]
) -> tuple[ImportResolution, ...]:
    """Resolve modules in worktree as a case would; never raises for a broken interpreter."""
    if not modules:
        return ()
    result = proc.run([python, "-c", _PROBE, *modules], cwd=worktree, env=env, timeout_s=120)
    root = Path(os.path.realpath(worktree))
    if result.status is not proc.ProcStatus.OK:
        why = result.error or result.stderr.decode(errors="replace").strip()[-500:]
        return tuple(
            ImportResolution(m, None, False, f"{python} could not resolve it: {why}")
            for m in modules
        )
    try:  # the last line: a sitecustomize or .pth may print before the probe does
        found = json.loads(result.stdout.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = f"{python} printed no resolution: {result.stdout[-200:]!r}"
        return tuple(ImportResolution(m, None, False, why) for m in modules)
    return tuple(classify(m, found[m]["cwd"], found[m]["bare"], root) for m in modules)
