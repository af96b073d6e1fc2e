"""Controls run in a fork of a pytest that imported and collected the unmodified tree once,
the edit swapped into the live functions (issue 38 item 1): the same verdict as a fresh
import, on every edit shape, or a refusal that falls back to one. Real repositories, real
pytest runs; the differential on fidelity's own table is a long test."""

from __future__ import annotations

import getpass
import json
import os
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from support import PY, Repo, snapshot

from fidelity.controls import gate as controls
from fidelity.controls.verdict import Report, RunStatus

ROOT = Path(__file__).resolve().parent.parent

CALC = '''\
"""calc"""
import functools

REGISTRY = []
SCALE = 1


def register(f):
    REGISTRY.append(f.__name__)
    return f


def logged(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@register
def add(a, b):
    return a + b


@logged
def mul(a, b):
    return a * b


def scaled(a):
    return a * SCALE


def twice(a, step=2):
    return a * step


def clamp(a):
    a = min(a, 10)
    return max(a, 0)


class Acc:
    start = 0

    def total(self, xs):
        return sum(xs, self.start)


def shout(s):
    """Shout s.

    >>> shout("a")
    'A'
    """
    return s.upper()
'''

TESTS = """\
from calc import REGISTRY, Acc, add, clamp, mul, scaled, shout, twice


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6


def test_registry():
    assert REGISTRY == ["add"]


def test_scaled():
    assert scaled(3) == 3


def test_twice():
    assert twice(3) == 6


def test_acc():
    assert Acc().total([1, 2]) == 3


def test_clamp():
    assert clamp(12) == 10


def test_shout():
    assert shout("x") == "X"
"""

T = "tests/test_calc.py::"


def _control(cid: str, find: str, replace: str, caught: list[str]) -> str:
    edit = json.dumps({"file": "calc/__init__.py", "find": find, "replace": replace})
    edit = edit.replace('": ', '" = ').replace("{", "{ ").replace("}", " }")
    return (
        f'\n[[control]]\nid = "{cid}"\nwhy = "w"\nedit = [{edit}]\n'
        f"caught_by = {json.dumps([T + c for c in caught])}\n"
    )


# (id, find, replace, tests that catch it, swapped in or imported afresh)
SHAPES = [
    ("body", "return a + b", "return a - b", ["test_add"], "swap"),
    ("wrapped-body", "return a * b", "return a + b", ["test_mul"], "swap"),
    ("closure-in-decorator", "return f(*args)", "return f(*args) + 1", ["test_mul"], "swap"),
    ("method-body", "sum(xs, self.start)", "sum(xs[1:], self.start)", ["test_acc"], "swap"),
    # moves later lines of a file whose register() ran at import: imported afresh
    ("moves-lines", "return a * SCALE", "x = a\n    return x * SCALE * 2", ["test_scaled"], "warm"),
    # a deleted statement leaves a blank line: nothing moves, the new body is swapped in
    ("deletes-a-line", "    a = min(a, 10)\n", "", ["test_clamp"], "swap"),
    ("runs-at-import", "REGISTRY.append(f.__name__)", "pass", ["test_registry"], "warm"),
    ("module-constant", "SCALE = 1", "SCALE = 2", ["test_scaled"], "warm"),
    ("default-argument", "step=2", "step=3", ["test_twice"], "warm"),
    ("class-attribute", "start = 0", "start = 1", ["test_acc"], "warm"),
]
TABLE = (
    f"[controls]\ncommand = {json.dumps([PY, '-m', 'pytest', '-q'])}\n"
    'import_check = ["calc"]\n' + "".join(_control(c, f, r, t) for c, f, r, t, _ in SHAPES)
)


def _project(repo: Repo, calc: str = CALC, tests: str = TESTS, table: str = TABLE) -> None:
    repo.commit(
        {
            "calc/__init__.py": calc,
            "tests/test_calc.py": tests,
            "cases/controls.toml": table,
            ".gitignore": "__pycache__/\n",
        }
    )


def _verdicts(report: Report) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {r.id: (str(r.verdict), r.failing) for r in report.results}


def _modes(report: Report) -> dict[str, str]:
    return {r.id: r.mode for r in report.results}


def test_swap_and_a_fresh_import_give_the_same_verdict_on_every_edit_shape(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("swap-shapes")
    _project(repo)
    before = snapshot(repo.path)
    swapped = controls.run(repo.path, controls.load(repo.path), jobs=1)
    fresh = controls.run(repo.path, controls.load(repo.path), jobs=1, swap=False)
    assert _verdicts(swapped) == _verdicts(fresh)
    assert swapped.exit_code() == fresh.exit_code() == 0, _verdicts(swapped)
    assert _modes(swapped) == {c: mode for c, _, _, _, mode in SHAPES}
    assert set(_modes(fresh).values()) == {"warm"}
    assert snapshot(repo.path) == before


def _trace(report: Report, files: Sequence[str] = ()) -> dict[str, object]:
    """The unmodified run's trace; with files, the code of those files alone (what a trace
    made by probes holds during the tests)."""
    data = json.loads(Path(report.logs, "_unmodified-1.trace.json").read_text())

    def code(keys: list[str]) -> list[str]:
        return [k for k in keys if not files or k.rpartition(":")[0] in files]

    return {
        "tests": {
            t: (code(v["code"]), v["opened"], v["spawned"]) for t, v in data["tests"].items()
        },
        "outside": {**data["outside"], "code": code(data["outside"]["code"])},
        "modules": sorted(data["modules"]),
    }


def _probed(report: Report) -> list[str] | None:
    data = json.loads(Path(report.logs, "_unmodified-1.trace.json").read_text())
    return data.get("probed")


SEES_TRACE = """import os

import pytest


@pytest.fixture(autouse=True)
def _sees():
    with open({seen!r}, "a") as f:
        f.write("T" if "FIDELITY_TRACE" in os.environ else "-")
"""


def test_the_traced_run_is_the_collected_servers_first_child(
    make_repo: Callable[[str], Repo], tmp_path: Path
) -> None:
    """The unmodified tree is imported and collected once, for its traced run and for every
    swapped control after it; the trace equals a cold run's, collection included (an edit of
    code that runs at import is still imported afresh), in the files the controls edit, which
    its tests follow by probes."""
    repo = make_repo("swap-traced")
    imports = tmp_path / "imports.txt"
    calc = CALC.replace(
        '"""calc"""\n', f'"""calc"""\nwith open({str(imports)!r}, "a") as _f:\n    _f.write("1")\n'
    )
    _project(repo, calc=calc)
    seen = tmp_path / "seen.txt"  # per test: whether it sees the trace settings
    repo.commit({"conftest.py": SEES_TRACE.format(seen=str(seen))})
    once = controls.run(
        repo.path, controls.load(repo.path), jobs=1, only=["body", "default-argument"]
    )
    assert imports.read_text() == "11", "one import for the traced run and the swaps, one warm"
    assert _modes(once) == {"body": "swap", "default-argument": "warm"}
    assert once.noop is not None and once.noop.mode == "swap"
    traced = len(once.baseline.tests)
    assert seen.read_text() == "T" * traced + "-" * (len(seen.read_text()) - traced)
    assert "-" in seen.read_text(), "a control's tests see no trace settings"
    imports.write_text("")
    cold = controls.run(
        repo.path,
        controls.load(repo.path),
        jobs=1,
        only=["body", "default-argument"],
        swap=False,
        fresh=True,
    )
    assert imports.read_text() == "1111", "cold traced run, then each control and the no-op"
    assert _verdicts(once) == _verdicts(cold)
    assert _probed(once) == ["calc/__init__.py"] and _probed(cold) is None
    assert _trace(once, ["calc/__init__.py"]) == _trace(cold, ["calc/__init__.py"])
    assert any(code.endswith(":0") for code in _trace(cold)["outside"]["code"])  # type: ignore[index]


THREADED = '''"""calc, with a worker thread started at import: a fork has no such thread"""
import queue
import threading

LIMIT = 10
_jobs, _done = queue.Queue(), queue.Queue()


def _work():
    while True:
        _done.put(_jobs.get() * 2)


threading.Thread(target=_work, daemon=True).start()


def compute(x):
    _jobs.put(x)
    return _done.get(timeout=2)


def limit():
    return LIMIT
'''
THREADED_TESTS = """from calc import compute, limit


def test_compute():
    assert compute(2) == 4


def test_limit():
    assert limit() == 10
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_tree_that_fails_only_in_a_fork_is_judged_by_a_cold_run(
    make_repo: Callable[[str], Repo], jobs: int
) -> None:
    """A thread started at import does not survive a fork, so the traced run's fork fails
    where a fresh process passes: a cold run decides (red before: exit 3, "the unmodified
    tree does not pass"), and the command's controls import the tree afresh, in every lane
    (with two, the other lane no longer starts a server of its own and forks it)."""
    repo = make_repo("swap-threaded")
    table = (
        f"[controls]\ncommand = {json.dumps([PY, '-m', 'pytest', '-q'])}\n"
        + _control("constant", "LIMIT = 10", "LIMIT = 11", ["test_limit"])
        + _control("body", "return LIMIT", "return LIMIT + 1", ["test_limit"])
    )
    _project(repo, calc=THREADED, tests=THREADED_TESTS, table=table)
    report = controls.run(repo.path, controls.load(repo.path), jobs=jobs)
    assert report.exit_code() == 0, (report.baseline, _verdicts(report))
    assert report.baseline.status is RunStatus.PASSED
    assert set(_modes(report).values()) == {"warm"}, "no control swaps in such a server"
    assert report.noop is not None and report.noop.mode == "warm"
    why = Path(report.logs, "_unmodified-1.swap.txt").read_text()
    assert why.startswith("not swapped: the tests did not all pass in a fork"), why


def test_the_traced_runs_limit_covers_the_servers_collection(
    make_repo: Callable[[str], Repo],
) -> None:
    """Red before: the collection had the whole limit and the fork the whole limit again, so
    a tree a cold run times out on passed."""
    repo = make_repo("swap-limit")
    slow = CALC.replace('"""calc"""\n', '"""calc"""\nimport time\n\ntime.sleep(1.0)\n')
    tests = TESTS.replace(
        "def test_add():\n", "def test_add():\n    import time\n\n    time.sleep(1.0)\n"
    )
    table = TABLE.replace("[controls]\n", "[controls]\ntimeout_s = 1.6\n", 1)
    _project(repo, calc=slow, tests=tests, table=table)
    for swap in (True, False):
        report = controls.run(
            repo.path, controls.load(repo.path), jobs=1, only=["body"], swap=swap, fresh=True
        )
        assert report.baseline.status is RunStatus.TIMEOUT, (swap, report.baseline)
        assert report.exit_code() == 3


def test_a_refused_swap_says_why_beside_the_log(make_repo: Callable[[str], Repo]) -> None:
    """The server's own refusal: the selection placed the edit in a function body, but the
    live functions run assertion-rewritten code no compile of the file gives."""
    repo = make_repo("swap-refused")
    _project(
        repo,
        calc=CALC.replace("    return a * SCALE", "    assert a is not None\n    return a * SCALE"),
    )
    repo.commit({"conftest.py": 'import pytest\n\npytest.register_assert_rewrite("calc")\n'})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1, only=["body"])
    assert _verdicts(report)["body"][0] == "caught", _verdicts(report)
    assert _modes(report)["body"] == "warm"
    why = Path(report.logs, "body.swap.txt").read_text()
    assert "assertion rewriting" in why, why


def test_a_swapped_child_leaves_the_server_as_it_was(make_repo: Callable[[str], Repo]) -> None:
    """A control whose test changes module state, then one that reads it: each child starts
    from the server's unmodified state, as a fresh import would."""
    repo = make_repo("swap-state")
    tests = TESTS + textwrap.dedent(
        """
        def test_grow_registry():
            REGISTRY.append("x")
            assert add(1, 1) == 2
        """
    )
    table = TABLE.replace(
        json.dumps([T + "test_add"]), json.dumps([T + "test_add", T + "test_grow_registry"])
    )
    _project(repo, tests=tests, table=table)
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, _verdicts(report)
    assert report.noop is not None and str(report.noop.verdict) != "caught"


@pytest.mark.long
def test_swap_and_fresh_import_agree_on_fidelitys_own_controls() -> None:
    """Every control in cases/controls.toml, judged twice: a differential over real edits of
    a real tree (about ten minutes on 2 cores)."""
    table = controls.load(ROOT)
    jobs = os.cpu_count() or 1
    swapped = controls.run(ROOT, table, jobs=jobs)
    fresh = controls.run(ROOT, table, jobs=jobs, swap=False)
    assert _verdicts(swapped) == _verdicts(fresh)
    assert "swap" in _modes(swapped).values()


def _live(source: str, name: str) -> tuple[dict[str, object], list[object]]:
    """A module made from source, and its live functions (what the server would find)."""
    space: dict[str, object] = {"__name__": name}
    exec(compile(source, name, "exec", dont_inherit=True), space)
    found = [v for v in space.values() if callable(v) and hasattr(v, "__code__")]
    found += [m for v in space.values() if isinstance(v, type) for m in vars(v).values()]
    return space, [
        f for f in found if getattr(getattr(f, "__code__", None), "co_filename", "") == name
    ]


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("X = 1\ndef f():\n    return X\n", "X = True\ndef f():\n    return X\n", "at import"),
        ("def f(a=1):\n    return a\n", "def f(a=2):\n    return a\n", "at import"),
        ("class C:\n    k = 0\n", "class C:\n    k = 1\n", r"at import \(C\)"),
        ('def f():\n    "a"\n    return 1\n', 'def f():\n    "b"\n    return 1\n', "docstring"),
        ("def f():\n    return 1\n", "def f(:\n", "does not compile"),
    ],
)
def test_codeswap_refuses_what_a_swap_cannot_make_true(old: str, new: str, why: str) -> None:
    from fidelity.plugins import fidelity_codeswap as codeswap

    _, live = _live(old, "m.py")
    with pytest.raises(codeswap.Refused, match=why):
        codeswap.swaps(old.encode(), new.encode(), "m.py", live)


def test_codeswap_puts_new_bodies_on_live_functions_and_refuses_foreign_code() -> None:
    from fidelity.plugins import fidelity_codeswap as codeswap

    old = "class C:\n    def m(self):\n        return 1\n\n\ndef f():\n    return 2\n"
    new = old.replace("return 1", "x = 1\n        return x + 1").replace("return 2", "return 3")
    space, live = _live(old, "m.py")
    for function, code in codeswap.swaps(old.encode(), new.encode(), "m.py", live):
        function.__code__ = code
    assert space["C"]().m() == 2 and space["f"]() == 3  # type: ignore[operator]
    stranger = eval(compile("lambda: 4", "m.py", "eval"))
    with pytest.raises(codeswap.Refused, match="assertion rewriting"):
        codeswap.swaps(old.encode(), new.encode(), "m.py", [*live, stranger])


def test_a_server_starts_only_under_a_command_two_swappable_controls_share(
    tmp_path: Path,
) -> None:
    """A collected server imports and collects the whole suite: one control alone under its
    command pays that for nothing, so it starts none (it swaps in one its lane has alive)."""
    from dataclasses import replace

    from fidelity.controls.lane import Job
    from fidelity.controls.planning import Plan, _swap_where_shared
    from fidelity.controls.table import parse

    table = parse(TABLE.encode(), "controls.toml")
    a, b, c = table.controls[:3]
    c = replace(c, command=(*c.command, "-x"))
    plans = [Plan(x, Job(x, tmp_path / "log", 60.0, swap=True), "") for x in (a, b, c)]
    shared = _swap_where_shared(plans)
    assert [p.job.collect for p in shared] == [True, True, False]
    assert [p.job.swap for p in shared] == [True, True, True]  # in a server the lane has


USES_TMP = (
    TESTS
    + """

def test_writes(tmp_path):
    (tmp_path / "x").write_text("1")
    assert add(1, 1) in (0, 2)  # selected for the control "body", and not failed by it
"""
)


def test_a_controls_run_leaves_the_users_pytest_temporary_folders_alone(
    make_repo: Callable[[str], Repo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red before: every pytest session of the run (the unmodified tree's, each control's)
    made a numbered folder in the user's pytest-of-USER and removed the oldest beyond three;
    after a test suite, removing one under the tracer took the demo's unmodified run from
    0.3 s to 15 s."""
    root = tmp_path / "temproot"
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(root))  # where pytest's default lives
    users = root / f"pytest-of-{getpass.getuser()}"
    for n in range(1, 5):
        (users / f"pytest-{n}").mkdir(parents=True)
        (users / f"pytest-{n}" / "kept").write_text("the user's")
    repo = make_repo("swap-basetemp")
    _project(repo, tests=USES_TMP)
    report = controls.run(repo.path, controls.load(repo.path), jobs=1, only=["body"])
    assert report.exit_code() == 0, _verdicts(report)
    assert sorted(p.name for p in users.iterdir()) == [f"pytest-{n}" for n in range(1, 5)]
