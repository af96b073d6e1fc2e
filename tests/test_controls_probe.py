"""Probes in the files a control table edits, in place of tracing every call (issue 38): the
keys they record are those `sys.settrace` gives the same code, on every shape of code, and
whatever they cannot see makes the file `unprobed` or is refused. Each run is a real
interpreter (audit hooks, builtins and finders last as long as their process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fidelity.controls.selection import parse_trace, select
from fidelity.controls.table import Control, Edit
from fidelity.plugins import fidelity_probe as probe

PLUGINS = Path(probe.__file__).parent

SHAPES = '''"""shapes"""
from __future__ import annotations

import functools

TABLE = {k: k * 2 for k in range(3)}


def deco(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)

    return inner


@deco
def decorated(x):
    """Add one."""
    return x + 1


def outer(x):
    def nested(y):
        return [y * i for i in range(x)]

    return nested(2)


square = lambda v: v * v  # noqa: E731


def gen(n):
    yield from range(n)


async def coro():
    return 3


@functools.total_ordering
class Box:
    """A box."""

    SIZES = [s for s in (1, 2)]

    @staticmethod
    def make():
        return Box()

    @property
    def size(self):
        return len(self.SIZES)

    def __eq__(self, other):
        return True

    def __lt__(self, other):
        return False

    class Inner:
        def hello(self):
            return "hi"


def unused():
    return 0


def defaults(x=[i for i in range(2)]):
    return x
'''

# what each "test" runs, by name; "import" is the module's own import
EXERCISES = {
    "import": "import shapes as m",
    "decorated": "m.decorated(1)",
    "outer": "m.outer(3)",
    "square": "m.square(3)",
    "gen": "list(m.gen(2))",
    "coro": "c = m.coro()\ntry:\n    c.send(None)\nexcept StopIteration:\n    pass",
    "box": "m.Box.make().size; m.Box() >= m.Box()",
    "inner": "m.Box.Inner().hello()",
    "none": "pass",
}

DRIVER = """
import builtins, importlib, json, os, sys
import fidelity_probe as probe

root, mode, exercises = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path.insert(0, root)
found, current = {}, set()

def record(*keys):
    current.update(keys)

def trace(frame, event, arg):
    file = frame.f_globals.get("__file__")
    if file and os.path.realpath(file) == os.path.realpath(os.path.join(root, "shapes.py")):
        current.add(f"shapes.py:{frame.f_lineno}")

probes = probe.Probes(root, ["shapes.py"])
if mode == "probe":
    sys.addaudithook(lambda e, a: probes.executed(a[0]) if e == "exec" and a else None)
    assert probe.start(probes, record, {}, {}) == ""
scope = {}
for name, code in exercises.items():
    current = set()
    if mode == "trace":
        sys.settrace(trace)
    exec(code, scope)
    sys.settrace(None)
    found[name] = sorted(current)
found["unprobed"] = sorted(probes.unprobed)
print(json.dumps(found))
"""


def _drive(root: Path, mode: str, exercises: dict[str, str]) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), mode, json.dumps(exercises)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PLUGINS), "PYTHONDONTWRITEBYTECODE": "1", "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _keys_of_code(source: str) -> set[str]:
    """Every key a code object of the source has, and a module body's."""
    keys = {"shapes.py:0"}
    todo = [compile(source, "shapes.py", "exec")]
    while todo:
        code = todo.pop()
        keys.add(f"shapes.py:{code.co_firstlineno}")
        todo += [c for c in code.co_consts if hasattr(c, "co_firstlineno")]
    return keys


def test_probes_record_the_keys_tracing_gives_on_every_shape_of_code(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    traced = _drive(tmp_path, "trace", EXERCISES)
    probed = _drive(tmp_path, "probe", EXERCISES)
    assert probed.pop("unprobed") == []
    traced.pop("unprobed")
    code = _keys_of_code(SHAPES)
    for name in EXERCISES:
        # tracing also reports a generator's resumes, at lines that start no code object
        want = [k for k in traced[name] if k in code]
        assert probed[name] == want, name
    assert probed["none"] == []
    assert "shapes.py:0" in probed["import"]
    assert len(probed["decorated"]) == 2, "the decorator's wrapper and the function"


def test_probed_code_keeps_docstrings_line_numbers_and_the_modules_names(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES + "\n\ndef fails():\n    raise ValueError\n")
    check = {
        "import": "import shapes as m, traceback",
        "docs": "assert m.__doc__ == 'shapes' and m.decorated.__doc__ == 'Add one.'",
        "class": "assert m.Box.__doc__ == 'A box.'",
        "names": "assert '__fidelity_probe__' not in vars(m)",
        "line": (
            "try:\n    m.fails()\nexcept ValueError as e:\n"
            "    assert e.__traceback__.tb_next.tb_lineno == "
            f"{(SHAPES + chr(10)).count(chr(10)) + 3}"
        ),
    }
    probed = _drive(tmp_path, "probe", check)
    assert probed["docs"] == probed["class"] == probed["names"] == []
    assert probed["line"] == [f"shapes.py:{(SHAPES + chr(10)).count(chr(10)) + 2}"]


def test_code_of_the_file_run_again_unprobed_makes_it_unprobed(tmp_path: Path) -> None:
    """Red before (audit check removed): a reload runs the plain code, which no probe sees."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    plain = {"import": "import shapes as m", "call": "m.square(2)"}
    assert _drive(tmp_path, "probe", plain)["unprobed"] == []
    again = {**plain, "runpy": f"import runpy; runpy.run_path({str(tmp_path / 'shapes.py')!r})"}
    assert _drive(tmp_path, "probe", again)["unprobed"] == ["shapes.py"]


def test_live_code_that_probes_cannot_replace_is_refused(tmp_path: Path) -> None:
    source = b"def gen():\n    yield 1\n\ndef f():\n    return 1\n"
    real = str(tmp_path / "m.py")
    scope: dict[str, object] = {}
    exec(compile(source, real, "exec", dont_inherit=True), scope)
    probes = probe.Probes(str(tmp_path), ["m.py"])
    swaps = probes.swaps({real: [scope["f"]]}, {real: source})
    assert not isinstance(swaps, str) and swaps[0][0] is scope["f"]
    suspended = scope["gen"]()  # type: ignore[operator]
    next(suspended)
    assert "suspended" in str(probes.swaps({real: [suspended]}, {real: source}))
    # code no compile of the file gives (assertion rewriting, code made at run time)
    other: dict[str, object] = {}
    exec(compile(b"def f():\n    return 2\n", real, "exec", dont_inherit=True), other)
    assert "does not give" in str(probes.swaps({real: [other["f"]]}, {real: source}))
    assert "could not be read" in str(probes.swaps({real: [scope["f"]]}, {real: None}))


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"probed": ["calc.py"], "unprobed": ["calc.py"]}, "loaded again"),
        ({"probed": ["other.py"]}, "other files"),
    ],
)
def test_a_file_probes_did_not_follow_selects_every_test(data: dict[str, object], why: str) -> None:
    """Red before (the check in `_broad` removed): a trace by probes holds nothing of a file
    they did not follow, or followed only in part, so no test would seem to run it."""
    tests = {"t::a": {"code": ["calc.py:1"]}, "t::b": {"code": []}, "t::c": {"code": []}}
    trace = {"tests": tests, **data}
    edit = Edit("calc.py", "return 1", "return 2")
    control = Control(id="c", why="w", edits=(edit,), command=("pytest",), caught_by=("t::b",))
    original = {"calc.py": "def f():\n    return 1\n"}
    chosen = select(control, parse_trace(trace), original)
    assert chosen.ids is None and why in chosen.why
    followed = select(control, parse_trace({"tests": tests, "probed": ["calc.py"]}), original)
    assert followed.ids == ("t::a", "t::b")
