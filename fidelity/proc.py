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
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fidelity import procargs, procfs, procwait


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
    leftover: tuple[str, ...] = ()  # processes the command left running, killed
    cpu_s: float | None = None  # CPU of the process tree, when the wait could read it


def child_env() -> dict[str, str]:
    """The environment for code under test: the caller's, less every GIT_* variable.

    Inside a git hook GIT_DIR and GIT_INDEX_FILE point at the user's repository; a case or
    test that runs git would otherwise act on the user's index instead of its worktree.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


_live: set[subprocess.Popen[bytes]] = set()
# held while a child is created and registered, and while strays are reaped, so a child
# between fork and registration is never mistaken for a stray
_live_lock = threading.Lock()
MARKER_ENV = "FIDELITY_CASE"


class Cancel:
    """A run's cancellation token, passed down to the work it stops (one per run, so two
    runs in one process stop apart). Once set, nothing new starts under it; `kill` kills
    the process groups started with it (`run(..., cancel=...)`, `start`) still running."""

    __slots__ = ("_event", "_procs")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._procs: set[subprocess.Popen[bytes]] = set()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def stop(self) -> None:
        """Set, then kill what runs: nothing starts after, nothing running goes on."""
        self.set()
        self.kill()

    def kill(self) -> None:
        """Kill every process group started with this token that is still running. Only the
        signal: the thread that started a process reaps it (reading its pipes from here
        would race that thread's own read)."""
        with _live_lock:
            for p in self._procs:
                if p in _live:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(p.pid, signal.SIGKILL)

    def _add(self, child: subprocess.Popen[bytes]) -> None:
        """Called with _live_lock held, as the child is registered (finished ones are
        dropped); a child started after the token was set is killed at once."""
        self._procs = {p for p in self._procs if p in _live}
        self._procs.add(child)
        if self._event.is_set():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)


class _Subreaper:
    """The child-subreaper flag (Linux), which the kernel keeps once per process: on while
    any run in this process holds it, off when the last one leaves. Counted, so one run
    ending never turns adoption off under another that is still running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self.on = False

    def hold(self) -> bool:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                self.on = _subreaper(True)
            return self.on

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self.on:
                _subreaper(False)
                with _live_lock:
                    _strays(None)
                self.on = False


def _subreaper(on: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


_PR_SET_CHILD_SUBREAPER = 36
_SUBREAPER = _Subreaper()  # the kernel's flag is per process, so its count is too


@contextlib.contextmanager
def adopting() -> Iterator[bool]:
    """While inside, orphaned descendants (Linux) come back to this process instead of
    init, so a process that escaped its group with setsid() can be found and killed when
    its case ends. When the last holder leaves, adopted zombies are reaped and adoption
    stops, so a long-lived caller (a test session, a library user) is not left holding
    orphans."""
    try:
        yield _SUBREAPER.hold()
    finally:
        _SUBREAPER.release()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole group, reap it and close its pipes."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=5)
    proc.wait()


def kill_all() -> None:
    """Kill every process group still running in this process; called by the command line
    on Ctrl-C before cleanup (a run stops its own processes with its `Cancel`)."""
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _kill_group(p)


def _strays(marker: str | None, spared: int | None = None) -> list[str]:
    """Kill and reap adopted descendants of one case (they carry its marker; with None, of
    any case), named unless in the group `spared` (killed at its timeout, dying); reap
    adopted zombies of no one's. Never waits on a process it did not kill: an unreadable
    environment (a process mid-exec) is no reason to block on it. Holds _live_lock."""
    ours = {p.pid for p in _live}
    needle = f"{MARKER_ENV}={marker}".encode() if marker is not None else None
    prefix = MARKER_ENV.encode() + b"="
    killed = []
    for pid in procfs.adopted() - ours:
        environ = procfs.read(f"/proc/{pid}/environ").split(b"\0")
        mine = needle in environ if needle else any(v.startswith(prefix) for v in environ)
        if mine:
            if spared is None or procfs.group_of(pid) != spared:
                killed.append(procfs.name(pid))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)  # killed: it goes at once
        elif procfs.state(pid) == b"Z":
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
    return killed


def leftovers(pgid: int, marker: str | None, timed_out: bool = False) -> tuple[str, ...]:
    """Processes a finished command left running, killed: its group, and (when adopting
    orphans) descendants that left the group but carry the command's marker. After a
    timeout the group was killed, not left: only what left the group is named (its dying
    members were, at random). One signal-0 probe when nothing was left."""
    found: list[str] = []
    if marker is not None and _SUBREAPER.on:
        with _live_lock:
            found += _strays(marker, pgid if timed_out else None)
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return tuple(found)
    members = procfs.group_members(pgid)
    found += [] if timed_out else [procfs.name(pid) for pid in members]
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if not members and not sys.platform.startswith("linux"):
        found.append(f"process group {pgid}: members still running")
    if members and marker is not None and _SUBREAPER.on:
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:  # the killed group's orphans reach us a moment later
            time.sleep(0.05)
            with _live_lock:
                found += _strays(marker, pgid if timed_out else None)
    return tuple(dict.fromkeys(found))


def kill_marked(prefix: str) -> tuple[str, ...]:
    """Kill every process whose marker lies under prefix (Linux /proc): the cases, and
    their descendants, of a run killed before it could clean up. Named, for the record."""
    killed = []
    for pid in procfs.marked(f"{MARKER_ENV}={prefix}".encode()):
        killed.append(procfs.name(pid))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return tuple(killed)


def _status(code: int, shell: bool) -> ProcStatus:
    if shell and code in (126, 127):
        return ProcStatus.NOT_FOUND
    if code < 0:
        return ProcStatus.CRASHED
    return ProcStatus.OK if code == 0 else ProcStatus.FAILED


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
    marker: str | None = None,
    cancel: Cancel | None = None,
    lazy_logs: bool = False,
) -> ProcResult:
    """Run one command to completion; never raises for a command that fails to start or run.

    Output goes to the given log files (one file for both when the paths are equal), else
    is captured in memory; with `lazy_logs` (and no stdin) it goes through pipes, and a log
    file is made only once bytes arrive for it (`procwait.Spool`). The wait blocks (no
    polling); at the timeout the whole process group is killed (where the wait is on a
    pidfd it ends then; else a timer thread kills it), as Ctrl-C does (the interrupt is
    re-raised). With a marker (set in the child's environment), processes the command
    leaves behind are killed and named in `leftover`. With a cancel token, its `kill`
    kills the command.
    """
    start = time.monotonic()
    sinks = procwait.Sinks.make(stdout_path, stderr_path, lazy_logs and stdin is None)
    child_env = dict(env) if env is not None else None
    if marker is not None:
        child_env = child_env if child_env is not None else dict(os.environ)
        child_env[MARKER_ENV] = marker
    try:
        try:
            proc = _launch(
                argv, sinks, cwd=cwd, env=child_env, stdin=stdin, shell=shell, cancel=cancel
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            return ProcResult(ProcStatus.NOT_FOUND, None, time.monotonic() - start, error=str(exc))
        except ValueError as exc:  # subprocess refuses a NUL in argv, cwd or env
            raise procargs.Unstartable(procargs.nul_words(argv, cwd, child_env)) from exc
        expired = threading.Event()
        cpu: list[float | None] = [None]
        try:
            stdout, stderr = _wait(proc, stdin, timeout_s, expired, sinks, cpu=cpu)
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            with _live_lock:
                _live.discard(proc)
        duration = time.monotonic() - start
        left = leftovers(proc.pid, marker, expired.is_set()) if marker is not None else ()
        if sinks.spool is not None:
            sinks.spool.drain(_DRAIN_S)  # what the group wrote before it ended or was killed
        if expired.is_set():
            error = f"timed out after {timeout_s:g} s; process group killed"
            return ProcResult(ProcStatus.TIMEOUT, None, duration, error=error, leftover=left)
        code = proc.returncode
        return ProcResult(
            _status(code, shell),
            code,
            duration,
            stdout or b"",
            stderr or b"",
            leftover=left,
            cpu_s=cpu[0],
        )
    finally:
        sinks.close()


_DEVNULL: list[int] = []  # a child's stdin: subprocess opened /dev/null anew for each


def _devnull() -> int:
    """/dev/null for reading, opened once per process (called with _live_lock held)."""
    if not _DEVNULL:
        _DEVNULL.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
    return _DEVNULL[0]


def _launch(
    argv: Sequence[str] | str,
    sinks: procwait.Sinks,
    *,
    cwd: Path | str | None,
    env: dict[str, str] | None,
    stdin: bytes | None,
    shell: bool,
    cancel: Cancel | None,
) -> subprocess.Popen[bytes]:
    """Start the child in its own session, registered (and with its cancel token) before
    any other thread can look for strays; the spool's child ends are closed here after."""
    try:
        with _live_lock:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE if stdin is not None else _devnull(),
                stdout=sinks.stdout,
                stderr=sinks.stderr,
                shell=shell,
                start_new_session=True,
            )
            _live.add(proc)
            if cancel is not None:
                cancel._add(proc)
        return proc
    finally:
        if sinks.spool is not None:
            sinks.spool.started()


_DRAIN_S = 1.0  # after the command ended: how long its pipes may take to reach their end


def _wait(
    proc: subprocess.Popen[bytes],
    stdin: bytes | None,
    timeout_s: float | None,
    expired: threading.Event,
    sinks: procwait.Sinks,
    *,
    cpu: list[float | None],
) -> tuple[bytes | None, bytes | None]:
    """Wait for the child. Output going to files: block until it exits (on a pidfd, or in
    waitpid while a timer enforces the timeout), so the case's wall time is its own
    (Popen.wait with a timeout polls); between its exit and its reaping, its tree's CPU
    goes into `cpu`. Output captured through pipes: communicate's own timeout, since a
    descendant that kept a pipe open would otherwise block the read after the group is
    killed."""
    if sinks.piped:
        try:
            return proc.communicate(stdin, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            expired.set()
            _kill_group(proc)
            return None, None
    waits = stdin is None and (timeout_s is not None or sinks.spool is not None)
    if waits and procwait.exit_or_kill(proc, timeout_s, expired, sinks.spool):
        cpu[0] = _reap(proc)  # it has exited, or its group was just killed: at once
        return None, None
    timer = procwait.timer(proc, timeout_s, expired)
    try:
        return proc.communicate(stdin)
    finally:
        if timer is not None:
            timer.cancel()


def _reap(proc: subprocess.Popen[bytes]) -> float | None:
    """Reap a child that has exited; the CPU seconds of its tree (itself and the descendants
    it waited for, user and system) from the wait4 that reaps it (its /proc stat read first
    cost four system calls a case); None when another waiter reaped it first."""
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:
        proc.wait()
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def start(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    stderr_path: Path,
    cancel: Cancel | None = None,
) -> subprocess.Popen[bytes] | None:
    """Start a long-lived child that talks over stdin and stdout (the controls' warm pytest),
    in its own session; `kill_all` (and its cancel token's `kill`) kills its group with the
    others. None if it cannot start. Stop it with `stop`."""
    try:
        with open(stderr_path, "ab") as err, _live_lock:
            child = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
            _live.add(child)
            if cancel is not None:
                cancel._add(child)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return None
    return child


def stop(child: subprocess.Popen[bytes]) -> None:
    """Kill a child from `start` with its whole group, and forget it."""
    _kill_group(child)
    with _live_lock:
        _live.discard(child)
