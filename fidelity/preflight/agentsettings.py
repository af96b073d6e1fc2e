"""The coding agent's settings entry that runs fidelity's agent hook (Claude Code's JSON
settings: `hooks.PreToolUse[] = {matcher: "Bash", hooks: [{type: "command", command}]}`).

Entries are found by their command, so adding is idempotent and removing takes only ours;
everything else in the file is kept as it is. A file that is not a JSON object, or whose
`hooks` are not shaped as documented, is never rewritten: UsageError, nothing written.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError

EVENT, MATCHER = "PreToolUse", "Bash"


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: not readable as JSON ({exc}); fix it or move it away") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the settings are not a JSON object; nothing written")
    return data


def _groups(data: dict[str, Any], path: Path) -> list[Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{path}: hooks is not a JSON object; fix it, nothing was written")
    groups = hooks.setdefault(EVENT, [])
    if not isinstance(groups, list):
        raise UsageError(f"{path}: hooks.{EVENT} is not a list; fix it, nothing was written")
    return groups


def _ours(item: Any, command: str) -> bool:
    return isinstance(item, dict) and item.get("command") == command


def _items(data: dict[str, Any]) -> list[Any]:
    """Every hook item under hooks.PreToolUse, however the file is shaped."""
    hooks = data.get("hooks")
    groups = hooks.get(EVENT) if isinstance(hooks, dict) else None
    found: list[Any] = []
    for group in groups if isinstance(groups, list) else []:
        items = group.get("hooks") if isinstance(group, dict) else None
        found += items if isinstance(items, list) else []
    return found


def has(path: Path, command: str) -> bool:
    """Whether the entry is there; UsageError when the file is not a JSON object."""
    return any(_ours(item, command) for item in _items(_load(path)))


def add(path: Path, command: str) -> bool:
    """Add the entry; False when it was there already."""
    data = _load(path)
    groups = _groups(data, path)
    if has(path, command):
        return False
    groups.append({"matcher": MATCHER, "hooks": [{"type": "command", "command": command}]})
    _write(path, data)
    return True


def remove(path: Path, command: str) -> bool:
    """Remove our entry (and groups or sections it leaves empty); False when absent."""
    if not path.exists() or not has(path, command):
        return False
    data = _load(path)
    groups = _groups(data, path)
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            group["hooks"] = [h for h in group["hooks"] if not _ours(h, command)]
            if not group["hooks"]:
                continue
        kept.append(group)
    data["hooks"][EVENT] = kept
    if not kept:
        del data["hooks"][EVENT]
    if not data["hooks"]:
        del data["hooks"]
    _write(path, data)
    return True


def _write(path: Path, data: dict[str, Any]) -> None:
    """Whole or not at all: a temp file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
