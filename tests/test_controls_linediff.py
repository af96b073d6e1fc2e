"""Selection by the statements an edit changes (`linediff`), not the whole function: a test
that called the function but never started a changed statement ran the same instructions.
Red before: every test that called the function was selected. Where more than instructions
change (a name made local, a generator, a lambda that may run later), it stays with the
function. Real compiles; one real repository and pytest run."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support import Repo, snapshot
from test_controls import caught, control, fr, header, project

from fidelity.controls import gate as controls
from fidelity.controls.linediff import changed_statements
from fidelity.controls.selection import Place, TestTrace, Trace, _by_statement, select
from fidelity.controls.table import Control, Edit

SHOP = """def price(amount, member):
    total = amount * 2
    if member: total -= 1
    if amount > 100:
        total = total - 10
    return total


def gen(xs):
    return [x + 1 for x in xs]


def later(xs):
    return (x + 1 for x in xs)


def scoped(x):
    y = len(x)
    return y


def keyed(xs):
    return sorted(xs, key=lambda x: -x)
"""


def changed(find: str, replace: str, first_line: int) -> tuple[str, ...]:
    return changed_statements(SHOP, SHOP.replace(find, replace, 1), "shop.py", first_line)


def test_a_second_ask_is_answered_without_compiling_again() -> None:
    """The gate asks once to probe the statements and once to select (0.57 CPU-s for our
    44 controls each time, before the cache)."""
    changed("total - 10", "total - 11", 1)
    before = changed_statements.cache_info().hits
    assert changed("total - 10", "total - 11", 1) == ("5:8",)
    assert changed_statements.cache_info().hits == before + 1


def test_the_statements_whose_instructions_change() -> None:
    # the branch's body alone
    assert changed("total - 10", "total - 11", 1) == ("5:8",)
    # `if member: total -= 1` on one line: the test is the if's, not the body's
    assert changed("if member:", "if not member:", 1) == ("3:4",)
    # a list comprehension runs where it is made: the statement that makes it; so is a
    # generator expression credited, as the probes credit its function
    assert changed("x + 1 for x in xs]", "x + 2 for x in xs]", 9) == ("10:4",)
    assert changed("(x + 1 for", "(x + 2 for", 13) == ("14:4",)


@pytest.mark.parametrize(
    ("find", "replace", "first_line", "why"),
    [
        ("lambda x: -x", "lambda x: x", 22, "a lambda may run later"),
        ("y = len(x)", "y = len(x); len = 1", 17, "a name made local changes its code"),
        ("return y", "return (yield y)", 17, "a yield makes a generator"),
        ('def price(amount, member):\n    """', "", 1, "the edit does not apply"),
        ("return total", "return total  # same code", 1, "no instruction changes"),
    ],
)
def test_where_more_than_statements_change_there_is_no_answer(
    find: str, replace: str, first_line: int, why: str
) -> None:
    assert changed(find, replace, first_line) == (), why


def test_a_trace_that_did_not_probe_the_statements_selects_by_the_function() -> None:
    p = Place("shop.py", "shop.py:1", "price", statements=("5:8",))
    probed = Trace({"t": TestTrace()}, statements={"shop.py": frozenset({"5:8"})})
    assert _by_statement(p, probed).statements == ("5:8",)
    assert _by_statement(p, Trace({"t": TestTrace()})).statements == ()


def test_a_changed_statement_that_also_ran_outside_any_test_selects_every_test() -> None:
    """A generator's `finally` run at garbage collection, a statement of a function a hook
    calls: what it did reaches any later test. Red before: no test was selected."""
    control = Control("c", "w", (Edit("shop.py", find="total - 10", replace="total - 11"),), ())
    tests = {"t.py::a": TestTrace(frozenset({"shop.py:1"})), "t.py::b": TestTrace()}
    statement = {"shop.py": frozenset({"5:8"})}
    inside = Trace(tests, statements=statement)
    assert select(control, inside, {"shop.py": SHOP}).ids == ()
    outside = Trace(tests, TestTrace(frozenset({"shop.py@5:8"})), statements=statement)
    found = select(control, outside, {"shop.py": SHOP})
    assert found.ids is None and "also run outside any test" in found.why


TESTS = """from calc import add, clamp


def test_small():
    assert clamp(3) == 3


def test_big():
    assert clamp(300) == 100


def test_add():
    assert add(1, 2) == 3
"""
CALC = """def add(a, b):
    return a + b


def clamp(x):
    if x > 100:
        return 100
    return x
"""


def test_a_control_runs_the_tests_that_started_a_changed_statement(
    make_repo: Callable[[str], Repo],
) -> None:
    """test_small calls clamp() but never reaches `return 100`: red before, it was run."""
    repo = make_repo("linediff")
    table = header() + control(
        "clamp-high", fr("        return 100", "        return 101"), caught("test_big")
    )
    project(repo, table, TESTS)
    repo.commit({"calc/__init__.py": CALC})
    before = snapshot(repo.path)
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    (r,) = report.results
    assert r.failing == ("tests/test_calc.py::test_big",)
    assert (r.tests_run, r.selection) == (
        1,
        "1 of 3 tests: those that ran line 7 of clamp() in calc/__init__.py, or called it after "
        "a test that did",
    )
    assert snapshot(repo.path) == before


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_a_file_with_other_line_endings_selects_as_one_with_newlines(
    make_repo: Callable[[str], Repo], newline: str
) -> None:
    """Red before for a lone `\\r`: every edit was on line 1, at module level, so every test
    was selected ("all 3 tests")."""
    repo = make_repo("endings")
    edit = fr("        return 100".replace("\n", newline), "        return 101")
    project(repo, header() + control("clamp-high", edit, caught("test_big")), TESTS)
    repo.commit({"calc/__init__.py": CALC.replace("\n", newline)})
    report = controls.run(repo.path, controls.load(repo.path), jobs=1)
    assert report.exit_code() == 0, report
    (r,) = report.results
    assert r.failing == ("tests/test_calc.py::test_big",)
    assert r.selection.startswith("1 of 3 tests: those that ran line 7 of clamp()"), r.selection
