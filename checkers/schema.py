"""JSON Schemas shipped inside a package, and violations located by JSON path.

The one loader for both packages: the checkers use it for their own configuration schemas,
and fidelity's `schema` module builds on it for case, control and run schemas.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from checkers import quickschema

if TYPE_CHECKING:  # jsonschema is imported only to explain an instance that is not valid
    import jsonschema

Message = Callable[["jsonschema.ValidationError"], str]


@functools.cache
def load(package: str, name: str) -> dict[str, Any]:
    """The schema `<package>/schemas/<name>.schema.json`: read beside the package's own
    files, else through importlib.resources (a zipped install; its imports, tempfile among
    them, cost about 4 ms of start-up)."""
    where = getattr(sys.modules.get(package), "__file__", None) or ""
    path = os.path.join(os.path.dirname(where), "schemas", f"{name}.schema.json")
    if where and os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    else:
        from importlib import resources

        text = resources.files(package).joinpath("schemas", f"{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every local `#/$defs/...` reference replaced by its definition."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = _inline(defs[ref.removeprefix("#/$defs/")], defs)
            siblings = {k: _inline(v, defs) for k, v in node.items() if k != "$ref"}
            if not siblings:
                return target
            return {"allOf": [target], **siblings}  # a $ref beside other keywords: both apply
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@functools.cache
def validator(package: str, name: str) -> jsonschema.protocols.Validator:
    """A validator over the schema with its local references inlined: resolving `$ref`
    on every use was most of the cost of validating a table of a thousand cases. The
    shipped schemas are checked against their metaschema by the tests
    (tests/test_schema_files.py), not on every start: that was 45 ms of each `fidelity run`."""
    schema = load(package, name)
    cls = ecma_class(schema)
    inlined = _inline(schema, schema.get("$defs", {}))
    return cls(inlined, format_checker=cls.FORMAT_CHECKER)


def ecma_class(schema: Mapping[str, Any]) -> type[jsonschema.protocols.Validator]:
    """The schema's validator class with `pattern` read as JSON Schema reads it
    (`quickschema.regex`: a final `$` is the end of the string)."""
    import jsonschema

    def pattern(
        validator: Any, wanted: str, instance: Any, schema: Any
    ) -> Iterator[jsonschema.ValidationError]:
        if validator.is_type(instance, "string") and not quickschema.regex(wanted).search(instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {wanted!r}")

    cls = jsonschema.validators.validator_for(schema)
    extended: type[jsonschema.protocols.Validator] = jsonschema.validators.extend(
        cls, {"pattern": pattern}
    )
    return extended


@functools.cache
def _quick(package: str, name: str) -> quickschema.Check:
    return quickschema.compiled(load(package, name))


def valid(package: str, name: str, instance: object) -> bool:
    """True when `quickschema` proves the instance valid; False when it is not, or unsure."""
    try:
        return _quick(package, name)(instance)
    except quickschema.Unsure:
        return False


def json_path(parts: Iterable[str | int]) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _plain(error: jsonschema.ValidationError) -> str:
    return str(error.message)


def errors(
    package: str, name: str, instance: object, message: Message = _plain
) -> list[tuple[Sequence[str | int], str]]:
    """Every violation as (path, message), in document order; one per unknown key.
    jsonschema is imported only when `quickschema` cannot say the instance is valid."""
    if valid(package, name, instance):
        return []
    found = sorted(
        validator(package, name).iter_errors(instance),
        key=lambda e: [str(p) for p in e.absolute_path],
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
            out.append((path, message(e)))
    return out
