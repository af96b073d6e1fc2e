"""A collected pytest: import the unmodified tree and collect its tests once, then fork per
control and swap the control's edit in (``fidelity_codeswap``) instead of importing again.

Started by fidelity as ``python -m fidelity_swap`` in a lane's worktree while the tree is
unmodified, with the environment a cold run there gets and ``FIDELITY_SWAP_ARGS`` holding
the pytest arguments (JSON). It speaks over its standard input and a copy of its standard
output; pytest's own output, and the children's once they are forked, go to files. When
collection is done it answers ``{"ready": PID}`` (or ``{"failed": WHY}`` and leaves). Then,
per request line (``{"edited": [PATH, ...], "ids": [...] or null, "env": {...}, "log":
PATH, "traced": BOOL, "tb": STYLE}``, made after the edit is on disk), it works out the
swaps; if one is refused it
answers ``{"unswappable": WHY}`` and the caller imports the tree afresh instead. Otherwise it
forks: the child points its output at the log, puts the new code on the live functions,
keeps only the chosen tests, and goes on into pytest's run loop, so the reports (JUnit and
the controls plugin's failure kinds) are written as in any run; it leaves with
``os._exit`` once they are (``fidelity_warm``). The server answers ``{"pid": N}`` and then
``{"exit": CODE}``. Standard library and pytest only.

Started with the controls plugin's trace switched on, the server is also the traced run of
the unmodified tree: collection is traced as in a cold run, the tracer pauses once it is
done, and the child of a ``"traced"`` request (no edit, every test) resumes it and writes
the trace (by probes in the files the controls edit, where it can: ``fidelity_probe``);
every other child drops it. So the tree is imported and collected once for both.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import types
from typing import IO, Any

import fidelity_codeswap as codeswap
import fidelity_warm
import pytest

ARGS_ENV = "FIDELITY_SWAP_ARGS"
ROOT_ENV = "FIDELITY_GUARD_ROOT"


def _unusable(session: pytest.Session) -> str:
    """'' when the collected session can be forked per control, else why not."""
    config = session.config
    if session.testsfailed:
        return "collection failed"
    if config.pluginmanager.has_plugin("dsession") or config.getoption("numprocesses", None):
        return "pytest-xdist distributes the tests"
    if config.getoption("collectonly", False):
        return "--collect-only"
    return str(codeswap.usable())


class Live:
    """The unmodified tree as this process holds it: each file's source and the live
    functions that run its code."""

    def __init__(self, root: str) -> None:
        prefix = os.path.realpath(root) + os.sep
        self.objects: dict[str, list[object]] = {}
        names: dict[str, str] = {}
        gc.unfreeze()  # a suite's own gc.freeze() hides what it froze from gc.get_objects()
        for obj in codeswap.live_objects(gc.get_objects()):
            name = codeswap.code_file(obj)
            real = names.get(name)
            if real is None:
                real = names[name] = os.path.realpath(name) if name[:1] not in ("<", "") else ""
            if real.startswith(prefix):
                self.objects.setdefault(real, []).append(obj)
        files = set(self.objects)
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and file.endswith(".py"):
                real = os.path.realpath(file)
                if real.startswith(prefix):
                    files.add(real)
        self.sources = {f: _read(f) for f in files}

    def swaps(self, root: str, edited: list[str]) -> list[tuple[types.FunctionType, Any]]:
        out = []
        for rel in edited:
            real = os.path.realpath(os.path.join(root, rel))
            old = self.sources.get(real)
            if old is None:
                continue  # not imported here: a child that needs it imports it from disk
            if not real.endswith(".py"):
                raise codeswap.Refused(f"{rel} is not Python")
            new = _read(real)
            if new is None:
                raise codeswap.Refused(f"the edit removes {rel}, which is imported")
            out += codeswap.swaps(old, new, real, self.objects.get(real, ()))
        return out


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


class Collected:
    """The plugin that turns the session into the server once collection is done."""

    def __init__(self, requests: IO[str], proto: IO[str], root: str) -> None:
        self.requests = requests  # copies of stdin and stdout: pytest's capture owns those
        self.proto = proto
        self.root = root

    def answer(self, data: dict[str, Any]) -> None:
        self.proto.write(json.dumps(data) + "\n")
        self.proto.flush()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> object:
        why = _unusable(session)
        if why:
            self.answer({"failed": why})
            os._exit(0)
        _tracing("pause_tracing")
        live = Live(self.root)
        gc.freeze()  # forked children then leave the imported objects' pages shared
        self.answer({"ready": os.getpid(), "collected": len(session.items)})
        for line in self.requests:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                swaps = live.swaps(self.root, [str(e) for e in request.get("edited") or ()])
            except codeswap.Refused as exc:
                self.answer({"unswappable": str(exc)})
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _enter(session, request, swaps, (self.requests, self.proto), live)
                return None  # the child goes on into pytest's own run loop
            self.answer({"pid": pid})
            _, status = os.waitpid(pid, 0)
            self.answer({"exit": os.waitstatus_to_exitcode(status)})
        os._exit(0)


def _enter(
    session: pytest.Session,
    request: dict[str, Any],
    swaps: list[tuple[types.FunctionType, Any]],
    channels: tuple[IO[str], IO[str]],
    live: Live,
) -> None:
    """In the child: the control's output, its code and its tests; None lets pytest's own
    run loop run them. Anything that goes wrong here ends the child with code 70."""
    try:
        for channel in channels:
            os.close(channel.fileno())
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for fd in (1, 2, *_saved_fds(session.config)):
            os.dup2(log, fd)
        os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
        importlib.invalidate_caches()
        if request.get("traced"):
            _tracing("resume_tracing", live.objects, live.sources)
        else:
            _tracing("drop_tracing")
        if request.get("tb"):
            session.config.option.tbstyle = str(request["tb"])
        for function, code in swaps:
            function.__code__ = code
        ids = request.get("ids")
        if ids is not None:
            wanted = set(ids)
            dropped = [i for i in session.items if i.nodeid not in wanted]
            session.items[:] = [i for i in session.items if i.nodeid in wanted]
            if dropped:
                session.config.hook.pytest_deselected(items=dropped)
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(70)


def _tracing(what: str, *args: object) -> None:
    """Pause, resume or drop the controls plugin's tracer, when the server was started as the
    traced run of the unmodified tree (the plugin is loaded as a module of that name); it
    resumes with the live functions and sources of the tree, for its probes."""
    plugin = sys.modules.get("fidelity_pytest_controls")
    if plugin is not None:
        getattr(plugin, what)(*args)


def _saved_fds(config: pytest.Config) -> list[int]:
    """The descriptors pytest's capture puts back on 1 and 2 between tests: they still name
    the server's output, so the child points them at its log too."""
    capman = config.pluginmanager.getplugin("capturemanager")
    capturing = getattr(capman, "_global_capturing", None)
    found = []
    for cap in (getattr(capturing, "out", None), getattr(capturing, "err", None)):
        saved = getattr(cap, "targetfd_save", None)
        if isinstance(saved, int):
            found.append(saved)
    return found


def serve() -> None:
    args = [str(a) for a in json.loads(os.environ.pop(ARGS_ENV, "[]"))]
    requests = os.fdopen(os.dup(0), "r")
    proto = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # pytest's output goes to the server's log; answers go to proto
    root = os.environ.get(ROOT_ENV) or os.getcwd()
    server = Collected(requests, proto, root)
    sys.argv = ["pytest", *args]
    code = pytest.main(args, plugins=[server, fidelity_warm.leave_early()])
    server.answer({"failed": f"pytest ended before its tests ran (exit {int(code)})"})
    os._exit(0)


if __name__ == "__main__":
    serve()
