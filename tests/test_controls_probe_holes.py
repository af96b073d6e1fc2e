"""Holes found reviewing the probes of the traced run (commit 96ce9da): places where a test
runs an edited function but the trace by probes does not show it, or where the traced run
behaves unlike a plain run. Each test was red before its hole was closed. Real
repositories, real pytest runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from support import Repo
from test_controls import CALC, TESTS, caught, control, fr, header

from fidelity.controls import gate as controls
from fidelity.controls.verdict import Report, Verdict


def _project(repo: Repo, table: str, extra: dict[str, str]) -> None:
    files = {
        "calc/__init__.py": CALC,
        "tests/test_calc.py": TESTS,
        "cases/controls.toml": table,
        ".gitignore": "__pycache__/\n",
    }
    repo.commit({**files, **extra})


def _trace(report: Report) -> dict[str, object]:
    data: dict[str, object] = json.loads(Path(report.logs, "_unmodified-1.trace.json").read_text())
    return data


def _verdicts(report: Report) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {r.id: (str(r.verdict), r.failing) for r in report.results}


ADD_MINUS = control(
    "add-minus", fr("return a + b", "return a - b"), caught("test_add", "test_both")
)

# a suite that freezes the collector once its modules are imported (`gc.freeze`, to make a
# large suite's collections cheaper): the frozen objects leave gc.get_objects()
FREEZE = "import gc\n\nimport calc  # noqa: F401\n\ngc.freeze()\n"
# add() with a docstring: an edit of it is never swapped in (a fresh import runs it), so the
# verdict shows the selection alone
DOCUMENTED = CALC.replace("return a + b", '"""Add."""\n    return a + b')
NO_SWAP = fr('"""Add."""\n    return a + b', '"""Add!"""\n    return a - b')


# red before 96ce9da's fix (review): Live reads gc.get_objects(), which leaves out objects
# gc.freeze() moved to the permanent generation; probes then skip the file as 'nothing of
# it is alive' and its imported functions run unprobed: test_both, which runs add(), is
# not selected
def test_functions_frozen_at_collection_are_probed(make_repo: Callable[[str], Repo]) -> None:
    repo = make_repo("probe-freeze")
    table = header() + control("add-minus", NO_SWAP, caught("test_add"))
    _project(repo, table, {"tests/conftest.py": FREEZE, "calc/__init__.py": DOCUMENTED})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    full = controls.run(repo.path, controls.load(repo.path), jobs=1, full=True)
    trace = _trace(report)
    assert trace.get("probed") == ["calc/__init__.py"], trace.get("probe_refused")
    # the full run: test_both fails too, so the control is caught differently
    assert _verdicts(full)["add-minus"][0] == str(Verdict.CAUGHT_DIFFERENTLY)
    assert _verdicts(report) == _verdicts(full), trace["tests"]


# red before 96ce9da's fix (review): hole (in the swap, before this commit too): Live
# misses the functions gc.freeze() hid, so no swap is made and the fork runs the
# unmodified add(): survived
def test_a_control_swapped_into_frozen_functions_runs_its_edit(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("swap-freeze")
    _project(repo, header() + ADD_MINUS, {"tests/conftest.py": FREEZE})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert _verdicts(report)["add-minus"][0] == str(Verdict.CAUGHT), _verdicts(report)


# a module the tests import lazily, whose compile warns (`is` with a literal: a warning of
# the compiler, not of the parser); the suite makes every warning an error, so a plain import
# of it fails
LAZY = 'def is_a(x):\n    return x is "a"\n\n\ndef double(x):\n    return x * 2\n'
LAZY_TEST = (
    TESTS + "\n\ndef test_lazy():\n    from calc import lazy\n\n    assert lazy.double(2) == 4\n"
)
STRICT = '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'


# red before 96ce9da's fix (review): fidelity_probe.instrument compiles a file imported
# later with warnings ignored ('the plain compile warned already'), but nothing compiled
# it before: the traced run passes a suite whose plain run fails on that warning (the fork
# is trusted, so the unmodified tree is called sound)
def test_the_traced_run_fails_where_a_plain_run_fails_on_a_compile_warning(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("probe-warning")
    table = header() + control(
        "lazy-triple", fr("return x * 2", "return x * 3", "calc/lazy.py"), caught("test_lazy")
    )
    files = {"calc/lazy.py": LAZY, "tests/test_calc.py": LAZY_TEST, "pyproject.toml": STRICT}
    _project(repo, table, files)
    cold = controls.run(repo.path, controls.load(repo.path), jobs=1, swap=False)
    assert not cold.sound and cold.exit_code() == 3, "a plain run of the tree fails"
    probed = controls.run(repo.path, controls.load(repo.path), jobs=1, fresh=True)
    assert not probed.sound, (probed.baseline, _verdicts(probed))


# red before 96ce9da's fix (review): unmodified._covers asks the kept trace's 'probed'
# (Python files alone) to hold every edited file, a text file too, so a table with any
# edit of a file that is not Python never reads a kept trace
def test_a_kept_trace_is_reused_by_a_table_that_edits_a_text_file(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("probe-reuse-text")
    notes = fr("draft", "final", "NOTES.txt")
    residue = 'survives = true\nresidue = "no test reads the notes"'
    table = header() + ADD_MINUS + control("notes", notes, residue)
    _project(repo, table, {"NOTES.txt": "draft\n"})
    first = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert first.exit_code() == 0, _verdicts(first)
    assert _trace(first)["probed"] == ["calc/__init__.py"]
    second = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert second.exit_code() == 0, _verdicts(second)
    assert not list(Path(second.logs).glob("*.trace.json")), "the second run traced again"


# the no-op runs every test (a control edits at module level, which selects every test);
# test_set takes longest: a split by test times put it alone in part 1 and test_read in part
# 2; parts are now cut between test files, and a second file is there to cut before
ORDERED = (
    TESTS
    + """

import time

import pytest

import calc


def test_set():
    time.sleep(1.0)
    calc.STATE = 1


def test_read():
    assert getattr(calc, "STATE", None) == 1


@pytest.mark.parametrize("x", range(16))
def test_many(x):
    assert add(x, 0) == x
"""
)
EVERY = control(
    "neg-default",
    fr("def neg(a):", "def neg(a, b=0):"),
    'survives = true\nresidue = "a new default no test passes"',
)


# red before 96ce9da's fix (review): noop.parts splits the no-op's tests by their times,
# so a test that relies on an earlier test (documented as unseen by selection) now fails
# the no-op of a suite that passed whole, in order: exit 3, 'the no-op control did not
# survive', no leak
def test_the_noop_in_parts_keeps_the_tests_order_dependence(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("noop-order")
    _project(repo, header() + EVERY, {"tests/test_calc.py": ORDERED, "tests/test_more.py": MORE})
    one = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert one.exit_code() == 0, (one.noop, _verdicts(one))
    two = controls.run(repo.path, controls.load(repo.path), jobs=2, fresh=True)
    assert two.noop is not None and "parts" in two.noop.selection
    assert two.exit_code() == 0, (two.noop.verdict, two.noop.failing)


MORE = """from calc import add

import pytest


@pytest.mark.parametrize("x", range(16))
def test_more(x):
    assert add(x, 0) == x
"""

# test_slow is the longest and passes; test_traced_only, in the second file, fails outside
# the traced run: the split puts it in part 2
LATE = """import os
import time


def test_traced_only():
    time.sleep(0.5)
    assert "FIDELITY_TRACE" in os.environ
"""
TWO_PARTS = (
    TESTS
    + """

import os
import time

import pytest


def test_slow():
    time.sleep(1.0)


@pytest.mark.parametrize("x", range(16))
def test_many(x):
    assert add(x, 0) == x
"""
)


# red before 96ce9da's fix (review): the merged no-op names part 1's log (`_no-op-1.log`)
# whatever part failed, so the log report.json gives for a failing no-op may not hold the
# failure. The no-op runs the tests that failed under the controls: PLUS_ONE fails the 18
# tests of test_calc.py that run add(), the first part, and EVERY fails test_traced_only
# (it passes only traced), the second
PLUS_ONE = control(
    "add-plus-one", fr("return a + b", "return a + b + 1"), caught("test_add", match="includes")
)


def test_a_failing_noop_names_the_log_of_the_part_that_failed(
    make_repo: Callable[[str], Repo],
) -> None:
    repo = make_repo("noop-log")
    table = header() + EVERY + PLUS_ONE
    _project(repo, table, {"tests/test_calc.py": TWO_PARTS, "tests/test_late.py": LATE})
    report = controls.run(repo.path, controls.load(repo.path), jobs=2)
    noop = report.noop
    assert noop is not None and "parts" in noop.selection and report.exit_code() == 3
    assert noop.failing == ("tests/test_late.py::test_traced_only",)
    failed = [p.name for p in Path(report.logs).glob("_no-op-*.log") if "FAILED" in p.read_text()]
    assert failed == ["_no-op-2.log"], "the split this test means did not happen"
    assert "test_traced_only" in Path(noop.log).read_text(), noop.log
