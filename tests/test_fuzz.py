"""Mutated inputs never crash fidelity and never pass by accident.

Hypothesis mutates a valid case table, a real run's run.json, a JUnit report and CSV/JSON
outputs. Whatever the mutation: the exit code is one of 0-3, nothing prints a traceback
("internal error"), and a mutated run.json never exits 0.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import Repo, matrix_toml

from fidelity.cli.main import main
from fidelity.kinds.registry import explain
from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest

FUZZ = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = st.one_of(
    text,
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
)


def paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += paths(v, (*here, i))
    return found


def mutate(doc: Any, data: st.DataObject) -> Any:
    """One change somewhere: a value replaced, a key dropped, or a key added."""
    doc = json.loads(json.dumps(doc))
    where = data.draw(st.sampled_from(paths(doc)[1:]))
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    action = data.draw(st.sampled_from(["replace", "drop", "add"]))
    last = where[-1]
    if action == "drop":
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[data.draw(text.filter(lambda k: k not in parent))] = data.draw(values)
    else:
        new = data.draw(values)
        if new == parent[last]:
            new = [new]
        parent[last] = new
    return doc


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return (
        "{"
        + ", ".join(
            f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in value.items()
        )
        + "}"
    )


def toml(doc: dict[str, Any]) -> str:
    return "".join(
        f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}\n" for k, v in doc.items()
    )


def cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["-q", *argv])
    return code, err.getvalue()


VALID_TABLE = tomllib.loads(
    matrix_toml({"a": "ok", "b": "ok"}, extra_matrix='import_check = ["m"]')
    + '\n[case.compare."result.txt"]\nkind = "csv"\nkey = ["id"]\nrtol = 0.1\n'
)


@FUZZ
@given(st.data())
def test_a_mutated_case_table_is_valid_or_a_usage_error(data: st.DataObject) -> None:
    doc = mutate(VALID_TABLE, data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "matrix.toml"
        path.write_text(toml(doc), encoding="utf-8")
        code, err = cli(["cases", "validate", str(path)])
    assert code in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from support import PROG

    repo = Repo(tmp_path_factory.mktemp("fuzz") / "repo")
    table = matrix_toml({"a": "ok", "b": "fail-if-bad"})
    base = repo.commit({"prog.py": PROG, "value.txt": "one\n", "cases/matrix.toml": table})
    repo.commit({"value.txt": "two\n"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert outcome.exit_code == 1
    return outcome.run_dir


@FUZZ
@given(st.data())
def test_a_mutated_run_json_never_exits_0(real_run: Path, data: st.DataObject) -> None:
    doc = json.loads((real_run / "run.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(real_run, copy)
        (copy / "run.json").write_text(json.dumps(mutate(doc, data)))
        code, err = cli(["compare", str(copy)])
    assert code in (2, 3), err  # never 0, and never 1: an edited run is not evidence
    assert "internal error" not in err and "Traceback" not in err


JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2" failures="1" errors="0">
<testcase classname="t" name="test_a" file="tests/t.py"/>
<testcase classname="t" name="test_b" file="tests/t.py"><failure message="x">x</failure></testcase>
</testsuite></testsuites>
"""


@FUZZ
@given(st.binary(max_size=40), st.integers(0, len(JUNIT)), st.integers(0, 40))
def test_a_damaged_junit_report_is_judged_or_refused(insert: bytes, at: int, cut: int) -> None:
    damaged = JUNIT[:at] + insert + JUNIT[at + cut :]
    with tempfile.TemporaryDirectory() as tmp:
        good, bad = Path(tmp) / "good.xml", Path(tmp) / "bad.xml"
        good.write_bytes(JUNIT)
        bad.write_bytes(damaged)
        baseline = Path(tmp) / "failset.json"
        assert cli(["failset", "record", str(good), "--out", str(baseline), "--repo", tmp])[0] in (
            0,
            2,
            3,
        )
        if not baseline.exists():
            return
        code, err = cli(["failset", "diff", "--baseline", str(baseline), str(bad)])
    assert code in (0, 1, 2, 3), err
    assert "internal error" not in err and "Traceback" not in err


@FUZZ
@given(
    st.sampled_from(["csv", "tsv", "json", "text"]),
    st.binary(max_size=200),
    st.binary(max_size=200),
    st.sampled_from([{}, {"key": ["a"]}, {"key": ["a", "b"], "rtol": 0.1}, {"ignore": ["$.a"]}]),
)
def test_any_bytes_in_any_comparator_is_an_explanation_not_a_crash(
    kind: str, base: bytes, cand: bytes, extra: dict[str, Any]
) -> None:
    result = explain("f", base, cand, {"kind": kind, **extra})
    assert result.summary
    if base != cand and kind == "text":
        assert not result.within_tolerance
