"""JSON Schemas shipped in the package, and validation errors that say where."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import jsonschema


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The schema `fidelity/schemas/<name>.schema.json`."""
    text = resources.files("fidelity").joinpath("schemas", f"{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    schema = load(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def json_path(parts: Iterable[str | int]) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def errors(name: str, instance: object) -> list[tuple[Sequence[str | int], str]]:
    """Every schema violation as (path, message), in document order."""
    found = sorted(
        validator(name).iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path]
    )
    out: list[tuple[Sequence[str | int], str]] = []
    for e in found:
        path = tuple(e.absolute_path)
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            allowed = sorted(e.schema.get("properties", {}))
            hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
            for key in sorted(set(e.instance) - set(allowed)):
                out.append(((*path, key), f"unknown key {key!r}{hint}"))
        else:
            out.append((path, _message(e)))
    return out


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "oneOf" and error.schema.get("oneOf", [{}])[0].get("type") == "array":
        return "must be a list of strings (argv) or a non-empty string (run with shell = true)"
    return str(error.message)
