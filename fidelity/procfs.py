"""What Linux's /proc says about processes: a process's command, a group's live members, a
process's group, those with a marker, the orphans this process adopted, a process's state.
Read only: nothing here starts or signals a process (`proc` does); elsewhere than Linux
every answer is empty.
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


def marked(needle: bytes) -> list[int]:
    """Processes but this one with an environment variable that starts with needle."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                environ = read(f"/proc/{entry}/environ").split(b"\0")
                if any(v.startswith(needle) for v in environ):
                    found.append(int(entry))
    return found


def group_of(pid: int) -> int | None:
    """The process group of pid, None when it is gone."""
    stat = read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[2]) if len(fields) > 2 else None


def adopted() -> set[int]:
    """This process's children on its main thread: every orphan it adopts as a subreaper is
    there (the kernel hands an orphan to the first live thread of its reaper, the thread
    group's leader), with the children the main thread started itself. One file, where
    reading every thread's cost a file per thread after each case."""
    return {int(p) for p in read(f"/proc/self/task/{os.getpid()}/children").split()}


def state(pid: int) -> bytes:
    """A process's state letter (`Z` for a zombie), b"" when it is gone."""
    stat = read(f"/proc/{pid}/stat")
    return stat[stat.rfind(b")") + 2 :][:1]
