"""`checkers.quickschema` agrees with jsonschema wherever it answers.

quickschema lets check-docs and `cases list` skip importing jsonschema when a table is
valid; a wrong "valid" would let a bad table through unexplained. Each shipped schema is
run against the repository's own tables, fixed tricky values, and mutations of those
tables drawn by Hypothesis (a leaf replaced by another JSON or TOML value, a key dropped, a
key added): quickschema must say what jsonschema says, or `Unsure`. The red case breaks
one rule (a bool counted as an integer) and the same comparison catches it.
"""

from __future__ import annotations

import datetime
import json
import random
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import PROG, Repo, fidelity_cli, matrix_toml

from checkers import quickschema
from checkers import schema as shared

ROOT = Path(__file__).resolve().parents[1]


def _toml(path: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / path).read_text())


REAL: dict[tuple[str, str], list[Any]] = {
    ("checkers", "docs"): [
        _toml("pyproject.toml")["tool"]["fidelity"]["docs"],
        {},
        {"keyed_tables": [{"key": "row"}, {"key": "id", "heading": "H"}], "select": ["FD4"]},
        {"link_rewrites": [{"pattern": "x", "replace": "y"}], "anchor_case": "exact"},
    ],
    ("fidelity", "matrix"): [_toml("cases/matrix.toml")],
    ("fidelity", "controls"): [_toml("cases/controls.toml")],
}
_OWN = REAL[("fidelity", "controls")][0]  # with a time limit too: the table sets none
REAL[("fidelity", "controls")].append({**_OWN, "controls": {**_OWN["controls"], "timeout_s": 5}})
TRICKY = [True, False, 0, 1, -1, 1.0, 1.5, "", "x", "FD4", "FD999", None, [], {}, ["a", "a"]]
TRICKY += [datetime.date(2026, 1, 1), [True], [1, True], {"key": ""}, {"key": 1}]
TRICKY += [1e9, 1e9 + 1, 10**9, 10**9 + 1]  # a time limit's maximum, at it and past it


def agrees(package: str, name: str, instance: object) -> bool:
    """False only when quickschema answers and jsonschema disagrees."""
    try:
        quick = quickschema.valid(shared.load(package, name), instance)
    except quickschema.Unsure:
        return True
    return quick == shared.validator(package, name).is_valid(instance)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict) and value:
        return [path] + [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list) and value:
        return [path] + [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    return [_replace(v, rest, new) if i == head else v for i, v in enumerate(value)]


json_values = st.recursive(
    st.sampled_from(TRICKY) | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str, Any]:
    (package, name), instances = draw(st.sampled_from(sorted(REAL.items())))
    instance = draw(st.sampled_from(instances))
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(_leaves(instance)))
        how = draw(st.sampled_from(["value", "drop", "add"]))
        target = _get(instance, path)
        if how == "drop" and path:
            container = _get(instance, path[:-1])
            if isinstance(container, dict):
                smaller: Any = {k: v for k, v in container.items() if k != path[-1]}
            else:
                smaller = [v for i, v in enumerate(container) if i != path[-1]]
            instance = _replace(instance, path[:-1], smaller)
        elif how == "add" and isinstance(target, dict):
            key = draw(st.sampled_from([*target, "extra", "path", "key", "kind"]))
            instance = _replace(instance, path, {**target, key: draw(json_values)})
        else:
            instance = _replace(instance, path, draw(json_values))
    return package, name, instance


@pytest.mark.parametrize("which", sorted(REAL))
def test_the_repository_tables_and_tricky_values_agree(which: tuple[str, str]) -> None:
    package, name = which
    for instance in REAL[which]:
        assert quickschema.valid(shared.load(package, name), instance), instance
        assert agrees(package, name, instance)
    for value in TRICKY:
        for key in shared.load(package, name).get("properties", {}):
            assert agrees(package, name, {key: value}), (key, value)


NUMBERS = [0, -1, 0.5, 1e9, 1e9 + 1, 10**9, 10**9 + 1, 50, 51, True]


@pytest.mark.parametrize("which", sorted(REAL))
def test_every_number_of_the_repository_tables_at_its_bounds_agrees(
    which: tuple[str, str],
) -> None:
    """Each number in the real tables (a time limit, a count, a tolerance) replaced by
    values at and past the schemas' bounds: quickschema's `maximum` was held to nothing
    but top-level keys, where no bound lives (red with `>=` for `>`)."""
    package, name = which
    numbers = 0
    for instance in REAL[which]:
        for path in _leaves(instance):
            was = _get(instance, path)
            if isinstance(was, int | float) and not isinstance(was, bool):
                numbers += 1
                for value in NUMBERS:
                    changed = _replace(instance, path, value)
                    assert agrees(package, name, changed), (path, value)
    assert numbers or name == "docs", which


@given(mutated())
def test_mutated_tables_agree(drawn: tuple[str, str, Any]) -> None:
    package, name, instance = drawn
    assert agrees(package, name, instance), instance


@pytest.fixture(scope="module")
def run_json(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The run.json of a real run: one case moved, one failing, one unchanged."""
    repo = Repo(tmp_path_factory.mktemp("run") / "sim")
    cases = {"a": "ok", "b": "ok", "c": "fail-if-bad"}
    repo.commit({"prog.py": PROG, "value.txt": "one\n", "cases/matrix.toml": matrix_toml(cases)})
    repo.commit({"value.txt": "bad\n"}, "move")
    out = repo.path.parent / "out"
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", "HEAD~1", "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads((out / "run.json").read_text())


def test_a_real_run_json_and_its_mutations_agree(run_json: Any) -> None:
    """run.json is the largest instance quickschema decides (compare, verify, merge read it
    back): the real one is valid, and 400 seeded mutations of it agree with jsonschema."""
    assert quickschema.valid(shared.load("fidelity", "run"), run_json)
    rng, leaves = random.Random(7), _leaves(run_json)
    decided = 0
    for _ in range(400):
        path = rng.choice(leaves)
        instance = _replace(run_json, path, rng.choice([*TRICKY, {"extra": 1}, "x" * 300]))
        assert agrees("fidelity", "run", instance), path
        decided += _decided("fidelity", "run", instance)
    assert decided > 300  # the comparison ran: quickschema answered, not Unsure


def _decided(package: str, name: str, instance: object) -> bool:
    try:
        quickschema.valid(shared.load(package, name), instance)
    except quickschema.Unsure:
        return False
    return True


def test_every_shipped_schema_is_decided_on_an_empty_table() -> None:
    """No keyword in a shipped schema sends quickschema to jsonschema on every call."""
    for package in ("checkers", "fidelity"):
        for path in sorted((ROOT / package / "schemas").glob("*.schema.json")):
            name = path.name.removesuffix(".schema.json")
            quickschema.valid(shared.load(package, name), {})  # raises Unsure if not


def test_a_bool_counted_as_an_integer_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red case: quickschema broken so that `true` is an integer; the comparison fails."""
    original = quickschema._KINDS["integer"]

    def loose(instance: object) -> bool:
        return isinstance(instance, bool) or original(instance)

    monkeypatch.setitem(quickschema._KINDS, "integer", loose)
    assert not agrees("checkers", "docs", {"max_row_chars": True})
    assert jsonschema.Draft202012Validator(shared.load("checkers", "docs")).is_valid({}) is True


def test_a_reference_to_no_definition_is_unsure_only_where_it_is_reached() -> None:
    """Compiling a schema does not decide what an interpreter would not reach: a `$ref` to
    a missing definition in a branch never taken leaves the answer to the other branch."""
    broken = {"anyOf": [True, {"$ref": "#/$defs/missing"}]}
    assert quickschema.valid(broken, 1)
    with pytest.raises(quickschema.Unsure):
        quickschema.valid({"$ref": "#/$defs/missing"}, 1)


EDIT = {"file": "a.py", "find": "1", "replace": "2"}


@pytest.mark.parametrize(
    ("package", "name", "instance"),
    [
        ("fidelity", "matrix", {"case": [{"id": "a\n", "argv": ["x"]}]}),
        (
            "fidelity",
            "controls",
            {"control": [{"id": "c\n", "why": "w", "edit": [EDIT], "caught_by": ["t"]}]},
        ),
        ("checkers", "docs", {"select": ["FD4\n"]}),
    ],
)
def test_a_final_dollar_is_the_end_of_the_string_as_json_schema_reads_it(
    package: str, name: str, instance: object
) -> None:
    """Python's `$` also matches before a final newline: the id "a\\n" passed the id
    pattern, so "a" and "a\\n" were two valid ids that print alike (JSON Schema patterns
    are ECMA-262's, where `$` is the end)."""
    clean = json.loads(json.dumps(instance).replace("\\n", ""))
    assert shared.validator(package, name).is_valid(clean), clean  # the newline alone
    assert not shared.validator(package, name).is_valid(instance)
    assert shared.errors(package, name, instance)
    assert quickschema.regex("^[a-z]+$").search("a\n") is None
    assert quickschema.regex("^[a-z]+$").search("a") is not None
    assert quickschema.regex(r"^a\$").search("a$") is not None  # an escaped $ stays literal
