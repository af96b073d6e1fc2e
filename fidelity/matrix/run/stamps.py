"""Each case's evidence files stamped (inode, size, change time) as each is opened to be
hashed, and looked at again when the run ends: a file that another case, or anything else,
rewrote while the run went on is then hashed again against its evidence (`recheck`).

A stat per file, where hashing every output again at the end would cost a read of each.
The change time cannot be set back by a process (`touch -d` moves it forward), so a
rewrite that keeps the size and the modification time still shows, unless it falls in the
same tick of the kernel's clock (a few ms) as the file's last change before it was opened.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from fidelity.matrix.cases.files import Stamp
from fidelity.matrix.verdict.evidence import CaseEvidence


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

    def take(
        self, case_dir: Path, files: Iterable[Path], seen: Mapping[Path, Stamp] | None = None
    ) -> None:
        """Stamp a case's files: as ``seen`` when they were opened, else as they are now."""
        seen = seen or {}
        stamped = {path: seen[path] if path in seen else _stamp(path) for path in files}
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


def stamped(
    stamps: Stamps | None, case_dir: Path, ev: CaseEvidence, seen: Mapping[Path, Stamp]
) -> CaseEvidence:
    """ev, its outputs and cache files stamped as they were opened to be hashed (``seen``):
    a stat taken after hashing would miss a rewrite in between."""
    if stamps is not None:
        out = [case_dir / "out" / ev.path_of(name) for name in ev.outputs]
        stamps.take(case_dir, out + [case_dir / "cache" / rel for rel in ev.cache], seen)
    return ev
