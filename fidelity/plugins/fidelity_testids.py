"""Test ids as people write them and as pytest and JUnit print them, matched in one place.

Standard library only: fidelity imports it, and so do its pytest plugins in the interpreter
that runs the tests. pytest escapes non-ASCII characters in parametrized ids
(`test_x[\\xe9]`); `canonical` reads both that form and the real characters (`test_x[é]`)
as the same key, and both a node id (`a/b.py::C::t[p]`) and its JUnit form (`a.b.C::t[p]`).
A function id without parameters names all of its parametrized cases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _unescape(params: str) -> str:
    if "\\" not in params or not params.isascii():
        return params
    try:
        return params.encode("ascii").decode("unicode_escape")
    except UnicodeDecodeError:
        return params


def canonical(test_id: str) -> str:
    """One key for a node id, its JUnit form, and pytest's escaped or the real parameters."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    return ".".join(names) + bracket + _unescape(params)


def function(test_id: str) -> str:
    """The canonical key of the test function, without its parameters."""
    return canonical(test_id).partition("[")[0]


def expand(expected: Iterable[str], known: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """expected id -> the known ids it names (empty when it names none): itself, or all cases
    of a parametrized function, in the order known. Each known id is read once, not once per
    expected id (a table expecting 100 ids of a 900-test suite made 90,000 keys per control)."""
    exact: dict[str, list[str]] = {}
    cases: dict[str, list[str]] = {}
    for k in known:
        key = canonical(k)
        exact.setdefault(key, []).append(k)
        cases.setdefault(key.partition("[")[0], []).append(k)
    found = {}
    for e in expected:
        key = canonical(e)
        hits = exact.get(key) or ([] if "[" in e else cases.get(key, []))
        found[e] = tuple(hits)
    return found
