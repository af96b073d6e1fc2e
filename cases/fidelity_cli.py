"""One case of fidelity's own case table: run `python -m fidelity ARGS` as a user would.

    python cases/fidelity_cli.py OUT [--steady] [--ids] ARGS...

Its exit code, what it printed and the reports it wrote become files in OUT, with this
side's paths replaced by `{out}` and `{worktree}` (and `{harness}`, when a case runs this
script from the harness), so that both sides of a run can be compared byte for byte.
`--steady` and `--ids` mask more (cases/neutral.py): for commands that keep their own
folders and clocks, or build a repository at the current time (`demo`). A usage error or a
red verdict is evidence, not a failed case: this script exits non-zero only when fidelity
crashed (an exit code outside 0-3).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from neutral import Places

WIDTH = "160"  # rich wraps at 80 columns without a terminal; a fixed width keeps text stable
OPTIONS = ("--steady", "--ids")


def neutral(text: str, out: Path, worktree: Path) -> str:
    return text.replace(str(out), "{out}").replace(str(worktree), "{worktree}")


def masks(out: Path, worktree: Path, options: set[str]) -> Callable[[str], str]:
    """The neutral text of a file: this side's paths, and with options what neutral.py masks."""
    harness = Path(sys.argv[0]).resolve().parents[1]  # the tree this script runs from
    if not options and harness == worktree:
        return lambda text: neutral(text, out, worktree)
    if not options:
        return lambda text: neutral(text, out, worktree).replace(str(harness), "{harness}")
    places = Places(
        [(out, "{out}"), (worktree, "{worktree}")],
        steady="--steady" in options,
        ids="--ids" in options,
    )
    return places.neutral


def main(out: Path, args: list[str]) -> int:
    options = set()
    while args and args[0] in OPTIONS:
        options.add(args.pop(0))
    worktree = Path.cwd()
    masked = masks(out, worktree, options)
    env = {**os.environ, "COLUMNS": WIDTH, "NO_COLOR": "1"}
    argv = [sys.executable, "-m", "fidelity", "--quiet", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    said = {"stdout.txt": masked(done.stdout), "stderr.txt": masked(done.stderr)}  # ids first
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        path.write_text(masked(path.read_text(errors="replace")))
    (out / "exit.txt").write_text(f"{done.returncode}\n")
    for name, text in said.items():
        (out / name).write_text(text)
    return 0 if done.returncode in (0, 1, 2, 3) else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
