"""The files a case left in its output and cache folders, read without following links.

A symbolic link there would be followed to wherever it points (another checkout, the
user's home) and its target hashed as if it were evidence; the run directory would keep
the link, not the bytes. So links are never followed: each is reported, and only regular
files count as evidence. Globs are matched against the files found, with `**` for any
number of folders and a folder's match taking every file under it, as `Path.glob` would.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Tree:
    files: dict[str, Path] = field(default_factory=dict)  # relative POSIX path -> file
    links: dict[str, str] = field(default_factory=dict)  # relative path -> where it points
    other: tuple[str, ...] = ()  # fifos, sockets, devices: never read


def walk(root: Path) -> Tree:
    """Regular files, links and special files under root; links to folders not entered.
    One scandir per folder: an entry's type comes from the folder listing where the
    filesystem gives it, so a small folder costs a handful of system calls."""
    files: dict[str, Path] = {}
    links: dict[str, str] = {}
    other: list[str] = []
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):  # a link to a folder is not entered
            return Tree()
    except OSError:
        return Tree()
    _scan(root, "", files, links, other)
    return Tree(dict(sorted(files.items())), dict(sorted(links.items())), tuple(other))


def _scan(
    folder: Path, prefix: str, files: dict[str, Path], links: dict[str, str], other: list[str]
) -> None:
    """One folder's entries in name order, then its subfolders', as os.walk goes top-down."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:  # vanished or unreadable meanwhile: as os.walk, nothing found there
        return
    folders = []
    for entry in entries:
        rel = prefix + entry.name
        if entry.is_symlink():
            links[rel] = os.readlink(entry.path)
        elif entry.is_file(follow_symlinks=False):
            files[rel] = folder / entry.name
        elif entry.is_dir(follow_symlinks=False):
            folders.append(entry)
        else:
            other.append(rel)
    for entry in folders:
        _scan(folder / entry.name, f"{prefix}{entry.name}/", files, links, other)


def replaced(folder: Path, placeholder: str) -> str:
    """How a folder fidelity made for a case ({out}, {cache}) is no longer a folder, or "".
    A link there would make the folder look empty while what the case wrote went elsewhere;
    a folder the case removed holds nothing, as an empty one."""
    try:
        mode = os.lstat(folder).st_mode
    except OSError:
        return ""
    if stat.S_ISLNK(mode):
        return f"{{{placeholder}}} was replaced by a link to {os.readlink(folder)}"
    return "" if stat.S_ISDIR(mode) else f"{{{placeholder}}} was replaced by a file"


def copy_tree(src: Path, dst: Path) -> None:
    """A copy of what `walk` sees under src: regular files (their times kept, their holes
    kept: `copy_file`) and links (as links, never followed); special files are left out,
    and a src that is itself a link gives nothing, as it holds no evidence."""
    tree = walk(src)
    for rel, path in tree.files.items():
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        copy_file(path, dst / rel)
    for rel, target in tree.links.items():
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, dst / rel)


CHUNK = 1 << 24  # bytes copied per system call
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def copy_file(src: Path | str, dst: Path | str) -> Path | str:
    """A regular file's bytes, mode and times, as shutil.copy2 copies them, but with its
    holes kept as holes: shutil writes every byte of a sparse file, so a 1 GiB cache file
    of a few written blocks became 1 GiB on disk in each copy. Only the file's data runs
    are copied (SEEK_DATA/SEEK_HOLE; where the filesystem has no holes, the whole file is
    one run). Never follows a link. Returns dst (shutil.copytree's `copy_function`)."""
    fd_in = os.open(src, os.O_RDONLY | os.O_CLOEXEC | _NOFOLLOW)
    try:
        size = os.fstat(fd_in).st_size
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | _NOFOLLOW
        fd_out = os.open(dst, flags, 0o600)
        try:
            for start, end in _data_runs(fd_in, size):
                _copy_run(fd_in, fd_out, start, end)
            os.ftruncate(fd_out, size)  # a hole at the end is a length, not data
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)
    import shutil  # here: `cases list` and the comparators copy nothing (2 ms of start-up)

    shutil.copystat(src, dst, follow_symlinks=False)
    return dst


def _data_runs(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of data in the file, in order."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:
        yield 0, size
        return
    at = 0
    while at < size:
        try:
            start = os.lseek(fd, at, seek_data)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # no SEEK_DATA here: the rest is data
                yield at, size
            return  # ENXIO: only a hole is left
        end = min(os.lseek(fd, start, seek_hole), size)
        yield start, end
        at = end


def _copy_run(fd_in: int, fd_out: int, start: int, end: int) -> None:
    """Bytes start..end of one file into the same place of the other: in the kernel where
    it can (copy_file_range), else read and written."""
    at = start
    while at < end:
        count = min(CHUNK, end - at)
        try:
            done = os.copy_file_range(fd_in, fd_out, count, at, at)
        except (AttributeError, OSError):  # not on this system or between these filesystems
            data = os.pread(fd_in, count, at)
            done = os.pwrite(fd_out, data, at) if data else 0
        if done == 0:  # the file ended early (it shrank meanwhile)
            return
        at += done


Stamp = tuple[int, int, int]  # a file's inode, size and change time (ns)


def sha256_file(path: Path, stamps: dict[Path, Stamp] | None = None) -> str:
    """A regular file's sha256, opened without following a link swapped in meanwhile. With
    ``stamps``, the open file's stamp is kept there before a byte is read: a rewrite from
    then on, even one while it is hashed, no longer matches it."""
    import hashlib  # here: OpenSSL's load is 2.4 ms of commands that hash no file

    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
    try:
        if stamps is not None:
            st = os.fstat(fd)
            stamps[path] = (st.st_ino, st.st_size, st.st_ctime_ns)
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


_MAGIC = re.compile(r"[*?\[]")  # what makes a glob more than a path (fnmatch's own)


@lru_cache(maxsize=256)
def _parts(pattern: str) -> tuple[str, ...]:
    return tuple(p for p in pattern.split("/") if p not in ("", "."))


def _match(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """parts (a path, or a prefix of one) match pattern's segments entirely."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(parts[i:], rest) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(parts[1:], rest)


def matches(rel: str, pattern: str) -> bool:
    """rel matches the glob, or lies in a folder the glob matches."""
    if not _MAGIC.search(pattern):  # a plain path: itself, or a folder holding rel
        plain = "/".join(_parts(pattern))
        return rel == plain or rel.startswith(plain + "/")
    parts, pat = tuple(rel.split("/")), _parts(pattern)
    return any(_match(parts[:n], pat) for n in range(1, len(parts) + 1))
