"""Each case's evidence files stamped (inode, size, change time) as its evidence is taken,
and looked at again when the run ends: a file that another case, or anything else, rewrote
while the run went on is then hashed again against its evidence (`recheck`).

A stat per file, where hashing every output again at the end would cost a read of each.
The change time cannot be set back by a process (`touch -d` moves it forward), so a
rewrite that keeps the size and the modification time still shows.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[int, int, int]


def _stamp(path: Path) -> Stamp | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_ctime_ns


class Stamps:
    """Case folder -> the stamps of its evidence files; filled by both sides' threads."""

    def __init__(self) -> None:
        self._cases: dict[Path, dict[Path, Stamp | None]] = {}
        self._lock = threading.Lock()

    def take(self, case_dir: Path, files: Iterable[Path]) -> None:
        stamped = {path: _stamp(path) for path in files}
        with self._lock:
            self._cases[case_dir] = stamped

    def touched(self) -> list[Path]:
        """The case folders with an evidence file whose stamp is not as it was taken."""
        with self._lock:
            cases = list(self._cases.items())
        return sorted(
            case_dir
            for case_dir, stamped in cases
            if any(_stamp(path) != was for path, was in stamped.items())
        )
