"""The shipped JSON Schemas as reference tables: walk a schema, name each key's type, bound
and default, and render one Markdown table per configuration section (scripts/gen_reference.py
writes the pages)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from checkers import schema as shipped

Schema = dict[str, Any]
Pointer = tuple[str | int, ...]
# (package, name) of every schema shipped; each must be rendered by some page below
SCHEMAS = {
    "docs": ("checkers", "docs"),
    "trailers": ("checkers", "trailers"),
    "records": ("fidelity", "records"),
    "preflight": ("fidelity", "preflight"),
    "matrix": ("fidelity", "matrix"),
    "controls": ("fidelity", "controls"),
    "prediction": ("fidelity", "prediction"),
    "run": ("fidelity", "run"),
    "failset": ("fidelity", "failset"),
}


def shipped_schemas() -> dict[str, Schema]:
    """Every schema the packages ship, by name; a shipped file this script does not know is
    an error, so that a new schema cannot go unrendered."""
    found = {
        (package, entry.name.removesuffix(".schema.json"))
        for package in ("fidelity", "checkers")
        for entry in resources.files(package).joinpath("schemas").iterdir()
        if entry.name.endswith(".schema.json")
    }
    unknown = found - set(SCHEMAS.values())
    if unknown:
        raise SystemExit(f"gen_reference: add {sorted(unknown)} to SCHEMAS and to a page")
    return {name: shipped.load(*where) for name, where in SCHEMAS.items()}


# --- schemas as tables -------------------------------------------------------------------


def undescribed(schema: Schema) -> list[str]:
    """Every property and definition without a description, as a dotted path. Constraint
    subschemas (under `not`) name keys they forbid, not keys of their own: skipped."""
    missing = []
    for path, node in nodes(schema, ""):
        if not (isinstance(node, dict) and node.get("description")):
            missing.append(path)
    return missing


def nodes(node: Any, at: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from nodes(item, f"{at}/{i}")
        return
    if not isinstance(node, dict):
        return
    for kind in ("$defs", "properties"):
        for name, sub in node.get(kind, {}).items():
            path = (f"{at}." if at else "") + (f"$defs.{name}" if kind == "$defs" else name)
            yield path, sub
            yield from nodes(sub, path)
    for key, value in node.items():
        if key == "items":
            yield from nodes(value, f"{at}[]")
        elif key not in ("$defs", "properties", "not"):
            yield from nodes(value, f"{at}/{key}")


def at(schema: Schema, pointer: Pointer) -> Schema:
    node: Any = schema
    for part in pointer:
        node = node[part]
    result: Schema = node
    return result


def resolve(schema: Schema, node: Schema) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return resolve(schema, schema["$defs"][ref.removeprefix("#/$defs/")])
    return node


# definitions shown as named value types (the rest are written out where they are used)
VALUE_TYPES = {
    "matrix": ("command", "timeout", "module", "env", "tolerance"),
    "controls": ("argv", "timeout", "module", "env", "path"),
    "run": ("sha", "sha256", "hashes"),
}
PLURAL = {"string": "strings", "integer": "integers", "number": "numbers", "table": "tables"}
PLURAL |= {"boolean": "booleans", "list": "lists"}


def type_of(schema: Schema, node: Schema, named: frozenset[str]) -> str:
    """A short type for a reader: `string`, `list of strings`, `command`, `integer >= 1`."""
    ref = node.get("$ref", "")
    if ref.removeprefix("#/$defs/") in named:
        return f"`{ref.removeprefix('#/$defs/')}`"
    node = resolve(schema, node)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    if "type" not in node:  # alternatives; beside a type, oneOf only constrains
        alternatives = node.get("oneOf", node.get("anyOf", ()))
        return " or ".join(type_of(schema, alt, named) for alt in alternatives) or "any"
    kind = node["type"]
    if isinstance(kind, list):
        return " or ".join({"object": "table", "array": "list"}.get(k, k) for k in kind)
    if kind in ("array", "object"):
        return container(schema, node, named)
    return kind + bound(node)


def container(schema: Schema, node: Schema, named: frozenset[str]) -> str:
    if node["type"] == "array":
        item = type_of(schema, node.get("items", {}), named)
        return "list of " + " or ".join(PLURAL.get(i, i) for i in item.split(" or "))
    values = node.get("additionalProperties")
    if isinstance(values, dict) and not node.get("properties"):
        value = type_of(schema, values, named)
        return "table of " + PLURAL.get(value, value)
    return "table"


def bound(node: Schema) -> str:
    for key, sign in (("exclusiveMinimum", ">"), ("minimum", ">=")):
        if key in node and node.get("type") in ("number", "integer"):
            return f" {sign} {node[key]}"
    return ""


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@dataclass(frozen=True, slots=True)
class Section:
    """One table of keys: a heading, where its object lies in which schema, and the keys
    that have a section of their own (named, not walked into)."""

    heading: str
    schema: str
    pointer: Pointer
    intro: str = ""
    own_sections: frozenset[str] = frozenset()


def rows(schema: Schema, node: Schema, prefix: str, section: Section) -> Iterator[str]:
    named = frozenset(VALUE_TYPES.get(section.schema, ()))
    required = set(node.get("required", ()))
    for name, sub in node.get("properties", {}).items():
        key = prefix + name
        default = "required" if name in required else ""
        if "default" in sub:
            default = f"`{json.dumps(sub['default'])}`"
        kind = type_of(schema, sub, named)
        text = sub.get("description", "")
        yield f"| `{key}` | {cell(kind)} | {default} | {cell(text)} |"
        if key in section.own_sections:
            continue
        for inner, mark in children(schema, sub):
            yield from rows(schema, inner, f"{key}{mark}", section)


def children(schema: Schema, sub: Schema) -> Iterator[tuple[Schema, str]]:
    """The objects whose keys a property holds: itself, its items, its values, its
    alternatives; with what a key under it is written with (`.`, `[].`, `.<name>.`)."""
    if "$ref" in sub and sub["$ref"].removeprefix("#/$defs/") in schema.get("$defs", {}):
        target = resolve(schema, sub)
        if target.get("properties") or target.get("oneOf"):
            yield from children(schema, target)
        return
    if sub.get("properties"):
        yield sub, "."
    for alt in sub.get("oneOf", ()):
        if isinstance(alt, dict) and alt.get("properties"):
            yield alt, "."
    items = sub.get("items")
    if isinstance(items, dict):
        for inner, mark in children(schema, items):
            yield inner, "[]" + mark
    values = sub.get("additionalProperties")
    if isinstance(values, dict) and not sub.get("properties"):
        for inner, mark in children(schema, values):
            yield inner, ".<name>" + mark


def table(schemas: Mapping[str, Schema], section: Section, level: str = "##") -> str:
    schema = schemas[section.schema]
    node = at(schema, section.pointer)
    if not node.get("properties") and isinstance(node.get("items"), dict):
        node = node["items"]  # an array of tables, [[...]]
    lines = [f"{level} {section.heading}", ""]
    if section.intro:
        lines += [section.intro.replace("{schema}", schema_link(section.schema)), ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    lines += rows(schema, node, "", section)
    return "\n".join(lines) + "\n"


def value_types(schemas: Mapping[str, Schema], name: str, level: str) -> str:
    """The schema's named value types (`command`, `timeout`, ...) and what each means."""
    schema = schemas[name]
    lines = [f"{level} Value types", "", "| type | is | description |", "|---|---|---|"]
    for def_name in VALUE_TYPES[name]:
        node = schema["$defs"][def_name]
        kind = type_of(schema, node, frozenset())
        lines.append(f"| `{def_name}` | {cell(kind)} | {cell(node.get('description', ''))} |")
    return "\n".join(lines) + "\n"


SCHEMA_FILE = "[`{package}/schemas/{name}.schema.json`](../../{package}/schemas/{name}.schema.json)"


def schema_link(name: str) -> str:
    package, file = SCHEMAS[name]
    return SCHEMA_FILE.format(package=package, name=file)
