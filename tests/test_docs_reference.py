"""docs/case-table.md documents every key the case-table schema accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def keys(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            found.add(name)
            found |= keys(sub)
        for value in schema.values():
            if isinstance(value, (dict, list)):
                found |= keys(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= keys(item)
    return found


def test_every_case_table_key_is_documented() -> None:
    schema = json.loads((ROOT / "fidelity" / "schemas" / "matrix.schema.json").read_text())
    page = (ROOT / "docs" / "case-table.md").read_text()
    undocumented = sorted(k for k in keys(schema) if f"`{k}`" not in page)
    assert undocumented == [], f"add these keys to docs/case-table.md: {undocumented}"
    assert len(keys(schema)) > 25  # the walk found the nested keys, not just the top level
