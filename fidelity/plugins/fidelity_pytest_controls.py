"""pytest plugin for mutation controls: which code each test runs, and which tests to run.

Loaded like the import guard (``-p fidelity_pytest_controls`` with this folder on
PYTHONPATH), so it imports only the standard library and pytest. Each part is switched on
by an environment variable naming a file:

- ``FIDELITY_COLLECTED`` (written): the node ids collected, in order.
- ``FIDELITY_EXPECT`` (read): test ids a control table expects; when one names no collected
  test, the run stops after collection (exit 4), before any test runs.
- ``FIDELITY_TRACE`` (written): per test, the functions of the tree it ran (``path:line`` of
  each code object, ``path:0`` for a module body), the tree files it opened, whether it
  started a process, and the tree files any process opened while it ran (a fixture's setup
  counts for every test that uses the fixture, not only the first); what ran outside every
  test (collection, hooks); and the modules imported from outside the tree (what a warm
  interpreter may import ahead). `sys.settrace` sees only the calling thread and threads
  started after it; processes a test starts are not traced, but the kernel reports the files
  they open (``fidelity_watch``); where it cannot (no inotify, a queue overflow, bytecode
  kept outside the tree), the test is marked ``unseen`` and always selected.
- ``FIDELITY_PROBE`` (read): the files the controls edit, each with the statements whose
  instructions an edit changes (``fidelity.controls.linediff``). In the traced fork of a
  collected server (``fidelity_swap``) the tests' calls into those files, and starts of
  those statements, are recorded by probes in their code, not by tracing every call
  (``fidelity_probe``), which about doubled a run's time.
- ``FIDELITY_RAISES`` (read, then written): ``{"names": [...]}``, the classes a control
  table's `raises` names; after collection the file gets ``"unknown"``, those that are no
  exception class the tests can see (``fidelity_raises``).
- ``FIDELITY_SELECT`` (read): ``{"files": [...], "ids": [...]}``: test files outside the list
  are not collected, and collected tests outside the list are deselected.

Always on: every failing test carries a ``fidelity_failure`` property in the JUnit report,
how it failed (``assertion``, ``error`` or ``exception``) and its exception's class names
along the MRO, so that a control caught only by a crash is told from one caught by a test's
assertion (``fidelity.controls.failkinds`` reads it).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import fidelity_probe
import fidelity_raises
import fidelity_testids
import fidelity_watch
import pytest

COLLECTED_ENV = "FIDELITY_COLLECTED"
EXPECT_ENV = "FIDELITY_EXPECT"
TRACE_ENV = "FIDELITY_TRACE"
SELECT_ENV = "FIDELITY_SELECT"
RAISES_ENV = "FIDELITY_RAISES"
PROBE_ENV = "FIDELITY_PROBE"
ROOT_ENV = "FIDELITY_GUARD_ROOT"
UNKNOWN_EXIT = 4
FAILURE_PROPERTY = "fidelity_failure"
# exceptions that say the code could not run as written, not that it behaved differently
_CRASHES = (ImportError, NameError, AttributeError, TypeError, SyntaxError)
_SPAWN = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}
)


def _root() -> str:
    return os.path.realpath(os.environ.get(ROOT_ENV, "") or os.getcwd())


def _write(env: str, data: object) -> None:
    path = os.environ.get(env)
    if path:
        Path(path).write_text(json.dumps(data), encoding="utf-8")


def _read(env: str) -> Any:
    path = os.environ.get(env)
    return json.loads(Path(path).read_text(encoding="utf-8")) if path else None


class Seen:
    """What one test (or one fixture's setup, or everything outside tests) touched."""

    __slots__ = ("code", "keys", "opened", "spawned", "watched", "unseen")

    def __init__(self) -> None:
        self.code: set[tuple[str, int]] = set()  # (path in the tree, first line)
        self.keys: set[str] = set()  # `path:line`, from probes (`fidelity_probe`)
        self.opened: set[str] = set()
        self.spawned = False
        self.watched: set[str] = set()  # tree files opened by any process while it ran
        self.unseen = False  # a process it started may have opened files not seen

    def merge(self, other: Seen) -> None:
        self.code |= other.code
        self.keys |= other.keys
        self.opened |= other.opened
        self.spawned = self.spawned or other.spawned
        self.watched |= other.watched
        self.unseen = self.unseen or other.unseen


class Tracer:
    """Functions of the tree entered, attributed to whatever is current."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.prefix = root + os.sep
        self.inside: dict[object, str] = {}  # a module's __file__ -> its path in the tree, or ''
        self.outside = Seen()
        self.current = self.outside
        self.tests: dict[str, Seen] = {}
        self.fixtures: dict[int, Seen] = {}
        self.durations: dict[str, float] = {}
        self.active = False
        self.watch: fidelity_watch.Watch | None = None
        self.watch_tried = False
        self.probes: fidelity_probe.Probes | None = None
        self.refused = ""  # why probes could not be used, when they were asked for

    def switch(self, seen: Seen) -> None:
        """Make seen current, after crediting what processes opened to the one before.
        The watch starts at the first test, after collection (its imports are no test's)."""
        if not self.watch_tried:
            self.watch_tried = True
            self.watch = fidelity_watch.Watch.start(self.root)
        elif self.watch is not None:
            opened, lost = self.watch.drain()
            self.current.watched |= opened
            self.current.unseen = self.current.unseen or lost
        self.current = seen

    def _relative(self, name: str) -> str | None:
        if not name or name.startswith("<"):  # <frozen os>, <string>: no file of the tree
            return None
        real = os.path.realpath(name)  # a relative name is relative to the working directory
        return real[len(self.prefix) :] if real.startswith(self.prefix) else None

    def make_trace(self) -> Callable[[FrameType, str, object], None]:
        """The trace function: kept small, since it runs on every call in the process.

        It reads the frame's globals and line, not its code object: `frame.f_code` raises an
        audit event, which would run the audit hook on every call. At a call event the line
        is the code object's first line (a decorator's, if any); a generator resumed later
        reports its resume line instead, which names no function (the test that first ran
        it is the one that counts)."""
        inside = self.inside
        relative = self._relative
        tracer = self

        def trace(frame: FrameType, event: str, arg: object) -> None:
            file = frame.f_globals.get("__file__")
            rel = inside.get(file)
            if rel is None:
                rel = inside[file] = (relative(file) if isinstance(file, str) else None) or ""
            if rel:
                tracer.current.code.add((rel, frame.f_lineno))

        return trace

    def audit(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active:
            return
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            if _reading_source(sys._getframe(1)):
                return  # source read to compile it, or for Hypothesis's constants: no data
            raw = os.fsdecode(args[0])
            rel = self._relative(raw if os.path.isabs(raw) else os.path.join(os.getcwd(), raw))
            if rel is not None:
                self.current.opened.add(rel)
        elif event == "exec" and self.probes is not None and args:
            self.probes.executed(args[0])
        elif event in _SPAWN:
            self.current.spawned = True
            # a forked child runs what its parent loaded, opening nothing
            forked = event == "os.fork"
            if forked or self.watch is None or fidelity_watch.hides_bytecode(args):
                self.current.unseen = True

    def start(self) -> None:
        sys.addaudithook(self.audit)  # once: an audit hook cannot be removed
        self.resume()

    def resume(self) -> None:
        self.active = True
        trace = self.make_trace()
        threading.settrace(trace)
        sys.settrace(trace)

    def probe(
        self, rels: dict[str, list[str]], live: dict[str, Any], sources: dict[str, Any]
    ) -> bool:
        """Record the functions of the files rels names, and the statements it names in them,
        by probes, not by tracing every call (`fidelity_probe`); False, with `refused`
        saying why, when that cannot be done."""
        probes = fidelity_probe.Probes(self.root, rels, rels)
        record = lambda *keys: self.current.keys.update(keys)  # noqa: E731
        self.refused = fidelity_probe.start(probes, record, live, sources)
        self.probes = None if self.refused else probes
        self.active = not self.refused
        return self.active

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)
        self.active = False

    def keys(self, seen: Seen) -> list[str]:
        return sorted({f"{rel}:{line}" for rel, line in seen.code} | seen.keys)

    def probe_report(self) -> dict[str, Any]:
        if self.probes is None:
            return {"probe_refused": self.refused} if self.refused else {}
        return dict(self.probes.report())  # `Probes.report`

    def report(self, modules: list[str]) -> dict[str, Any]:
        return {
            "root": self.root,
            "tests": {
                nodeid: {
                    "code": self.keys(seen),
                    "opened": sorted(seen.opened),
                    "spawned": seen.spawned,
                    "watched": sorted(seen.watched),
                    "unseen": seen.unseen,
                    "duration_s": round(self.durations.get(nodeid, 0.0), 6),
                }
                for nodeid, seen in self.tests.items()
            },
            "outside": {
                "code": self.keys(self.outside),
                "opened": sorted(self.outside.opened),
                "spawned": self.outside.spawned,
            },
            "modules": modules,
            **self.probe_report(),
        }


# readers of the tree's source that are no data read: the import system and pytest's
# rewriting importer compile it; Hypothesis's plugin mines every local module's constants at
# collection (which made every edit of an imported module select every test); and doctest
# collection, below
_SOURCE_READERS = (
    f"{os.sep}_pytest{os.sep}assertion{os.sep}",
    f"{os.sep}hypothesis{os.sep}internal{os.sep}constants_ast.py",
    # `--doctest-modules` reads each module's source for its examples at collection (which
    # made every edit of a module with doctests select every test); each doctest item
    # counts its own file as read instead (`pytest_runtest_protocol`)
    f"{os.sep}doctest.py",
)


def _reading_source(frame: FrameType | None) -> bool:
    """Whether the code that opened a file reads source for its own use (`_SOURCE_READERS`,
    the import system), found from the nearest frames."""
    for _ in range(4):
        if frame is None:
            return False
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib._bootstrap") or any(
            reader in name for reader in _SOURCE_READERS
        ):
            return True
        frame = frame.f_back
    return False


_TRACER = Tracer(_root()) if os.environ.get(TRACE_ENV) else None
if _TRACER is not None:  # from plugin import on: conftest modules and collection count too
    _TRACER.start()


def pause_tracing() -> None:
    """For ``fidelity_swap``, once collection is done: its own work (reading every source of
    the tree) is nobody's test and no data read; a traced child resumes, any other drops."""
    if _TRACER is not None:
        _TRACER.stop()


def resume_tracing(
    live: dict[str, list[object]] | None = None, sources: dict[str, bytes | None] | None = None
) -> None:
    """In the forked child that is the traced run of the unmodified tree: by probes in the
    files ``FIDELITY_PROBE`` names, given the server's live functions and sources of the
    tree, else (or where they cannot be used) by tracing every call."""
    if _TRACER is None:
        return
    rels = _read(PROBE_ENV)  # the files, or each file's statements to probe too
    rels = {str(r): [] for r in rels} if isinstance(rels, list) else rels
    probing = isinstance(rels, dict) and live is not None and sources is not None
    wanted = {str(r): [str(k) for k in keys] for r, keys in rels.items()} if probing else {}
    if not probing or not _TRACER.probe(wanted, live or {}, sources or {}):
        _TRACER.resume()


def drop_tracing() -> None:
    """In a forked child that runs a control: nothing is traced and no trace is written (the
    unmodified run's files belong to the unmodified run), and the control's tests, and what
    they start, see no trace settings, as in a control's own run."""
    global _TRACER
    if _TRACER is not None:
        _TRACER.stop()
    _TRACER = None
    for name in (TRACE_ENV, EXPECT_ENV, COLLECTED_ENV, PROBE_ENV):
        os.environ.pop(name, None)


def _foreign_modules(root: str) -> list[str]:
    """Top-level modules imported only from outside the tree, in import order."""
    prefix = root + os.sep
    tree = {n for n in os.environ.get("FIDELITY_GUARD_TREE", "").split(",") if n}
    inside: set[str] = set(tree)
    found: dict[str, None] = {}
    for name, module in list(sys.modules.items()):
        top = name.partition(".")[0]
        file = getattr(module, "__file__", None)
        places = [file] if file else list(getattr(module, "__path__", None) or [])
        if any(os.path.realpath(p).startswith(prefix) for p in places):
            inside.add(top)
        found[top] = None
    return [
        n for n in found if n not in inside and not n.startswith("fidelity_") and n != "__main__"
    ]


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Iterator[None]:
    if _TRACER is None:
        yield
        return
    outer, own = _TRACER.current, Seen()
    _TRACER.switch(own)
    try:
        yield
    finally:
        _TRACER.switch(outer)
        if own.spawned and getattr(fixturedef, "scope", "function") != "function":
            own.unseen = True  # its processes may serve later tests, opening nothing then
        outer.merge(own)
        _TRACER.fixtures.setdefault(id(fixturedef), Seen()).merge(own)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: object) -> Iterator[None]:
    if _TRACER is None:
        yield
        return
    seen = Seen()
    source = _TRACER._relative(str(item.path)) if type(item).__name__ == "DoctestItem" else None
    if source:  # a doctest's examples are its file's text: an edit of the file selects it
        seen.opened.add(source)
    _TRACER.switch(seen)
    start = time.perf_counter()
    try:
        yield
    finally:
        _TRACER.durations[item.nodeid] = time.perf_counter() - start
        _TRACER.switch(_TRACER.outside)
        info = getattr(item, "_fixtureinfo", None)
        for defs in getattr(info, "name2fixturedefs", {}).values():
            for fixturedef in defs:
                fixture = _TRACER.fixtures.get(id(fixturedef))
                if fixture is not None:
                    seen.merge(fixture)
        _TRACER.tests[item.nodeid] = seen


_SELECT = _read(SELECT_ENV)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip test files that hold no selected test (their modules are not even imported)."""
    if _SELECT is None or collection_path.suffix != ".py" or collection_path.name == "conftest.py":
        return None
    try:
        rel = collection_path.resolve().relative_to(Path(config.rootpath).resolve()).as_posix()
    except ValueError:
        return None
    return None if rel in _SELECT["files"] else True


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if _SELECT is None:
        return
    wanted = set(_SELECT["ids"])
    keep = [i for i in items if i.nodeid in wanted]
    dropped = [i for i in items if i.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    ids = [item.nodeid for item in session.items]
    _write(COLLECTED_ENV, ids)
    raises = _read(RAISES_ENV)
    if raises is not None:
        names = [str(n) for n in raises.get("names", [])]
        unknown = [n for n in names if not fidelity_raises.known(n)]
        _write(RAISES_ENV, {"names": names, "unknown": unknown})
    expected = _read(EXPECT_ENV)
    if expected:
        found = fidelity_testids.expand(expected, ids)
        unknown = [e for e, hits in found.items() if not hits]
        if unknown:
            pytest.exit(
                f"fidelity: the control table expects tests that were not collected: "
                f"{', '.join(unknown)}",
                returncode=UNKNOWN_EXIT,
            )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _TRACER is not None and _TRACER.active:
        _TRACER.stop()
        _write(TRACE_ENV, _TRACER.report(_foreign_modules(_TRACER.root)))


def failure_kind(exc_type: type[BaseException]) -> str:
    """`assertion` (an assert, `pytest.fail`, `pytest.raises` that saw nothing), `error` (the
    code could not run as written: Python's own crash classes) or `exception` (anything else,
    a class of the code's own too: attrs' `FrozenInstanceError` is an `AttributeError`)."""
    if issubclass(exc_type, (AssertionError, pytest.fail.Exception)):  # any Python pytest runs on
        return "assertion"
    crash = issubclass(exc_type, _CRASHES) and exc_type.__module__ == "builtins"
    return "error" if crash else "exception"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or not report.failed:
        return
    if any(name == FAILURE_PROPERTY for name, _ in item.user_properties):
        return  # the first failing phase says how the test failed
    kind = call.excinfo.type
    names = [c.__name__ for c in kind.__mro__ if c is not object]  # `raises` may name any
    # the teardown report copies the item's properties, and JUnit writes them from there
    item.user_properties.append((FAILURE_PROPERTY, " ".join([failure_kind(kind), *names])))
