"""Waiting for a child of `proc` without polling and without a thread per child: on its
pidfd (Linux), with its deadline as the poll's timeout, copying its output from pipes into
log files that are made only when bytes arrive (`Spool`).

Why the spool: most cases of a large table print nothing, and on a busy disk each new file
costs more than a trivial case's own work (an empty stdout.log and stderr.log per case were
a third of fidelity's own time per case). `Sinks` says where a child's output goes: log
files, the spool, or pipes. Nothing here starts a process; `proc` does.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

CHUNK = 1 << 16
_MS = 2**31 - 1  # poll's longest wait, in milliseconds (24 days): a longer timeout loops
_TICK_MS = 50  # without a pidfd, how often the child is looked at while its pipes are read


class Spool:
    """A child's stdout and stderr pipes (one pipe when both go to one file), each copied
    into its log file, which is made when the first bytes arrive. `child` are the write
    ends to give the child; `started` closes them here once it has them."""

    def __init__(self, stdout_path: Path, stderr_path: Path) -> None:
        self._paths: dict[int, Path] = {}  # read end not yet at end of file -> its log
        self._logs: dict[int, int] = {}  # read end -> its log file's descriptor, once made
        r, w = os.pipe()
        self._paths[r], self.child = stdout_path, (w, w)
        if stderr_path != stdout_path:
            r2, w2 = os.pipe()
            self._paths[r2], self.child = stderr_path, (w, w2)
        self._child_open = True

    @property
    def reading(self) -> list[int]:
        return list(self._paths)

    def started(self) -> None:
        """Close the child's ends here: the pipes then end when the child's side closes."""
        if self._child_open:
            for fd in set(self.child):
                os.close(fd)
            self._child_open = False

    def read(self, fd: int) -> None:
        """Copy what the pipe holds into its log (made now if it is the first); at the end
        of the pipe, stop reading it. A log that cannot be written loses the bytes, never
        blocks the child."""
        try:
            data = os.read(fd, CHUNK)
        except OSError:  # read as the pipe's end
            data = b""
        if not data:
            del self._paths[fd]
            return
        log = self._logs.get(fd)
        if log is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
            try:
                log = self._logs[fd] = os.open(self._paths[fd], flags, 0o644)
            except OSError:
                log = self._logs[fd] = -1
        with contextlib.suppress(OSError):
            while data and log >= 0:
                data = data[os.write(log, data) :]

    def take(self, ready: list[int]) -> list[int]:
        """Read each of its pipes among the ready descriptors; those that ended."""
        ended = []
        for fd in ready:
            if fd in self._paths:
                self.read(fd)
                if fd not in self._paths:
                    ended.append(fd)
        return ended

    def drain(self, timeout_s: float) -> None:
        """Read every pipe to its end, or until timeout_s passes (a process that escaped
        the kill still holds it: what it writes later is not kept)."""
        deadline = time.monotonic() + timeout_s
        while self._paths:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            poller = select.poll()
            for fd in self._paths:
                poller.register(fd, select.POLLIN)
            for fd, _ in poller.poll(math.ceil(left * 1000)):
                self.read(fd)

    def close(self) -> None:
        self.started()
        for fd in [*self._paths, *(f for f in self._logs.values() if f >= 0)]:
            os.close(fd)
        self._paths, self._logs = {}, {}


def exit_or_kill(
    proc: subprocess.Popen[bytes],
    timeout_s: float | None,
    expired: threading.Event,
    spool: Spool | None = None,
) -> bool:
    """Wait until the child exits, copying its output when there is a spool; at the
    deadline kill its group (it then exits, and the wait ends). On the child's pidfd; with
    a spool and no pidfd, looking at the child every 50 ms. False when there is neither
    pidfd nor spool (the caller waits in waitpid, with a timer)."""
    pidfd = _pidfd(proc.pid)
    if pidfd is None and spool is None:
        return False
    poller = select.poll()
    for fd in [*([pidfd] if pidfd is not None else []), *(spool.reading if spool else [])]:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout_s if timeout_s is not None else None
    tick = _TICK_MS if pidfd is None else _MS
    try:
        while True:
            left = _MS if deadline is None else math.ceil(max(deadline - time.monotonic(), 0) * 1e3)
            events = [fd for fd, _ in poller.poll(min(left, tick))]
            if spool is not None:
                for fd in spool.take(events):
                    poller.unregister(fd)
            if pidfd in events or (pidfd is None and proc.poll() is not None):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                deadline = None  # killed: the child exits now, and the loop sees it
                _expire(proc, expired)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or an old kernel
        return None


def _expire(proc: subprocess.Popen[bytes], expired: threading.Event) -> None:
    """The time is up: kill the group, unless the child exited at the very deadline."""
    if proc.poll() is None:
        expired.set()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def timer(
    proc: subprocess.Popen[bytes], timeout_s: float | None, expired: threading.Event
) -> threading.Timer | None:
    """Kill the group when the time is up; the waiting thread then wakes as the child dies."""
    if timeout_s is None:
        return None

    def expire() -> None:
        if proc.returncode is None:
            expired.set()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    t = threading.Timer(timeout_s, expire)
    t.daemon = True
    t.start()
    return t


@dataclass(slots=True)
class Sinks:
    """Where a child's stdout and stderr go: log files, a spool that makes them when bytes
    arrive, or pipes read into memory (`piped`)."""

    stdout: Any
    stderr: Any
    files: tuple[IO[bytes], ...] = ()
    spool: Spool | None = None

    @staticmethod
    def make(stdout_path: Path | None, stderr_path: Path | None, lazy: bool) -> Sinks:
        if lazy and stdout_path is not None and stderr_path is not None:
            spool = Spool(stdout_path, stderr_path)
            return Sinks(spool.child[0], spool.child[1], spool=spool)
        out_f = open(stdout_path, "wb") if stdout_path else None  # noqa: SIM115
        if stdout_path is not None and stdout_path == stderr_path:
            return Sinks(out_f, subprocess.STDOUT, (out_f,) if out_f else ())
        err_f = open(stderr_path, "wb") if stderr_path else None  # noqa: SIM115
        files = tuple(f for f in (out_f, err_f) if f is not None)
        return Sinks(out_f or subprocess.PIPE, err_f or subprocess.PIPE, files)

    @property
    def piped(self) -> bool:
        return subprocess.PIPE in (self.stdout, self.stderr)

    def close(self) -> None:
        for f in self.files:
            f.close()
        if self.spool is not None:
            self.spool.close()
