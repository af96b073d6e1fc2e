"""Evidence files read once under `compare` and `verify`, for both their uses: judged by
their comparator, and hashed against what run.json recorded (`recheck`).

Read twice, a file could change between the two reads, so the bytes judged need not be
the bytes checked; read once, they are the same bytes, and the second read's cost is gone.
A file over `SHARED_BYTES`, a link or anything but a regular file is left to be read as
before: by path, by the comparator (which may stream it) and again by the check.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from fidelity.kinds.sources import Source
from fidelity.matrix.cases.files import sha256_file

SHARED_BYTES = 8 * 2**20  # held whole while judged; larger outputs are streamed as before
_NO_LINKS = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


class ReadOnce:
    """The sha256 of each file handed to a comparator as bytes, for the check to use."""

    def __init__(self, limit: int = SHARED_BYTES) -> None:
        self.limit = limit
        self.hashed: dict[Path, str] = {}

    def source(self, path: Path) -> Source:
        """The file's bytes, hashed as they are handed over; its path when it is over the
        limit, a link or no regular file, or cannot be opened (the check will say so)."""
        try:
            fd = os.open(path, _NO_LINKS)
        except OSError:
            return path
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return path
            data = _read_up_to(fd, self.limit + 1)
        finally:
            os.close(fd)
        if len(data) > self.limit:
            return path
        self.hashed[path] = hashlib.sha256(data).hexdigest()
        return data

    def sha256(self, path: Path) -> str:
        """The file's sha256: of the bytes judged when it was read here, else read now."""
        known = self.hashed.get(path)
        return known if known is not None else sha256_file(path)


def _read_up_to(fd: int, most: int) -> bytes:
    parts = []
    while most > 0 and (chunk := os.read(fd, min(most, 1 << 20))):
        parts.append(chunk)
        most -= len(chunk)
    return b"".join(parts)
