"""The comparator kinds are one registry, and nothing outside it names a kind.

The schemas' `kind` enums are the registry's names; the spec keys the schemas allow are the
keys some kind reads; docs/case-table.md says which kinds read each key as the kinds do.
No module outside fidelity/kinds/ compares a kind to a name (`e.kind == "text"`), keeps a
list of kind names (`TOLERANT_KINDS`) or a default kind: it asks the kind through
`registry.of`. The red cases plant each such test in a scrap of source; at e300a4e, before
the registry, the check found 22 such places in 9 modules. A spec key its kind does not read
is refused when the table is read, located.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fidelity.errors import TableError
from fidelity.kinds import registry
from fidelity.kinds.base import Kind
from fidelity.matrix.cases.table import parse

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ROOT / "fidelity"
OWN = (PRODUCT / "kinds", PRODUCT / "demo" / "files")  # the registry; a demo project's code
NAMES = frozenset(registry.KINDS)


def _schema(name: str) -> dict[str, Any]:
    schema = json.loads((PRODUCT / "schemas" / f"{name}.schema.json").read_text())
    properties: dict[str, Any] = schema["$defs"]["compare"]["properties"]
    return properties


@pytest.mark.parametrize("schema", ["matrix", "run"])
def test_the_schema_enum_is_the_registry(schema: str) -> None:
    kind = _schema(schema)["kind"]
    assert kind["enum"] == list(registry.KINDS)
    said = kind["description"]
    assert all(re.search(rf"\b{name}\b", said) for name in NAMES), said


def test_every_row_meets_the_protocol_under_its_own_name() -> None:
    assert len(registry.rows()) == len(registry.KINDS)
    for name, kind in registry.KINDS.items():
        assert isinstance(kind, Kind) and kind.name == name
        assert registry.of(name) is kind
    assert registry.of_spec({}) is registry.DEFAULT
    with pytest.raises(ValueError, match="use one of bytes, csv"):
        registry.of("parquet")


def test_the_schema_allows_exactly_the_keys_some_kind_reads() -> None:
    read = {key for kind in registry.KINDS.values() for key in kind.reads}
    for schema in ("matrix", "run"):
        assert set(_schema(schema)) == {"kind", *read}, schema


def _docs_rows() -> dict[str, str]:
    text = (ROOT / "docs" / "case-table.md").read_text()
    table = text[text.index("| key | kinds | default | meaning |") :]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table.split("\n\n", 1)[0], re.MULTILINE)
    return {key: kinds.strip() for key, kinds in rows}


def _readers(said: str) -> set[str]:
    if said == "all":
        return set(NAMES)
    if said.startswith("all but "):
        return set(NAMES) - {n.strip() for n in said.removeprefix("all but ").split(",")}
    return {n.strip() for n in said.split(",")}


def test_the_docs_say_which_kinds_read_each_key() -> None:
    rows = _docs_rows()
    assert set(rows) == {"kind", *(k for kind in registry.KINDS.values() for k in kind.reads)}
    for key, said in rows.items():
        readers = {k.name for k in registry.KINDS.values() if key in k.reads or key == "kind"}
        assert _readers(said) == readers, (key, said)


# --- no kind named outside the registry ---------------------------------------------------


def _kindish(node: ast.AST) -> bool:
    """An expression that holds a comparator kind: `kind`, `e.kind`, `spec["kind"]` or
    `spec.get("kind", ...)`."""
    match node:
        case ast.Name(id=name) | ast.Attribute(attr=name):
            return "kind" in name.lower()
        case ast.Subscript(slice=ast.Constant(value="kind")):
            return True
        case ast.Call(func=ast.Attribute(attr="get"), args=[ast.Constant(value="kind"), *_]):
            return True
    return False


def _held(node: ast.AST, bound: dict[str, set[str]]) -> set[str]:
    """The kind names a literal holds: a string, a collection of strings (`frozenset({...})`
    too), or a module-level name bound to one."""
    match node:
        case ast.Constant(value=str(text)):
            return {text} & NAMES
        case ast.Tuple(elts=items) | ast.List(elts=items) | ast.Set(elts=items):
            return set().union(*(_held(i, bound) for i in items))
        case ast.Call(func=ast.Name(id="frozenset" | "set" | "tuple"), args=[inner]):
            return _held(inner, bound)
        case ast.Name(id=name):
            return bound.get(name, set())
    return set()


def _bound(tree: ast.Module) -> dict[str, set[str]]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and not isinstance(node.value, ast.Constant):
                    found[target.id] = _held(node.value, {})
    return found


def named_kinds(source: str, where: str) -> Iterator[str]:
    """Each place a module tests a kind against a name, lists kind names, or defaults one."""
    tree = ast.parse(source)
    bound = _bound(tree)
    for name, held in bound.items():
        if len(held) > 1:
            yield f"{where}: {name} lists kinds {sorted(held)}: ask registry.of(name) instead"
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = set().union(*(_held(s, bound) for s in sides))
            if named and any(_kindish(s) for s in sides):
                yield f"{line}: compares a kind with {sorted(named)}: ask the kind instead"
        elif isinstance(node, ast.Call) and _kindish(node) and len(node.args) > 1:
            if _held(node.args[1], bound):
                yield f"{line}: a default kind: use registry.of_spec"
        elif isinstance(node, ast.Match) and _kindish(node.subject):
            cases = [c.pattern for c in node.cases if isinstance(c.pattern, ast.MatchValue)]
            if any(_held(p.value, bound) for p in cases):
                yield f"{line}: matches a kind against its names: ask the kind instead"


def _product() -> Iterator[Path]:
    for path in sorted(PRODUCT.rglob("*.py")):
        if not any(path.is_relative_to(own) for own in OWN):
            yield path


def test_no_module_outside_the_kinds_names_a_kind() -> None:
    found = [
        f
        for path in _product()
        for f in named_kinds(path.read_text("utf-8"), path.relative_to(ROOT).as_posix())
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "planted",
    [
        'if e.kind == "text":\n    pass',
        'x = found.kind in ("csv", "tsv")',
        'x = spec["kind"] != "json"',
        'kind = spec.get("kind", "bytes")',
        'TOLERANT = frozenset({"csv", "tsv", "json"})\nx = kind in TOLERANT',
        'match e.kind:\n    case "json":\n        pass',
        'x = "csv" == spec.get("kind")',
    ],
)
def test_each_way_of_naming_a_kind_is_found(planted: str) -> None:
    assert list(named_kinds(planted, "m.py")), planted


@pytest.mark.parametrize(
    "innocent",
    [
        'choices = ("text", "github")',  # a format, not a kind
        'row = {"kind": str(item.kind), "bytes": item.size}',
        'x = run.kind == "cold"',
        "x = registry.of(e.kind).tolerant",
    ],
)
def test_a_word_that_is_no_kind_test_is_not_found(innocent: str) -> None:
    assert list(named_kinds(innocent, "m.py")) == []


# --- a spec's keys, as its kind reads them -------------------------------------------------

TABLE = """[[case]]
id = "a"
argv = ["x"]
outputs = ["o.json", "o.txt", "o.csv"]

[case.compare."o.json"]
kind = "json"
{json}

[case.compare."o.txt"]
kind = "text"
top = 3

[case.compare."o.csv"]
kind = "csv"
key = ["id"]
own_paths = "literal"
"""


def test_a_key_the_kind_does_not_read_is_refused_and_located() -> None:
    parse(TABLE.format(json="rtol = 0.1").encode(), "t.toml")  # every key read: valid
    with pytest.raises(TableError) as refused:
        parse(TABLE.format(json='key = ["id"]\nignore = ["a.b"]').encode(), "t.toml")
    said = str(refused.value)
    assert (
        "case 'a' at $.case[0].compare.o.json.key: kind json does not read `key` "
        "(read by csv, tsv): remove it, or change the kind" in said
    )
    assert "$.case[0].compare.o.json.ignore[0]: 'a.b' is neither" in said  # its own problem


def test_each_kind_refuses_what_it_does_not_read() -> None:
    for kind in registry.KINDS.values():
        others = sorted({k for row in registry.KINDS.values() for k in row.reads} - kind.reads)
        spec = {"kind": kind.name, **dict.fromkeys(others, 1)}
        assert [at for at, _ in registry.problems(spec)] == [(k,) for k in others], kind.name


def test_a_column_tolerance_replaces_only_the_keys_it_gives() -> None:
    """As docs/case-table.md says: `{ v = { atol = 0 } }` under `rtol = 0.5` keeps 50%."""
    from fidelity.kinds.diffs import Tolerance, tolerance_for

    spec = {"rtol": 0.5, "atol": 2.0, "columns": {"v": {"atol": 0}, "w": {"rtol": 0}}}
    assert tolerance_for(spec, "v") == Tolerance(rtol=0.5, atol=0.0)
    assert tolerance_for(spec, "w") == Tolerance(rtol=0.0, atol=2.0)
    assert tolerance_for(spec, "x") == Tolerance(rtol=0.5, atol=2.0)


def test_a_json_difference_only_in_an_ignored_path_says_so() -> None:
    """It was called "formatting or row order only", which a JSON document has neither of."""
    from fidelity.kinds import registry

    spec = {"kind": "json", "ignore": ["wall_s"]}
    found = registry.explain("o.json", b'{"a": 1, "wall_s": 2.5}', b'{"a": 1, "wall_s": 3.1}', spec)
    assert found.within_tolerance and found.summary == "no value differs outside the ignored paths"
