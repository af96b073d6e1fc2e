"""JSON Schemas shipped in the package, and validation errors that say where."""

from __future__ import annotations

import functools
import json
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
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


def entry_label(raw: Mapping[str, Any], path: Sequence[str | int], key: str) -> str:
    """`case 'id' ` (or `case #3 `) for a path inside the array `key` of entries; else ''."""
    if len(path) >= 2 and path[0] == key and isinstance(path[1], int):
        entries = raw.get(key, [])
        if path[1] < len(entries) and isinstance(entries[path[1]], dict):
            entry_id = entries[path[1]].get("id")
            if isinstance(entry_id, str):
                return f"{key} {entry_id!r} "
        return f"{key} #{path[1] + 1} "
    return ""


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


Locate = Callable[[Mapping[str, Any], Sequence[str | int], str], str]


def load_toml(
    data: bytes,
    name: str,
    fail: Callable[[list[str]], Exception],
    locate: Locate,
    semantic: Callable[[Mapping[str, Any]], list[str]],
) -> dict[str, Any]:
    """Parse a TOML table and check it against schema `name`, then by `semantic`.

    Every schema problem is raised at once through `fail`, each located by `locate` (file,
    entry id, JSON path); the semantic checks, which rely on the shape being right, run once
    the schema holds, and also report all they find at once.
    """
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise fail([f"not UTF-8: {exc}"]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise fail([f"invalid TOML: {exc}"]) from exc
    problems = [locate(raw, path, msg) for path, msg in errors(name, raw)]
    if not problems:
        problems = semantic(raw)
    if problems:
        raise fail(problems)
    return raw
