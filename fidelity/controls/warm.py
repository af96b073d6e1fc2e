"""The client of a warm pytest (`fidelity_warm`): one per lane, forked per control.

Used only where it is sound: the command is `PYTHON -m pytest ...` (so the interpreter and
`sys.path` are known), the server runs in the lane's worktree with the same environment a
cold run gets, and the tree's own modules are imported afresh in every child. A server that
does not start, or dies, leaves the lane cold; a run that times out kills the server's whole
group (the child and anything it started) and the next control starts a new one.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fidelity import proc

MODULE = "fidelity_warm"
PRELOAD_ENV = "FIDELITY_WARM_PRELOAD"
READY_TIMEOUT_S = 120.0


def pytest_args(command: Sequence[str]) -> list[str] | None:
    """The arguments after `-m pytest`, or None when the command is not `PYTHON -m pytest`."""
    if len(command) >= 3 and command[1] == "-m" and command[2] == "pytest":
        return list(command[3:])
    return None


@dataclass(frozen=True, slots=True)
class WarmResult:
    status: proc.ProcStatus
    returncode: int | None
    duration_s: float
    error: str = ""
    lost: bool = False  # the server was gone before the run ended: run it cold instead


class Server:
    """One warm pytest process; `run` forks a child per call."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        self.child = child
        self._buffer = b""

    @classmethod
    def start(
        cls,
        python: str,
        cwd: Path,
        env: Mapping[str, str],
        preload: Sequence[str],
        log: Path,
        *,
        cancel: proc.Cancel | None = None,
    ) -> Server | None:
        full = {**env, PRELOAD_ENV: json.dumps(list(preload))}
        argv = [python, "-m", MODULE]
        child = proc.start(argv, cwd=cwd, env=full, stderr_path=log, cancel=cancel)
        if child is None:
            return None
        server = cls(child)
        if server._read(READY_TIMEOUT_S) is None:
            server.close()
            return None
        return server

    def _read(self, timeout_s: float | None) -> dict[str, int] | None:
        """The next answer line, or None on timeout or when the server is gone."""
        assert self.child.stdout is not None
        fd = self.child.stdout.fileno()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def run(
        self, args: Sequence[str], env: Mapping[str, str], log: Path, timeout_s: float
    ) -> WarmResult:
        start = time.monotonic()
        request = {"args": list(args), "env": dict(env), "log": str(log)}
        assert self.child.stdin is not None
        try:
            self.child.stdin.write((json.dumps(request) + "\n").encode())
            self.child.stdin.flush()
        except OSError as exc:
            return WarmResult(proc.ProcStatus.NOT_FOUND, None, 0.0, str(exc), lost=True)
        started = self._read(30.0)
        if started is None or "pid" not in started:
            self.close()
            return WarmResult(proc.ProcStatus.NOT_FOUND, None, 0.0, "did not fork", lost=True)
        done = self._read(max(0.0, timeout_s - (time.monotonic() - start)))
        duration = time.monotonic() - start
        if done is None or "exit" not in done:
            gone = not self.alive
            self.close()
            if gone:
                return WarmResult(proc.ProcStatus.NOT_FOUND, None, duration, "died", lost=True)
            return WarmResult(
                proc.ProcStatus.TIMEOUT,
                None,
                duration,
                f"timed out after {timeout_s:g} s; process group killed",
            )
        code = done["exit"]
        if code < 0:
            return WarmResult(proc.ProcStatus.CRASHED, code, duration)
        return WarmResult(
            proc.ProcStatus.OK if code == 0 else proc.ProcStatus.FAILED, code, duration
        )

    @property
    def alive(self) -> bool:
        return self.child.poll() is None

    def close(self) -> None:
        proc.stop(self.child)
