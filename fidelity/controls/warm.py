"""The clients of a warm pytest: one per lane and kind, forked per control.

Used only where it is sound: the command is `PYTHON -m pytest ...` (so the interpreter and
`sys.path` are known), and the server runs in the lane's worktree with the same environment
a cold run gets. A `fidelity_swap` server holds the unmodified tree imported and collected,
and swaps an edit that lands only in function bodies into its forked child; where it
refuses, a `fidelity_warm` server's child imports the tree afresh. A server that does not
start, or dies, leaves the lane cold; a run that times out kills the server's whole group
(the child and anything it started) and the next control starts a new one.
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
from typing import Any

from fidelity import proc

MODULE = "fidelity_warm"
SWAP_MODULE = "fidelity_swap"
PRELOAD_ENV = "FIDELITY_WARM_PRELOAD"
SWAP_ARGS_ENV = "FIDELITY_SWAP_ARGS"
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
    refused: str = ""  # a collected server would not swap the edit in (why): nothing ran


class Server:
    """One warm pytest process; each request forks a child.

    Two kinds: `start` imports pytest and the suite's third-party modules and imports the
    tree afresh in every child (`run`); `collect` imports the unmodified tree and collects
    its tests once, and each child swaps a control's edit into the live functions (`swap`),
    which the server refuses, with the reason, when that would not equal a fresh import.
    """

    def __init__(self, child: subprocess.Popen[bytes], args: Sequence[str] = ()) -> None:
        self.child = child
        self.args = tuple(args)  # the pytest arguments a collected server was started with
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
        return cls._ready(argv, cwd, full, log, timeout_s=READY_TIMEOUT_S, cancel=cancel)

    @classmethod
    def collect(
        cls,
        python: str,
        cwd: Path,
        env: Mapping[str, str],
        args: Sequence[str],
        log: Path,
        *,
        timeout_s: float,
        cancel: proc.Cancel | None = None,
    ) -> Server | None:
        """A collected server for `swap`, started while the tree is unmodified; None when it
        cannot serve (it says why in its log)."""
        full = {**env, SWAP_ARGS_ENV: json.dumps(list(args))}
        argv = [python, "-m", SWAP_MODULE]
        return cls._ready(argv, cwd, full, log, timeout_s=timeout_s, cancel=cancel, args=args)

    @classmethod
    def _ready(
        cls,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
        *,
        timeout_s: float,
        cancel: proc.Cancel | None,
        args: Sequence[str] = (),
    ) -> Server | None:
        child = proc.start(argv, cwd=cwd, env=env, stderr_path=log, cancel=cancel)
        if child is None:
            return None
        server = cls(child, args)
        answer = server._read(timeout_s)
        if answer is None or "ready" not in answer:
            if answer is not None and "failed" in answer:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"fidelity: not used: {answer['failed']}\n")
            server.close()
            return None
        return server

    def _read(self, timeout_s: float | None) -> dict[str, Any] | None:
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
        """The tests in a child that imports the tree afresh (a `start` server)."""
        return self._call({"args": list(args), "env": dict(env), "log": str(log)}, timeout_s)

    def swap(
        self,
        edited: Sequence[str],
        ids: Sequence[str] | None,
        env: Mapping[str, str],
        log: Path,
        timeout_s: float,
        *,
        traced: bool = False,
        tb: str = "",
    ) -> WarmResult:
        """The chosen tests (None: all) in a child with the edit swapped in (a `collect`
        server); `refused` says why not, and then nothing ran. `traced`: the child is the
        traced run of the unmodified tree (a server started with the trace switched on);
        `tb`: the child's `--tb` style, which the server's arguments leave out."""
        request = {
            "edited": list(edited),
            "ids": None if ids is None else list(ids),
            "env": dict(env),
            "log": str(log),
            "traced": traced,
            "tb": tb,
        }
        return self._call(request, timeout_s)

    def _call(self, request: Mapping[str, Any], timeout_s: float) -> WarmResult:
        start = time.monotonic()
        assert self.child.stdin is not None
        try:
            self.child.stdin.write((json.dumps(request) + "\n").encode())
            self.child.stdin.flush()
        except OSError as exc:
            return WarmResult(proc.ProcStatus.NOT_FOUND, None, 0.0, str(exc), lost=True)
        started = self._read(30.0)
        if started is not None and "unswappable" in started:
            return WarmResult(proc.ProcStatus.NOT_FOUND, None, 0.0, refused=started["unswappable"])
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
        code = int(done["exit"])
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
