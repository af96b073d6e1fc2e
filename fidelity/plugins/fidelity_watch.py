"""Which files of the tree any process opens, seen by the kernel (Linux inotify).

A process a test starts is not traced: it may not be Python, may not load the plugin, may
drop the environment. But a process can only run the tree's code or read its data by
opening the tree's files (a module's source, or its bytecode in ``__pycache__``), and inotify
reports every open of a file in a watched folder, whoever opens it. So a test that starts
processes need only be selected for edits of files opened while it ran, not for every edit.

Imported by ``fidelity_pytest_controls`` (standard library only). Anything that could hide
an open makes `drain` say so, and the test stays selected for every edit: no inotify on
this platform, a folder that cannot be watched, an overflowed event queue, files already in
a folder made during the test, and tools that tell edited files by their size and time,
opening none: git reading the tree's index (``git status``, ``diff``, ``add``) and a tool
reading its cache in the tree (``.mypy_cache``). Another process that only looks at a
file's size or time (``make``) is not seen.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys

IN_OPEN = 0x00000020
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_Q_OVERFLOW = 0x00004000
IN_ISDIR = 0x40000000
_MASK = IN_OPEN | IN_CREATE | IN_MOVED_TO
_NONBLOCK_CLOEXEC = os.O_NONBLOCK | 0o2000000  # IN_NONBLOCK | IN_CLOEXEC
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
_SKIP = frozenset({".git", ".hg", ".svn"})
# installed packages, never the tree's own files: a child importing from a virtual
# environment in the tree (`.venv`) would open thousands, and could overflow the queue
_PACKAGES = frozenset({"node_modules", ".tox", ".nox"})
MAX_FOLDERS = 20_000  # beyond this the tree is not watched (each folder is a kernel watch)


def source_of(rel: str) -> str:
    """A bytecode file's source: ``pkg/__pycache__/mod.cpython-311.pyc`` -> ``pkg/mod.py``
    (any interpreter's tag: a process may run another Python)."""
    head, _, name = rel.rpartition("/")
    folder, _, cache = head.rpartition("/")
    if cache != "__pycache__" or not name.endswith(".pyc"):
        return rel
    module = name.split(".", 1)[0]
    return f"{folder}/{module}.py" if folder else f"{module}.py"


class Watch:
    """inotify watches on every folder of a tree; `drain` says which files were opened."""

    def __init__(self, root: str, fd: int, libc: ctypes.CDLL) -> None:
        self.root = root
        self.fd = fd
        self._libc = libc
        self.folders: dict[int, str] = {}  # watch descriptor -> folder relative to root
        self.broken = False  # a folder could not be watched: opens may go unseen
        self.git_dir = -1  # the watch on the tree's git folder, where its index is

    @classmethod
    def start(cls, root: str) -> Watch | None:
        """Watches on root and every folder under it, or None where inotify is missing."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fd = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watch = cls(root, fd, libc)
        watch.add_tree("", new=False)
        watch.add_git_dir()
        if watch.broken:
            watch.close()
            return None
        return watch

    def add_tree(self, rel: str, *, new: bool = True) -> bool:
        """Watch a folder and everything under it. For a folder made while a test ran
        (new), whether files were already in it, whose opens went unseen (bytecode aside:
        it was compiled from a source whose open was seen)."""
        top = os.path.join(self.root, rel) if rel else self.root
        missed = False
        try:
            for folder, subfolders, files in os.walk(top, onerror=self._unreadable):
                subfolders[:] = [d for d in subfolders if not _unwatched(folder, d)]
                missed = missed or bool(new and files and not folder.endswith("__pycache__"))
                self._add(folder)
        except RecursionError:  # os.walk recurses on Python 3.11: a tree too deep
            self.broken = True
        return missed

    def add_git_dir(self) -> None:
        """Watch the folder that holds the tree's git index (``.git``, or the folder a
        worktree's ``.git`` file names): git reads the index, then tells edited files by
        their size and time, opening none. Finding the repository opens no index."""
        link = os.path.join(self.root, ".git")
        folder = link
        try:
            if os.path.isfile(link):
                with open(link, encoding="utf-8", errors="replace") as f:
                    named = f.read().partition("gitdir:")[2].strip()
                folder = os.path.join(self.root, named) if named else ""
        except OSError:
            self.broken = True
            return
        if folder and os.path.isdir(folder):
            self.git_dir = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN)
            self.broken = self.broken or self.git_dir < 0

    def _add(self, folder: str) -> None:
        if len(self.folders) >= MAX_FOLDERS:
            self.broken = True
            return
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)
        if wd < 0:
            if ctypes.get_errno() != errno.ENOENT:  # gone already: nothing to open
                self.broken = True
            return
        path = os.path.relpath(folder, self.root)
        self.folders[wd] = "" if path == "." else path.replace(os.sep, "/")

    def _unreadable(self, error: OSError) -> None:
        if not isinstance(error, FileNotFoundError):  # a folder not listed is not watched
            self.broken = True

    def drain(self) -> tuple[set[str], bool]:
        """Tree files opened since the last drain (bytecode as its source), and whether
        some opens may have gone unseen (a queue overflow, a folder not watched)."""
        opened: set[str] = set()
        lost = self.broken
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return opened, lost
            except OSError:  # a test closed the descriptor: nothing is seen from now on
                self.broken = True
                return opened, True
            lost = self._parse(data, opened) or lost

    def _parse(self, data: bytes, opened: set[str]) -> bool:
        lost, at = False, 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            raw = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                lost = True
                continue
            if wd == self.git_dir:
                lost = lost or raw == b"index"  # git read the tree's index
                continue
            folder = self.folders.get(wd)
            if folder is None or not raw or raw == b".git":  # the repository, no file of it
                continue
            name = os.fsdecode(raw)
            rel = f"{folder}/{name}" if folder else name
            if mask & IN_OPEN and _tool_cache(rel):
                lost = True  # a tool read its cache: it tells edits by size and time
                continue
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO) and not _unwatched(
                    os.path.join(self.root, folder), name
                ):
                    lost = self.add_tree(rel) or lost
            elif mask & IN_OPEN:
                opened.add(source_of(rel))
        return lost or self.broken

    def close(self) -> None:
        os.close(self.fd)


def _unwatched(parent: str, name: str) -> bool:
    """Version control's own folders, and folders of installed packages: a virtual
    environment (it holds ``pyvenv.cfg``), ``node_modules``, tox's and nox's."""
    if name in _SKIP or name in _PACKAGES:
        return True
    return os.path.exists(os.path.join(parent, name, "pyvenv.cfg"))


def _tool_cache(rel: str) -> bool:
    """A file in a tool's cache in the tree (``.mypy_cache``, ``.ruff_cache``): the tool
    reads it instead of the sources whose size and time match it. pytest's own is no tool
    run by a test."""
    return any(p.endswith("_cache") and p != ".pytest_cache" for p in rel.split("/")[:-1])


def hides_bytecode(args: tuple[object, ...]) -> bool:
    """Whether a process started now (an audit event's arguments) may read the tree's
    bytecode from a cache outside the tree (``PYTHONPYCACHEPREFIX``, ``-X pycache_prefix``),
    where its opens of the tree's modules are not seen."""
    if sys.pycache_prefix or os.environ.get("PYTHONPYCACHEPREFIX"):
        return True
    words = [a for a in args if isinstance(a, (str, bytes))]
    for a in args:  # argv, and the environment given to the process (its names)
        if isinstance(a, (list, tuple, dict)):
            words.extend(w for w in a if isinstance(w, (str, bytes)))
    # any spelling a shell line, `env` or -X may carry: PYTHONPYCACHEPREFIX=, pycache_prefix=
    return any("pycacheprefix" in os.fsdecode(w).lower().replace("_", "") for w in words)
