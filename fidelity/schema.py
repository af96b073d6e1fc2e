"""fidelity's JSON Schemas (case, control, run, prediction, failset, records tables), and
TOML tables checked against them with every problem located."""

from __future__ import annotations

import functools
import math
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from checkers import schema as shared
from checkers.schema import json_path
from fidelity.errors import TableError

if TYPE_CHECKING:  # imported only to explain a table that is not valid (checkers.schema)
    import jsonschema

__all__ = [
    "entry_label",
    "entry_lines",
    "errors",
    "json_path",
    "load",
    "load_toml",
    "part_errors",
    "strings",
]


def load(name: str) -> dict[str, Any]:
    """The schema `fidelity/schemas/<name>.schema.json`."""
    return shared.load("fidelity", name)


def entry_lines(text: str) -> dict[str, int]:
    """entry id -> the 1-based line of its `id = ...` in a table's text (the first, when an
    id is written twice), to locate an entry as path:line."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*id\s*=\s*[\"']([^\"']+)[\"']", line)
        if m:
            found.setdefault(m.group(1), number)
    return found


def strings(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path, string) of every string in a parsed table's value, path starting at `path`."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from strings(v, (*path, i))
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, (*path, k))


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
    """Every violation of schema `name` as (path, message), in document order."""
    return shared.errors("fidelity", name, instance, _message)


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "oneOf" and error.schema.get("oneOf", [{}])[0].get("type") == "array":
        return "must be a list of strings (argv) or a non-empty string (run with shell = true)"
    return str(error.message)


Locate = Callable[[Mapping[str, Any], Sequence[str | int], str], str]


def load_toml(
    data: bytes,
    source: str,
    *,
    schema: str,
    kind: str,
    locate: Locate,
    semantic: Callable[[Mapping[str, Any]], list[str]],
) -> dict[str, Any]:
    """Parse the `kind` table (case, control) in `source` and check it against its schema,
    then by `semantic`.

    Every schema problem is raised at once as a TableError, each located by `locate` (file,
    entry id, JSON path); the semantic checks, which rely on the shape being right, run once
    the schema holds, and also report all they find at once.
    """
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TableError(kind, source, [f"not UTF-8: {exc}"]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise TableError(kind, source, [f"invalid TOML: {exc}"]) from exc
    endless = set(not_finite(raw, ()))  # said as such, not as out of a schema's bounds
    problems = [locate(raw, path, NOT_FINITE) for path in sorted(endless, key=str)]
    problems += [locate(raw, p, msg) for p, msg in errors(schema, raw) if tuple(p) not in endless]
    if not problems:
        problems = semantic(raw)
    if problems:
        raise TableError(kind, source, problems)
    return raw


NOT_FINITE = "must be a finite number (TOML's nan and inf would disable the check)"


def not_finite(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    """Paths of every number that is not finite: TOML allows nan and inf, which a schema's
    bounds let through (nan compares false with each) and a timeout cannot be."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from not_finite(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from not_finite(v, (*path, i))


@functools.cache
def _part(name: str, definition: str) -> jsonschema.protocols.Validator:
    whole = load(name)
    part = {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": f"#/$defs/{definition}"}
    return shared.ecma_class(part)(part)


def part_errors(
    name: str, definition: str, instance: object
) -> list[tuple[Sequence[str | int], str]]:
    """Every violation of the definition `#/$defs/<definition>` of schema `name`, located
    from the instance's root: how a file that holds one part of a format is checked."""
    found = sorted(
        _part(name, definition).iter_errors(instance),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    return [(tuple(e.absolute_path), str(e.message)) for e in found]
