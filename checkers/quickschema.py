"""Whether an instance is valid under a shipped JSON Schema, without importing jsonschema.

jsonschema and its dependencies cost about 80 ms of start-up, more than the rest of
`check-docs` on a small page. A configuration or case table is valid almost every time,
so `valid` decides that alone, exactly, for the keywords fidelity's schemas use; any
other keyword, or a value whose meaning it cannot decide exactly (a TOML date, a `1`
against `enum: [true]`), raises `Unsure` and the caller asks jsonschema. jsonschema
stays the authority for every message: `valid` never explains, it only says yes or no.
A test runs both over the repository's tables, a real run.json and generated instances,
and fails on any disagreement. A schema is compiled to closures once (`compiled`): a
run.json of 200 cases took 45 ms to check interpreted, 10 ms compiled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
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
def regex(pattern: str) -> re.Pattern[str]:
    """A schema's `pattern` as JSON Schema reads it (ECMA-262): a final `$` matches only at
    the end of the string, where Python's also matches before a final newline (so an id
    "a\\n" passed ^[a-z]+$). Only a final `$` is read so; the shipped schemas have no other."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _plain(instance: object) -> bool:
    """A value whose type maps to exactly one JSON type (not a date, not a tuple)."""
    return isinstance(instance, str | bool | int | float | list | dict) or instance is None


def _integer(instance: object) -> bool:
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())


def _number(instance: object) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


def _of(*types: type) -> Callable[[object], bool]:
    return lambda instance: isinstance(instance, types)


# each JSON type a predicate; a name not here is left to jsonschema (Unsure)
_KINDS: dict[str, Callable[[object], bool]] = {
    "integer": _integer,
    "number": _number,
    **{name: _of(*types) for name, types in _TYPES.items()},
}


def _same(a: object, b: object) -> bool:
    """JSON equality where Python's differs from it (1 == True, 1 == 1.0) is left unsure."""
    if type(a) is not type(b):
        if isinstance(a, int | float) and isinstance(b, int | float):
            raise Unsure("a number compared across int, float and bool")
        return False
    if isinstance(a, list | dict):
        raise Unsure("a container in enum or const")
    return a == b


Check = Callable[[Any], bool]


def _yes(instance: Any) -> bool:
    return True


def _no(instance: Any) -> bool:
    return False


def _raises(why: str) -> Check:
    def unsure(instance: Any) -> bool:
        raise Unsure(why)

    return unsure


def _all(checks: Sequence[Check]) -> Check:
    """The checks in order; the first that fails decides."""
    if len(checks) == 1:
        return checks[0]

    def each(instance: Any) -> bool:
        return all(check(instance) for check in checks)

    return each


class _Compiler:
    """A schema turned into nested closures: the keyword lookups, the `Mapping` test and
    the `$ref` resolution that an interpreting validator repeats for every value are done
    here, once a schema. Each definition is compiled once, and a reference to one goes
    through a box (a definition may refer to itself)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, list[Check]] = {}

    def schema(self, schema: Any) -> Check:
        if schema is True or schema is False:
            return _yes if schema else _no
        if not isinstance(schema, Mapping):
            return _raises("a schema that is not an object")
        unknown = schema.keys() - _HANDLED
        if unknown:
            return _raises(f"keywords {sorted(unknown)}")
        by_type = (self._numeric(schema), self._string(schema), self._array(schema))
        return _dispatch(self._generic(schema), *by_type, self._object(schema))

    def _ref(self, ref: Any) -> Check:
        if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
            return _raises(f"$ref {ref!r}")
        name = ref.removeprefix("#/$defs/")
        if name not in self.root.get("$defs", {}):
            return _raises(f"$ref {ref!r} to no definition")  # as an interpreter: if reached
        box = self.defs.get(name)
        if box is None:
            box = self.defs[name] = []
            box.append(self.schema(self.root["$defs"][name]))
        return lambda instance: box[0](instance)

    def _generic(self, schema: Mapping[str, Any]) -> list[Check]:
        """The keywords that apply to a value of any type, in a fixed order: where one fails,
        a later one that would be Unsure is not reached."""
        rules: list[Check] = []
        if "$ref" in schema:
            rules.append(self._ref(schema["$ref"]))
        if "type" in schema:
            kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            tests = [_KINDS.get(kind) or _raises(f"type {kind!r}") for kind in kinds]
            rules.append(tests[0] if len(tests) == 1 else lambda x: any(t(x) for t in tests))
        if "enum" in schema:
            values = schema["enum"]
            rules.append(lambda x: any(_same(x, v) for v in values))
        if "const" in schema:
            const = schema["const"]
            rules.append(lambda x: _same(x, const))
        if "not" in schema:
            negated = self.schema(schema["not"])
            rules.append(lambda x: not negated(x))
        if "anyOf" in schema:
            options = [self.schema(s) for s in schema["anyOf"]]
            rules.append(lambda x: any(option(x) for option in options))
        if "oneOf" in schema:
            alone = [self.schema(s) for s in schema["oneOf"]]
            rules.append(lambda x: sum(option(x) for option in alone) == 1)
        return rules

    @staticmethod
    def _numeric(schema: Mapping[str, Any]) -> Check:
        rules: list[Check] = []
        if "minimum" in schema:
            least = schema["minimum"]
            rules.append(lambda x: not x < least)
        if "exclusiveMinimum" in schema:
            above = schema["exclusiveMinimum"]
            rules.append(lambda x: x > above)
        if "maximum" in schema:
            most = schema["maximum"]
            rules.append(lambda x: not x > most)
        return _all(rules) if rules else _yes

    @staticmethod
    def _string(schema: Mapping[str, Any]) -> Check:
        rules = _lengths(schema, "minLength", "maxLength")
        if "pattern" in schema:
            pattern = schema["pattern"]
            rules.append(lambda x: regex(pattern).search(x) is not None)
        return _all(rules) if rules else _yes

    def _array(self, schema: Mapping[str, Any]) -> Check:
        rules = _lengths(schema, "minItems", "maxItems")
        if schema.get("uniqueItems"):
            rules.append(_unique)
        items = self.schema(schema.get("items", True))
        if items is not _yes:
            rules.append(lambda x: all(map(items, x)))
        return _all(rules) if rules else _yes

    def _object(self, schema: Mapping[str, Any]) -> Check:
        required = tuple(schema.get("required", ()))
        names = schema.get("propertyNames")
        key_check = None if names is None else self.schema(names)
        properties = {k: self.schema(v) for k, v in schema.get("properties", {}).items()}
        extra = self.schema(schema.get("additionalProperties", True))

        def members(instance: dict[str, Any]) -> bool:
            for key in required:
                if key not in instance:
                    return False
            if key_check is not None and not all(map(key_check, instance)):
                return False
            for key, value in instance.items():  # noqa: SIM110 - a loop: 15% less than all()
                if not properties.get(key, extra)(value):
                    return False
            return True

        return members


_EXACT = frozenset({str, bool, int, float, list, dict, type(None)})


def _dispatch(
    generic: Sequence[Check], number: Check, string: Check, array: Check, obj: Check
) -> Check:
    """One schema's check: the keywords of any type, then those of the value's type. A
    value of exactly a JSON type (nearly all) is told by `type()`; a subclass of one (an
    IntEnum, say) is told by `isinstance`, numbers first."""

    def check(instance: Any) -> bool:
        kind = type(instance)
        if kind not in _EXACT and not _plain(instance):
            raise Unsure("a value that is not JSON")
        for rule in generic:
            if not rule(instance):
                return False
        if kind is str:
            return string is _yes or string(instance)
        if kind is dict:
            return obj(instance)
        if kind is list:
            return array is _yes or array(instance)
        if kind is int or kind is float:
            return number is _yes or number(instance)
        if kind in _EXACT:  # bool, None
            return True
        return _subclassed(instance, number, string, array, obj)

    return check


def _subclassed(instance: Any, number: Check, string: Check, array: Check, obj: Check) -> bool:
    if _number(instance):
        return number(instance)
    if isinstance(instance, str):
        return string(instance)
    if isinstance(instance, list):
        return array(instance)
    if isinstance(instance, dict):
        return obj(instance)
    return True


def _lengths(schema: Mapping[str, Any], least: str, most: str) -> list[Check]:
    """A string's or an array's length against the schema's bounds named `least`, `most`."""
    rules: list[Check] = []
    if least in schema:
        shortest = schema[least]
        rules.append(lambda x: not len(x) < shortest)
    if most in schema:
        longest = schema[most]
        rules.append(lambda x: not len(x) > longest)
    return rules


def _unique(instance: list[Any]) -> bool:
    if not all(isinstance(item, str) for item in instance):
        raise Unsure("uniqueItems over values other than strings")
    return len(set(instance)) == len(instance)


_HANDLED = _IGNORED | {
    *("$ref", "type", "enum", "const", "not", "anyOf", "oneOf", "minimum", "exclusiveMinimum"),
    "maximum",
    *("minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "items"),
    *("required", "propertyNames", "properties", "additionalProperties"),
}


def compiled(schema: Mapping[str, Any]) -> Check:
    """``schema`` (local ``#/$defs/`` references) as one function of an instance: True when
    valid, False when not; it raises Unsure where only jsonschema can tell. Compile once
    and keep it for a schema that does not change (`checkers.schema` does, per shipped
    schema)."""
    check = _Compiler(schema).schema(schema)

    def decided(instance: object) -> bool:
        try:
            return check(instance)
        except RecursionError as exc:
            raise Unsure("nested too deep") from exc

    return decided


def valid(schema: Mapping[str, Any], instance: object) -> bool:
    """Whether ``instance`` is valid under ``schema``; raises Unsure where only jsonschema
    can tell. Compiles the schema on each call: see `compiled`."""
    return compiled(schema)(instance)
