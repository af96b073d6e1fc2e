"""A run directory is untrusted input: every edit to run.json is a located exit 3, never a
traceback, and never a verdict (fidelity/matrix/run/untrusted.py).

Three real runs are made once (a predicted run with comparison specs, a partial run, one
shard), then Hypothesis edits their run.json the ways a hand, a bad merge or a full disk
would: a key deleted; a value set to null, another type, a huge number, NaN, a `nan`
string, an empty list or object, nested garbage, a path out of the run directory; the file
truncated or given bytes that are not UTF-8.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import PY, Repo

from fidelity.cli.main import main
from fidelity.matrix import gate
from fidelity.matrix.run import untrusted
from fidelity.matrix.run.request import RunRequest, Shard

WRITE = """
import json, pathlib, sys
out, mode = pathlib.Path(sys.argv[1]), sys.argv[2]
v = float(pathlib.Path("value.txt").read_text())
if mode == "fail" and v > 1:
    sys.exit(3)
(out / "m.csv").write_text(f"id,v\\n1,{v}\\n2,{2 * v}\\n")
(out / "s.json").write_text(json.dumps({"v": v, "run": {"t": v}}))
"""
TABLE = f"""[matrix]
name = "u"

[[case]]
id = "csv"
argv = [{json.dumps(PY)}, "w.py", "{{out}}", "ok"]
outputs = ["m.csv", {{ glob = "s.json", name = "summary.json" }}]
tags = ["moves"]

[case.compare."m.csv"]
kind = "csv"
key = ["id"]
rtol = 0.5
columns = {{ v = {{ atol = 0.1 }} }}

[case.compare."summary.json"]
kind = "json"
ignore = ["$.run.t"]
rtol = 0.01

[[case]]
id = "fails"
argv = [{json.dumps(PY)}, "w.py", "{{out}}", "fail"]
outputs = ["m.csv"]
"""
PREDICTION = '[prediction]\nwhy = "csv reads the value"\nmoved = ["tag:moves"]\n'


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_runs(tmp_path_factory.mktemp("untrusted"))


def make_runs(root: Path) -> dict[str, Path]:
    """Real runs, each copied once to a place the examples may write run.json in."""
    repo = Repo(root / "repo")
    files = {"w.py": WRITE, "value.txt": "1", "cases/matrix.toml": TABLE}
    base = repo.commit({**files, "cases/predict.toml": PREDICTION})
    repo.commit({"value.txt": "2"})
    made = {
        "predicted": gate.run(repo.path, RunRequest(base, "HEAD", expect="cases/predict.toml")),
        "partial": gate.run(repo.path, RunRequest(base, "HEAD", selectors=("csv",))),
        "shard": gate.run(repo.path, RunRequest(base, "HEAD", shard=Shard(1, 2))),
    }
    copies = {}
    for name, outcome in made.items():
        copies[name] = root / "copies" / name
        shutil.copytree(outcome.run_dir, copies[name])
        # unedited, each copy is judged as run (a value moved): exit 3 after an edit is news
        assert cli(["compare", str(copies[name])]) == (1, ""), name
    return copies


def cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["-q", *argv])
    return code, err.getvalue()


def places(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += places(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += places(v, (*here, i))
    return found


GARBAGE = st.sampled_from(
    [None, "", "nan", "NaN", 0, -1, 10**30, 1e308, -1e308, True, [], {}, [None], [[[]]]]
    + [float("nan"), float("inf"), "../../outside", "/abs", "a\x00b", {"a": [1, {"b": None}]}]
) | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


def edited(doc: Any, data: st.DataObject) -> Any:
    """One key deleted or one value replaced, anywhere in the document."""
    doc = json.loads(json.dumps(doc))
    where = data.draw(st.sampled_from(places(doc)[1:]), label="where")
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    if data.draw(st.booleans(), label="delete"):
        del parent[where[-1]]
    else:
        parent[where[-1]] = data.draw(GARBAGE, label="value")
    return doc


def damaged(raw: bytes, data: st.DataObject) -> bytes:
    """The file truncated, or bytes that are not UTF-8 put into it."""
    at = data.draw(st.integers(0, len(raw.rstrip()) - 1), label="at")  # never a no-op
    if data.draw(st.booleans(), label="truncate"):
        return raw[:at]
    return raw[:at] + data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + raw[at:]


def judge_again(run_dir: Path, content: bytes) -> None:
    (run_dir / "run.json").write_bytes(content)
    code, err = cli(["compare", str(run_dir)])
    assert code == 3, err  # an edited run is never a verdict: 0 or 1 would be one
    assert "Traceback" not in err and "internal error" not in err, err
    code, err = cli(["verify", str(run_dir)])
    assert code in (2, 3), err  # 2: the run recorded no prediction
    assert "Traceback" not in err and "internal error" not in err, err


FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


@FUZZ
@given(st.sampled_from(["predicted", "partial", "shard"]), st.data())
def test_an_edited_run_json_is_exit_3_and_never_a_traceback(
    runs: dict[str, Path], name: str, data: st.DataObject
) -> None:
    raw = (runs[name] / "run.json").read_bytes()
    doc = json.loads(raw)
    new = edited(doc, data)
    assume(json.dumps(new, sort_keys=True) != json.dumps(doc, sort_keys=True))
    try:
        judge_again(runs[name], json.dumps(new, indent=2).encode())
    finally:
        (runs[name] / "run.json").write_bytes(raw)


@FUZZ
@given(st.sampled_from(["predicted", "partial", "shard"]), st.data())
def test_a_truncated_or_non_utf8_run_json_is_exit_3(
    runs: dict[str, Path], name: str, data: st.DataObject
) -> None:
    raw = (runs[name] / "run.json").read_bytes()
    try:
        judge_again(runs[name], damaged(raw, data))
    finally:
        (runs[name] / "run.json").write_bytes(raw)


NAN = float("nan")
PINNED = [  # (run, where, new value, what the error says): each crashed or misled before
    ("predicted", ("matrix", "cases", 0, "compare", "m.csv", "rtol"), None, "None is not of type"),
    ("predicted", ("sides", "baseline", "own_compare"), [], "[] is not valid under any"),
    (
        "predicted",
        ("matrix", "cases", 0, "definition", "outputs", 1),
        {"name": "x"},
        "is not valid under any",
    ),
    ("predicted", ("sides", "candidate", "cases", "csv", "paths", "summary.json"), "../../x", ""),
    ("predicted", ("sides", "baseline", "cases", "csv", "duration_s"), NAN, "nan is not a"),
    ("predicted", ("sides", "candidate", "cases", "csv", "duration_s"), -math.inf, "-inf is not"),
    ("predicted", ("sides", "baseline", "role"), "candidate", "'candidate' under 'baseline'"),
    ("predicted", ("sides", "baseline", "cases", "csv", "case_id"), "fails", "'fails' under"),
    ("predicted", ("matrix", "cases", 1, "id"), "csv", "case 'csv' is declared twice"),
    ("shard", ("selection", "shard"), [3, 2], "shard 3 of 2 does not exist"),
]


@pytest.mark.parametrize(("name", "where", "value", "said"), PINNED)
def test_each_damage_is_located(
    runs: dict[str, Path], name: str, where: tuple[Any, ...], value: Any, said: str
) -> None:
    path = runs[name] / "run.json"
    raw = path.read_bytes()
    doc = json.loads(raw)
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = value
    path.write_text(json.dumps(doc))
    try:
        code, err = cli(["compare", str(runs[name])])
    finally:
        path.write_bytes(raw)
    located = "at $" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in where)
    assert code == 3 and f"{path}: " in err and located in err and said in err, err
    assert "run `fidelity run` again" in err and "Traceback" not in err


@pytest.mark.parametrize("spelled", ["1e999", "-1e400"])
def test_a_number_too_large_for_a_float_is_located(runs: dict[str, Path], spelled: str) -> None:
    """json reads 1e999 as inf without a NaN or Infinity constant: it is damage all the same."""
    path = runs["predicted"] / "run.json"
    raw = path.read_bytes()
    doc = json.loads(raw)
    doc["sides"]["baseline"]["cases"]["csv"]["duration_s"] = 12345.5
    path.write_text(json.dumps(doc).replace("12345.5", spelled))
    try:
        code, err = cli(["compare", str(runs["predicted"])])
    finally:
        path.write_bytes(raw)
    assert code == 3 and "at $.sides.baseline.cases.csv.duration_s" in err, err
    assert "inf is not a number JSON allows" in err


def test_every_fixture_run_still_reads(tmp_path: Path) -> None:
    """The committed runs of fidelity's own case table (older, digest-less) stay valid."""
    fixtures = Path(__file__).parent.parent / "cases" / "fixtures" / "runs"
    found = sorted(fixtures.rglob("run.json"))  # shards/1, shards/2 sit one folder deeper
    assert len(found) >= 5, found
    for run_json in found:
        assert untrusted.problems(json.loads(run_json.read_text())) == [], run_json
