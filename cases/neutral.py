"""What the case drivers (cases/fidelity_cli.py, cases/fidelity_in_repo.py) mask in the
evidence they keep, so that both sides of a run, and two runs of the same commit, compare
byte for byte: paths of this run's folders, and what differs between two runs of the same
code.

VOLATILE is what every history case masks (elapsed times, the sides' worktrees, the timed
fields of the reports). STEADY, asked for with `--steady`, is what commands that keep their
own folders and clocks print differently each time: a folder's time stamp, a recorded time,
a replay's speed ratio, CPU seconds, a temporary folder of fidelity's, the interpreter's
path, and `gc`'s ages and sizes (a run directory's blocks hold timed reports). `--ids` masks
commit ids too (each becomes `<commit N>`, in the order it first appears), for a repository
built at the current time, as `fidelity demo` builds its own; the fixture histories' ids
are fixed, so their cases keep them as evidence.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

VOLATILE = [
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)? ?(ms|s)\b"), "<time>"),
    (re.compile(r' time="[0-9.]+"'), ' time="<time>"'),  # JUnit
    (
        re.compile(r"/[^\s\"']*/fidelity-(baseline|candidate)-\w+(/fidelity-\1-\w+)?"),
        r"<\1 worktree>",
    ),
    (
        re.compile(
            r'"(seconds|duration_s|cpu_s|elapsed_s|started|finished|started_at|finished_at)": '
            r"[^,\n}]+"
        ),
        r'"\1": "<volatile>"',
    ),
]
STEADY = [
    (re.compile(r"\b\d{8}-\d{6}\b"), "<stamp>"),  # a run's or a controls run's folder
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<when>"),
    (re.compile(r"\b\d+\.\d+x cold\b"), "<ratio> cold"),  # a replay's warm time over its cold one
    (re.compile(r"\b\d+(\.\d+)? CPU-s\b"), "<cpu>"),
    (re.compile(r'"(overhead_s|timeout_s|age_days|bytes)": [^,\n}]+'), r'"\1": "<volatile>"'),
    (re.compile(r"\b\d+(\.\d+)? (B|kB|MB|GB)\b"), "<size>"),  # gc: blocks of timed files
    (re.compile(r"\b\d+(\.\d+)? (min|h|d)\b"), "<age>"),  # gc
    (
        re.compile(re.escape(tempfile.gettempdir()) + r"/(fidelity-[a-z]+)-[a-z0-9_]{8}\b"),
        r"{tmp}/\1-<random>",
    ),
]
HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


class Places:
    """Masks this run's paths (each given with its name), then what VOLATILE (and STEADY,
    with steady) match, then (with ids) commit ids."""

    def __init__(self, pairs: list[tuple[Path, str]], *, steady: bool, ids: bool) -> None:
        harness = Path(sys.argv[0]).resolve().parents[1]  # the tree the driver runs from
        if all(path != harness for path, _ in pairs):
            pairs = [*pairs, (harness, "{harness}")]
        if steady:
            pairs = [(Path(sys.executable), "{python}"), *pairs]
        self.pairs = [(str(path), name) for path, name in pairs]
        self.volatile = [*VOLATILE, *STEADY] if steady else VOLATILE
        self.ids: dict[str, str] | None = {} if ids else None

    def neutral(self, text: str) -> str:
        for path, name in self.pairs:
            text = text.replace(path, name)
        for pattern, replacement in self.volatile:
            text = pattern.sub(replacement, text)
        return text if self.ids is None else HEX.sub(self._commit, text)

    def _commit(self, found: re.Match[str]) -> str:
        """`<commit N>`, N the order in which the id (by its first 7 digits) first appeared."""
        assert self.ids is not None
        return self.ids.setdefault(found[0][:7], f"<commit {len(self.ids) + 1}>")
