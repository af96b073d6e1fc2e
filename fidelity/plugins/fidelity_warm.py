"""A warm pytest: import pytest and the suite's third-party modules once, fork per run.

Started by fidelity as ``python -m fidelity_warm`` in a control's worktree, with the same
environment a cold ``python -m pytest`` there would get, so ``sys.path`` is the same too.
``FIDELITY_WARM_PRELOAD`` names the top-level modules the unmodified run imported from
outside the tree; each is imported here (one that fails is skipped), and any module of the
tree that came in with them is forgotten again, so each run imports the tree afresh from
disk. Then, per line on stdin (``{"args": [...], "env": {...}, "log": PATH}``), it forks: the
child runs ``pytest.main(args)`` with output to the log, and the server answers
``{"pid": N}`` at once and ``{"exit": CODE}`` (a negative signal number if killed) when it
ends. Children stay in the server's process group, so killing the group stops everything.
Standard library and pytest only.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from typing import Any

PRELOAD_ENV = "FIDELITY_WARM_PRELOAD"
ROOT_ENV = "FIDELITY_GUARD_ROOT"


def _inside(module: object, prefix: str) -> bool:
    file = getattr(module, "__file__", None) or ""
    return bool(file) and os.path.realpath(file).startswith(prefix)


def plugin_modules() -> set[str]:
    """Top-level modules of every distribution that ships a pytest plugin: pytest marks them
    for assertion rewriting, and warns (an error under `filterwarnings = error`) when one was
    imported before it could rewrite it, so they are never imported ahead."""
    from importlib import metadata

    found: set[str] = set()
    for dist in metadata.distributions():
        if not any(ep.group == "pytest11" for ep in dist.entry_points):
            continue
        for path in dist.files or ():
            top = path.parts[0] if path.parts else ""
            if top.endswith(".py"):
                found.add(top[:-3])
            elif top and not top.endswith((".dist-info", ".egg-info", ".pth")) and "." not in top:
                found.add(top)
    return found


def preload(names: list[str], root: str) -> None:
    """Import names ahead; one that fails, or that pulls in a pytest plugin's modules, is
    rolled back and left to the child."""
    plugins = plugin_modules()
    for name in names:
        if name in plugins:
            continue
        before = set(sys.modules)
        with contextlib.suppress(BaseException):  # a module that will not import ahead waits
            importlib.import_module(name)
        added = set(sys.modules) - before
        if any(m.partition(".")[0] in plugins for m in added) or name not in sys.modules:
            for m in added:
                sys.modules.pop(m, None)
    prefix = os.path.realpath(root) + os.sep
    for key, module in list(sys.modules.items()):
        if _inside(module, prefix):
            del sys.modules[key]


def _child(request: dict[str, Any]) -> int:
    import pytest

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
    importlib.invalidate_caches()
    args = [str(a) for a in request["args"]]
    sys.argv = ["pytest", *args]
    return int(pytest.main(args, plugins=[leave_early()]))


def leave_early() -> object:
    """A plugin that leaves the forked child as soon as pytest has written its reports: the
    session-end work after them (a forced garbage collection over everything the warm
    process imported, then each plugin's cleanup) decides nothing a control reads, and cost
    about a tenth of a control's run."""
    import pytest

    class LeaveEarly:
        def __init__(self) -> None:
            self.session: pytest.Session | None = None

        def pytest_sessionstart(self, session: pytest.Session) -> None:
            self.session = session

        @pytest.hookimpl(tryfirst=True)
        def pytest_unconfigure(self, config: pytest.Config) -> None:
            if self.session is not None:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(int(self.session.exitstatus))

    return LeaveEarly()


def _answer(data: dict[str, int]) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def serve() -> None:
    names = json.loads(os.environ.pop(PRELOAD_ENV, "[]"))
    import pytest  # noqa: F401 - warm: the point of this process

    preload(names, os.environ.get(ROOT_ENV) or os.getcwd())
    _answer({"ready": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                code = _child(request)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _answer({"pid": pid})
        _, status = os.waitpid(pid, 0)
        _answer({"exit": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    serve()
