"""The one place that starts processes: argv lists, timeouts, process-group kills.

Every child runs in its own session so that a timeout or Ctrl-C kills the whole group it
spawned, not just the direct child (a shell or `python -m` wrapper would otherwise leave
grandchildren holding the output files open).
"""

from __future__ import annotations

import contextlib
import enum
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


class ProcStatus(enum.StrEnum):
    OK = "ok"
    FAILED = "failed"  # exited non-zero
    CRASHED = "crashed"  # killed by a signal
    TIMEOUT = "timeout"
    NOT_FOUND = "not-found"  # executable missing or not executable


@dataclass(frozen=True, slots=True)
class ProcResult:
    status: ProcStatus
    returncode: int | None
    duration_s: float
    stdout: bytes = b""
    stderr: bytes = b""
    error: str = ""


def child_env() -> dict[str, str]:
    """The environment for code under test: the caller's, less every GIT_* variable.

    Inside a git hook GIT_DIR and GIT_INDEX_FILE point at the user's repository; a case or
    test that runs git would otherwise act on the user's index instead of its worktree.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole group, reap it and close its pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=5)
    proc.wait()


def kill_all() -> None:
    """Kill every process group still running; called on Ctrl-C before cleanup."""
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _kill_group(p)


def run(
    argv: Sequence[str] | str,
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    shell: bool = False,
    stdin: bytes | None = None,
) -> ProcResult:
    """Run one command to completion; never raises for a command that fails to start or run.

    Output goes to the given log files (one file for both when the paths are equal), else
    is captured in memory. On timeout or KeyboardInterrupt the whole process group is
    killed (the interrupt is re-raised).
    """
    start = time.monotonic()
    merged = stdout_path is not None and stdout_path == stderr_path
    out_f = open(stdout_path, "wb") if stdout_path else None  # noqa: SIM115
    err_f = open(stderr_path, "wb") if stderr_path and not merged else None  # noqa: SIM115
    try:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=out_f or subprocess.PIPE,
                stderr=subprocess.STDOUT if merged else (err_f or subprocess.PIPE),
                shell=shell,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            return ProcResult(ProcStatus.NOT_FOUND, None, time.monotonic() - start, error=str(exc))
        with _live_lock:
            _live.add(proc)
        try:
            stdout, stderr = proc.communicate(stdin, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return ProcResult(
                ProcStatus.TIMEOUT,
                None,
                time.monotonic() - start,
                error=f"timed out after {timeout_s:g} s; process group killed",
            )
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            with _live_lock:
                _live.discard(proc)
        duration = time.monotonic() - start
        code = proc.returncode
        if shell and code in (126, 127):
            status = ProcStatus.NOT_FOUND
        elif code < 0:
            status = ProcStatus.CRASHED
        elif code == 0:
            status = ProcStatus.OK
        else:
            status = ProcStatus.FAILED
        return ProcResult(status, code, duration, stdout or b"", stderr or b"")
    finally:
        for f in (out_f, err_f):
            if f is not None:
                f.close()
