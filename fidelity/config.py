"""`[tool.fidelity]` from the repository's pyproject.toml; each command takes its own section."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError

DEFAULT_CASES = "cases/matrix.toml"
DEFAULT_CONTROLS = "cases/controls.toml"


def load(repo: Path) -> dict[str, Any]:
    """The `[tool.fidelity]` table, or {} when the repository has no pyproject.toml."""
    path = repo / "pyproject.toml"
    if not path.is_file():
        return {}
    return parse(path.read_bytes(), str(path))


def parse(data: bytes, source: str) -> dict[str, Any]:
    """The `[tool.fidelity]` table of a pyproject.toml's bytes (from a file or the index)."""
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{source}: invalid TOML: {exc}") from exc
    tool = parsed.get("tool", {})
    section = tool.get("fidelity", {}) if isinstance(tool, dict) else None
    if not isinstance(section, dict):
        raise UsageError(f"{source}: [tool] and [tool.fidelity] must be tables")
    return section


def setting(repo: Path, key: str, default: str) -> str:
    """A string setting of `[tool.fidelity]`, e.g. the case table's path."""
    value = load(repo).get(key, default)
    if not isinstance(value, str):
        raise UsageError(f"{repo / 'pyproject.toml'}: [tool.fidelity] {key} must be a string")
    return value
