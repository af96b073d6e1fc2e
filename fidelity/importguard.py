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

from fidelity import proc
from fidelity.evidence import ImportResolution

_PROBE = """
import importlib.util, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except Exception as exc:
        found[name] = {"origin": None, "locations": [], "error": f"{type(exc).__name__}: {exc}"}
        continue
    if spec is None:
        found[name] = {"origin": None, "locations": [], "error": "no module of that name"}
        continue
    origin = spec.origin if spec.has_location else None
    found[name] = {"origin": origin, "locations": list(spec.submodule_search_locations or []),
                   "error": ""}
print(json.dumps(found))
"""


def _inside(path: str, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def classify(
    module: str, origin: str | None, locations: Sequence[str], error: str, root: Path
) -> ImportResolution:
    """Pure: a module is inside when its file, or every namespace location, is under root."""
    if error:
        return ImportResolution(module, None, False, error)
    places = [origin] if origin else list(locations)
    if not places:
        return ImportResolution(module, None, False, "resolved to no file (built-in or frozen)")
    inside = all(_inside(p, root) for p in places)
    return ImportResolution(module, places[0], inside)


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
    found = json.loads(result.stdout)
    return tuple(
        classify(m, found[m]["origin"], found[m]["locations"], found[m]["error"], root)
        for m in modules
    )
