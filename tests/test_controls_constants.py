"""Issue 38: an edit that only gives a module-level name a new value selects the tests that
ran a function naming it, not every test, where nothing else can read the name; and every
way the name could be read otherwise keeps every test."""

from __future__ import annotations

import pytest
from support import Repo

from fidelity.controls import constants
from fidelity.controls import gate as controls
from fidelity.controls.table import ControlTable

MODULE = """import re

RATE = 2
_PATTERN = re.compile("a")


def price(x):
    return x * RATE


def name():
    return "n"


@staticmethod
def later():
    return lambda: _PATTERN.sub("b", "a")
"""


def test_a_new_value_of_one_name_is_a_constant_edit_and_anything_more_is_not() -> None:
    new = MODULE.replace("RATE = 2", "RATE = 3")
    assert constants.changed_constant(MODULE, new) == "RATE"
    assert constants.changed_constant(MODULE, MODULE.replace("RATE = 2", "RATES = 2")) is None
    both = new.replace('re.compile("a")', 're.compile("b")')
    assert constants.changed_constant(MODULE, both) is None, "two statements changed"
    body = MODULE.replace("return x * RATE", "return x + RATE")
    assert constants.changed_constant(MODULE, body) is None, "a function body, placed elsewhere"
    typed = "LIMIT: int = 3\n"
    assert constants.changed_constant(typed, "LIMIT: int = 4\n") == "LIMIT"
    assert constants.changed_constant(typed, "LIMIT: float = 4\n") is None
    assert constants.changed_constant(MODULE, "def (") is None


def test_the_readers_are_the_functions_that_name_it_closures_included() -> None:
    assert constants.readers(MODULE, "RATE") == (frozenset({7}), "")
    # the lambda may escape its function: both code objects count; the decorator's line
    # is the function's first line, as the tracer keys it
    assert constants.readers(MODULE, "_PATTERN") == (frozenset({15, 17}), "")


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("RATE = 2\nDOUBLE = RATE * 2\n", "read or set again when the module is imported"),
        ("RATE = 2\nRATE = 3\n", "read or set again when the module is imported"),
        ("RATE = 2\n\n\ndef f(x=RATE):\n    return x\n", "read or set again"),
        ("RATE = 2\n\n\nclass C:\n    r = RATE\n", "read or set again"),
        ("RATE = 2\n__all__ = ['RATE']\n", "names RATE in a string"),
        ("RATE = 2\n\n\ndef f(n):\n    return globals()[n]\n", "by name (globals)"),
        (
            "import sys\nRATE = 2\n\n\ndef f():\n    return sys.modules[__name__].__dict__\n",
            "(__dict__)",
        ),
        # red before (review of this change): each read RATE without naming it bare
        (
            "import sys\nRATE = 2\n\n\ndef f():\n    return sys.modules[__name__].RATE\n",
            "attribute",
        ),
        ("RATE = 2\n\n\ndef f():\n    return eval('RATE + 1')\n", "(eval)"),
        ("RATE = 2\nNOTE = 'the RATE in words'\n", "names RATE in a string"),
        (
            "import inspect\nRATE = 2\n\n\ndef f(m):\n    return inspect.getmembers(m)\n",
            "getmembers",
        ),
    ],
)
def test_every_other_way_to_read_the_name_keeps_every_test(source: str, why: str) -> None:
    found, reason = constants.readers(source, "RATE")
    assert not found and why in reason, reason


TESTS = (
    "from shop.rates import name, price\n\n\n"
    "def test_price():\n    assert price(5) == 10\n\n\n"
    "def test_name():\n    assert name() == 'n'\n"
)


def shop(repo: Repo, extra: dict[str, str] | None = None) -> ControlTable:
    table = (
        '[controls]\ncommand = ["{python}", "-m", "pytest", "-q"]\nimport_check = ["shop"]\n\n'
        '[[control]]\nid = "rate"\nwhy = "w"\n'
        'edit = [{ file = "shop/rates.py", find = "RATE = 2", replace = "RATE = 3" }]\n'
        'caught_by = ["tests/test_rates.py::test_price"]\n'
    )
    repo.commit(
        {
            "shop/__init__.py": "",
            "shop/rates.py": MODULE,
            "tests/test_rates.py": TESTS,
            "cases/controls.toml": table,
            ".gitignore": "__pycache__/\n",
            **(extra or {}),
        }
    )
    return controls.load(repo.path)


def test_a_constant_edit_runs_only_the_tests_that_ran_its_readers(make_repo) -> None:
    """Red before: "all tests: the edit to shop/rates.py is at module or class level"."""
    repo: Repo = make_repo("constant")
    report = controls.run(repo.path, shop(repo), jobs=1)
    (r,) = report.results
    assert report.exit_code() == 0 and r.failing == ("tests/test_rates.py::test_price",), r
    assert (r.tests_run, r.selection) == (
        1,
        "1 of 2 tests: those that ran a function of shop/rates.py that reads RATE",
    )


def test_a_constant_another_module_names_runs_every_test(make_repo) -> None:
    repo: Repo = make_repo("constant-imported")
    also = {"shop/tax.py": "from shop.rates import RATE\n\n\ndef tax():\n    return RATE\n"}
    report = controls.run(repo.path, shop(repo, also), jobs=1)
    (r,) = report.results
    assert report.exit_code() == 0 and r.tests_run == 2, r
    assert r.selection == (
        "all tests: the edit to shop/rates.py is at module or class level: RATE is named in "
        "another file of the tree"
    )
