"""The pure parts of coverage selection and of the guard's defaults: where an edit lands,
which tests it selects, which names a tree has, and how test ids match."""

from __future__ import annotations

from fidelity.controls.selection import TestTrace, Trace, innermost, parse_patch, place, select
from fidelity.controls.table import Control, Edit
from fidelity.controls.treenames import top_level
from fidelity.plugins.fidelity_testids import canonical, expand

SOURCE = """import functools

LIMIT = 3


@functools.cache
def cached(x):
    return x + LIMIT


class Box:
    size = 2

    def grow(self, n):
        def step(k):
            return k + 1

        return step(n) * self.size
"""


def test_an_edit_lands_in_the_innermost_function_body_or_nowhere() -> None:
    def name(lines: list[int]) -> str | None:
        node = innermost(SOURCE, lines)
        return node.name if node else None

    assert [name([8]), name([16]), name([18]), name([16, 18])] == ["cached", "step", "grow", "grow"]
    assert name([15]) == "grow", "a def line runs in the enclosing body"
    for outside in ([3], [6], [7], [12]):  # module, decorator, def line, class body
        assert name(outside) is None
    assert place("m.py", SOURCE, [8], False).key == "m.py:6", (
        "the decorator's line, as co_firstlineno"
    )
    assert place("m.py", SOURCE, [3], False).broad.endswith("is at module or class level")
    assert place("m.py", SOURCE, [12], False).broad.endswith("is at module or class level")
    assert (
        place("d.json", "{}", [1], False).key is None
        and not place("d.json", "{}", [1], False).broad
    )


def test_a_patch_names_its_changed_lines_and_whether_it_moves_lines() -> None:
    (one,) = parse_patch(
        "--- a/m.py\n+++ b/m.py\n@@ -7,2 +7,2 @@\n def cached(x):\n-    return x + LIMIT\n+    return x\n"
    )
    assert (one.old, one.new, one.lines, one.moves_lines) == ("m.py", "m.py", (8,), False)
    (grow,) = parse_patch(
        "--- a/m.py\n+++ b/m.py\n@@ -8 +8,2 @@\n-    return x + LIMIT\n+    y = x\n+    return y\n"
    )
    assert grow.moves_lines and grow.lines == (8,)
    (insert,) = parse_patch("--- a/m.py\n+++ b/m.py\n@@ -8,0 +9 @@\n+    pass\n")
    assert insert.moves_lines and insert.lines == (8, 9), "an insertion: both neighbours"


def trace(**tests: TestTrace) -> Trace:
    return Trace({f"t.py::{k}": v for k, v in tests.items()})


EDIT = Control("c", "w", (Edit("m.py", find="return x + LIMIT", replace="return x"),), ("pytest",))


def test_selection_takes_the_tests_that_ran_the_function_or_opened_the_file_or_spawned_unseen() -> (
    None
):
    found = select(
        EDIT,
        trace(
            ran=TestTrace(frozenset({"m.py:6"})),
            other=TestTrace(frozenset({"m.py:14"})),
            reads=TestTrace(opened=frozenset({"m.py"})),
            spawns=TestTrace(spawned=True),
            # its processes were watched: they opened m.py, or only other files
            child_reads=TestTrace(spawned=True, watched=frozenset({"m.py"}), unseen=False),
            child_elsewhere=TestTrace(spawned=True, watched=frozenset({"n.py"}), unseen=False),
        ),
        {"m.py": SOURCE},
    )
    assert found.ids == ("t.py::ran", "t.py::reads", "t.py::spawns", "t.py::child_reads")
    assert found.reasons["t.py::spawns"] == "starts a process whose file opens were not seen"
    assert found.reasons["t.py::child_reads"].startswith("m.py was opened while it ran")
    assert found.why == "4 of 6 tests: those that ran m.py:6 cached()"


def test_selection_runs_everything_when_the_function_also_ran_outside_a_test() -> None:
    outside = Trace(
        {"t.py::a": TestTrace(frozenset({"m.py:6"})), "t.py::b": TestTrace()},
        TestTrace(frozenset({"m.py:6"})),
    )
    assert select(EDIT, outside, {"m.py": SOURCE}).ids is None
    assert select(EDIT, None, {"m.py": SOURCE}).why == "all tests: no trace of the unmodified tree"


def test_a_control_expecting_a_test_always_runs_it() -> None:
    expecting = Control(EDIT.id, EDIT.why, EDIT.edits, EDIT.command, caught_by=("t.py::b",))
    found = select(
        expecting,
        trace(a=TestTrace(frozenset({"m.py:6"})), b=TestTrace(), c=TestTrace()),
        {"m.py": SOURCE},
    )
    assert found.ids == ("t.py::a", "t.py::b")


def test_the_guard_finds_the_trees_own_packages_and_modules() -> None:
    files = [
        "pkg/__init__.py",
        "pkg/sub/__init__.py",
        "src/lib_a/__init__.py",
        "lib/lib_b.py",
        "tool.py",
        "setup.py",
        "conftest.py",
        "tests/test_x.py",
        "docs/conf.py",
        "python/ns_pkg/mod.py",
        "not-a-name/__init__.py",
    ]
    found = b'[tool.setuptools.packages.find]\nwhere = ["python"]\n'
    assert top_level(files, found) == ("pkg", "lib_a", "lib_b", "tool")
    listed = b'[tool.setuptools]\npackages = ["declared.sub"]\n[tool.flit.module]\nname = "fl"\n'
    assert top_level(["x.py"], listed) == ("x", "declared", "fl")
    hatch = b'[tool.hatch.build.targets.wheel]\npackages = ["src/hatched"]\n'
    assert top_level([], hatch) == ("hatched",)
    assert top_level(["a/__init__.py"], b"not toml [") == ("a",)


def test_ids_match_in_every_form_and_a_function_names_its_cases() -> None:
    assert canonical("tests/test_x.py::test_route[é]") == canonical(
        "tests/test_x.py::test_route[\\xe9]"
    )
    assert canonical("tests/test_x.py::C::t[a]") == canonical("tests.test_x.C::t[a]")
    known = ["t.py::f[1]", "t.py::f[2]", "t.py::g", "t.py::f_other"]
    assert expand(["t.py::f", "t.py::g", "t.py::f[2]", "t.py::h"], known) == {
        "t.py::f": ("t.py::f[1]", "t.py::f[2]"),
        "t.py::g": ("t.py::g",),
        "t.py::f[2]": ("t.py::f[2]",),
        "t.py::h": (),
    }


def test_a_find_that_ends_with_a_newline_stays_on_its_own_lines() -> None:
    from fidelity.controls.selection import find_lines

    text = "def do(f, x):\n    f(x)\n    return x\n\n\nY = 1\n"
    assert find_lines(text, "    f(x)\n    return x\n", "    return x\n") == ([2, 3], True)
    assert place("m.py", text, [2, 3], True).key == "m.py:1"


DELETES = """def do(f, x):
    f(x)
    return x


def other(x):
    return x
"""


def test_a_deleted_statement_leaves_a_blank_line_and_moves_nothing() -> None:
    """Red before: a deletion moved `other` up a line, so it selected every test that ran any
    function of the file, and the file was imported afresh where its code ran at import."""
    from fidelity.controls.inplace import in_place

    kept = in_place("m.py", DELETES, "    f(x)\n", "")
    assert kept == "\n" and DELETES.replace("    f(x)\n", kept).count("\n") == DELETES.count("\n")
    deletion = Control("d", "w", (Edit("m.py", find="    f(x)\n", replace=""),), ("pytest",))
    found = select(
        deletion,
        trace(ran=TestTrace(frozenset({"m.py:1"})), other=TestTrace(frozenset({"m.py:6"}))),
        {"m.py": DELETES},
    )
    assert found.ids == ("t.py::ran",) and found.swappable, found.why
    assert found.why == "1 of 2 tests: those that ran m.py:1 do()"


def test_an_edit_is_applied_as_written_where_blank_lines_would_change_the_code() -> None:
    from fidelity.controls.inplace import in_place

    text = 'def f():\n    """one\n    two\n    """\n    return 1\n'
    assert in_place("m.py", text, "    two\n", "") == "", "inside a string: blank lines are text"
    assert in_place("m.txt", DELETES, "    f(x)\n", "") == "", "not Python"
    assert in_place("m.py", DELETES, "    f(x)\n", "    f(x)\n    f(x)\n") == "    f(x)\n    f(x)\n"
    broken = "def f():\n    return 1\n"  # deleting the only statement leaves no body
    assert in_place("m.py", broken, "    return 1\n", "") == ""
    crlf = DELETES.replace("\n", "\r\n")
    assert in_place("m.py", crlf, "    f(x)\r\n", "") == "\r\n"
    cr = DELETES.replace("\n", "\r")  # red before: a lone \r was no line break
    assert in_place("m.py", cr, "    f(x)\r", "") == "\r"


def test_a_line_is_counted_as_python_counts_it() -> None:
    from fidelity.controls.inplace import breaks, line_of

    text = "a\r\nb\rc\nd"
    assert [line_of(text, i) for i in range(len(text))] == [1, 1, 1, 2, 2, 3, 3, 4]
    assert breaks(text) == 3 and breaks("x") == 0


def test_expanding_expected_ids_reads_each_known_id_once(monkeypatch) -> None:
    """Red before: every expected id canonicalised every known id (python-humanize: 452,454
    keys made in one controls run, the most time of fidelity's own per control)."""
    from fidelity.plugins import fidelity_testids

    made: list[str] = []
    real = fidelity_testids.canonical

    def counted(test_id: str) -> str:
        made.append(test_id)
        return real(test_id)

    monkeypatch.setattr(fidelity_testids, "canonical", counted)
    known = [f"t.py::f[{i}]" for i in range(300)] + ["t.py::g"]
    expected = [f"t.py::f[{i}]" for i in range(0, 300, 3)] + ["t.py::f", "t.py::g"]
    found = fidelity_testids.expand(expected, known)
    assert len(made) == len(known) + len(expected)
    assert found["t.py::f"] == tuple(known[:300]) and found["t.py::f[3]"] == ("t.py::f[3]",)


def test_a_file_spelled_with_dot_slash_is_the_trees_file() -> None:
    """Red before: `./m.py` never matched the trace's `m.py`, so a function that also ran
    outside any test was narrowed to the tests that ran it."""
    dotted = Control("c", "w", (Edit("./m.py", find="return x + LIMIT", replace="return x"),), ())
    outside = Trace(
        {"t.py::a": TestTrace(frozenset({"m.py:6"})), "t.py::b": TestTrace()},
        TestTrace(frozenset({"m.py:6"})),
    )
    assert select(dotted, outside, {"m.py": SOURCE, "./m.py": SOURCE}).ids is None
    assert dotted.edits[0].file == "m.py"
