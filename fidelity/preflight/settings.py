"""`[tool.fidelity.preflight]`: which gates run and where their inputs are, validated by the
shipped schema `preflight.schema.json`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fidelity.errors import UsageError

DEFAULT_FAILSET = "records/failset.json"


@dataclass(frozen=True, slots=True)
class Settings:
    """None for `gates` means every gate whose own configuration exists."""

    gates: tuple[str, ...] | None = None
    predictions: tuple[str, ...] = ()  # globs; empty: changed TOML files with [prediction]
    failset: tuple[str, ...] = ()  # baselines; empty: DEFAULT_FAILSET when it exists


def from_tool(tool: Mapping[str, Any], source: str) -> Settings:
    """The settings of a `[tool.fidelity]` table; UsageError lists every schema problem."""
    section = tool.get("preflight")
    if section is None:
        return Settings()
    from fidelity import schema  # jsonschema is slow to import: only when there is a table

    problems = [
        f"{source}: [tool.fidelity.preflight]{schema.json_path(path)[1:]}: {msg}"
        for path, msg in schema.errors("preflight", section)
    ]
    if problems:
        raise UsageError("invalid configuration:\n" + "\n".join(problems))
    gates = section.get("gates")
    return Settings(
        gates=tuple(gates) if gates is not None else None,
        predictions=tuple(section.get("predictions", ())),
        failset=tuple(section.get("failset", ())),
    )
