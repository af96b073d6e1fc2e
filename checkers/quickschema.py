"""Whether an instance is valid under a shipped JSON Schema, without importing jsonschema.

jsonschema and its dependencies cost about 80 ms of start-up, more than the rest of
`check-docs` on a small page. A configuration or case table is valid almost every time,
so `valid` decides that alone, exactly, for the keywords fidelity's schemas use; any
other keyword, or a value whose meaning it cannot decide exactly (a TOML date, a `1`
against `enum: [true]`), raises `Unsure` and the caller asks jsonschema. jsonschema
stays the authority for every message: `valid` never explains, it only says yes or no.
A test runs both over the repository's tables and generated instances and fails on any
disagreement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

# annotations only: they never change whether an instance is valid
_IGNORED = frozenset({"$defs", "$id", "$schema", "default", "description", "title"})
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


class Unsure(Exception):
    """The schema or the instance holds something `valid` does not decide exactly."""


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _plain(instance: object) -> bool:
    """A value whose type maps to exactly one JSON type (not a date, not a tuple)."""
    return isinstance(instance, str | bool | int | float | list | dict) or instance is None


def _is_type(instance: object, name: str) -> bool:
    if name == "integer":
        if isinstance(instance, bool):
            return False
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    if name == "number":
        return isinstance(instance, int | float) and not isinstance(instance, bool)
    if name not in _TYPES:
        raise Unsure(f"type {name!r}")
    return isinstance(instance, _TYPES[name])


def _same(a: object, b: object) -> bool:
    """JSON equality where Python's differs from it (1 == True, 1 == 1.0) is left unsure."""
    if type(a) is not type(b):
        if isinstance(a, int | float) and isinstance(b, int | float):
            raise Unsure("a number compared across int, float and bool")
        return False
    if isinstance(a, list | dict):
        raise Unsure("a container in enum or const")
    return a == b


def _number(instance: object) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


def _string_checks(schema: Mapping[str, Any], instance: str) -> bool:
    if "minLength" in schema and len(instance) < schema["minLength"]:
        return False
    if "maxLength" in schema and len(instance) > schema["maxLength"]:
        return False
    return "pattern" not in schema or _regex(schema["pattern"]).search(instance) is not None


def _array_checks(schema: Mapping[str, Any], instance: list[Any], root: Mapping[str, Any]) -> bool:
    if "minItems" in schema and len(instance) < schema["minItems"]:
        return False
    if "maxItems" in schema and len(instance) > schema["maxItems"]:
        return False
    if schema.get("uniqueItems"):
        if not all(isinstance(item, str) for item in instance):
            raise Unsure("uniqueItems over values other than strings")
        if len(set(instance)) != len(instance):
            return False
    items = schema.get("items", True)
    return all(_valid(items, item, root) for item in instance)


def _object_checks(
    schema: Mapping[str, Any], instance: dict[str, Any], root: Mapping[str, Any]
) -> bool:
    if any(key not in instance for key in schema.get("required", ())):
        return False
    names = schema.get("propertyNames")
    if names is not None and not all(_valid(names, key, root) for key in instance):
        return False
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, value in instance.items():
        sub = properties.get(key, extra)
        if not _valid(sub, value, root):
            return False
    return True


_HANDLED = _IGNORED | {
    *("$ref", "type", "enum", "const", "not", "anyOf", "oneOf", "minimum", "exclusiveMinimum"),
    *("minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "items"),
    *("required", "propertyNames", "properties", "additionalProperties"),
}


def _ref(schema: Mapping[str, Any], instance: Any, root: Mapping[str, Any]) -> bool:
    ref = schema["$ref"]
    if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
        raise Unsure(f"$ref {ref!r}")
    return _valid(root["$defs"][ref.removeprefix("#/$defs/")], instance, root)


def _generic(schema: Mapping[str, Any], instance: Any, root: Mapping[str, Any]) -> bool:
    """The keywords that apply to a value of any type."""
    if "$ref" in schema and not _ref(schema, instance, root):
        return False
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(instance, kind) for kind in kinds):
            return False
    if "enum" in schema and not any(_same(instance, v) for v in schema["enum"]):
        return False
    if "const" in schema and not _same(instance, schema["const"]):
        return False
    if "not" in schema and _valid(schema["not"], instance, root):
        return False
    if "anyOf" in schema and not any(_valid(s, instance, root) for s in schema["anyOf"]):
        return False
    return "oneOf" not in schema or sum(_valid(s, instance, root) for s in schema["oneOf"]) == 1


def _numeric(schema: Mapping[str, Any], instance: int | float) -> bool:
    if "minimum" in schema and instance < schema["minimum"]:
        return False
    return "exclusiveMinimum" not in schema or instance > schema["exclusiveMinimum"]


def _valid(schema: Any, instance: Any, root: Mapping[str, Any]) -> bool:
    if schema is True or schema is False:
        return bool(schema)
    if not isinstance(schema, Mapping) or not _plain(instance):
        raise Unsure("a schema that is not an object, or a value that is not JSON")
    unknown = schema.keys() - _HANDLED
    if unknown:
        raise Unsure(f"keywords {sorted(unknown)}")
    if not _generic(schema, instance, root):
        return False
    if _number(instance):
        return _numeric(schema, instance)
    if isinstance(instance, str):
        return _string_checks(schema, instance)
    if isinstance(instance, list):
        return _array_checks(schema, instance, root)
    if isinstance(instance, dict):
        return _object_checks(schema, instance, root)
    return True


def valid(schema: Mapping[str, Any], instance: object) -> bool:
    """Whether ``instance`` is valid under ``schema`` (local ``#/$defs/`` references);
    raises Unsure where only jsonschema can tell."""
    try:
        return _valid(schema, instance, schema)
    except RecursionError as exc:
        raise Unsure("nested too deep") from exc
