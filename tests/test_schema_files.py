"""Every JSON Schema shipped in a package is itself valid against its metaschema.

Checked here once rather than each time a validator is built (`checkers.schema.validator`):
the metaschema check was 45 ms of every `fidelity run`. The red case is a schema with a
keyword of the wrong type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(
    [*ROOT.glob("fidelity/schemas/*.schema.json"), *ROOT.glob("checkers/schemas/*.schema.json")]
)


def schema_problems(schema: dict[str, Any]) -> list[str]:
    """What makes schema invalid against the metaschema it names, located by JSON path."""
    cls = jsonschema.validators.validator_for(schema)
    meta = cls(cls.META_SCHEMA)
    return [f"{e.json_path}: {e.message}" for e in meta.iter_errors(schema)]


def test_the_packages_ship_schemas() -> None:
    assert len(SHIPPED) >= 9  # seven of fidelity's, two of the checkers'


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_schema_is_valid(path: Path) -> None:
    assert schema_problems(json.loads(path.read_text("utf-8"))) == []


def test_a_broken_schema_is_found() -> None:
    schema = json.loads((ROOT / "fidelity/schemas/matrix.schema.json").read_text("utf-8"))
    schema["type"] = 5
    assert schema_problems(schema) == ["$.type: 5 is not valid under any of the given schemas"]
