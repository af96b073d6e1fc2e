"""What Linux's /proc says about processes: a process's command, a group's live members,
this process's children, a process's state. Read only: nothing here starts or signals a
process (`proc` does); elsewhere than Linux every answer is empty.
"""

from __future__ import annotations

import contextlib
import os


def read(path: str) -> bytes:
    """A /proc file's bytes; b"" when it cannot be read (gone, not Linux, not ours)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    chunks = []
    try:  # os.read, not open(): this runs after every case, and a buffered file is 8 calls
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks)


def name(pid: int) -> str:
    """`pid N: command line`, clipped, to name a process in a message."""
    command = read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").strip()
    return f"pid {pid}: {command.decode(errors='replace')[:80] or '?'}"


def group_members(pgid: int) -> list[int]:
    """Live processes of a process group (Linux /proc; elsewhere none are named)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                stat = read(f"/proc/{entry}/stat")
                fields = stat[stat.rfind(b")") + 2 :].split()
                if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
                    found.append(int(entry))
    return found


def children() -> set[int]:
    """This process's children, from every one of its threads."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            found.update(int(p) for p in read(f"/proc/self/task/{task}/children").split())
    return found


def state(pid: int) -> bytes:
    """A process's state letter (`Z` for a zombie), b"" when it is gone."""
    stat = read(f"/proc/{pid}/stat")
    return stat[stat.rfind(b")") + 2 :][:1]


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds a process used, its waited-for descendants included (user and system):
    read while it is a zombie, it is the whole tree's cost, which wall time under load is
    not. None when /proc does not say."""
    stat = read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 15:
        return None
    try:
        ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    except ValueError:
        return None
    return ticks / _TICK
