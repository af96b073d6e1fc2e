"""One case of fidelity's own case table: run `python -m fidelity ARGS` as a user would.

    python cases/fidelity_cli.py OUT ARGS...

Its exit code, what it printed and the reports it wrote become files in OUT, with this
side's paths replaced by `{out}` and `{worktree}`, so that both sides of a run can be
compared byte for byte. A usage error or a red verdict is evidence, not a failed case: this
script exits non-zero only when fidelity crashed (an exit code outside 0-3).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WIDTH = "160"  # rich wraps at 80 columns without a terminal; a fixed width keeps text stable


def neutral(text: str, out: Path, worktree: Path) -> str:
    return text.replace(str(out), "{out}").replace(str(worktree), "{worktree}")


def main(out: Path, args: list[str]) -> int:
    worktree = Path.cwd()
    env = {**os.environ, "COLUMNS": WIDTH, "NO_COLOR": "1"}
    argv = [sys.executable, "-m", "fidelity", "--quiet", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        path.write_text(neutral(path.read_text(errors="replace"), out, worktree))
    (out / "exit.txt").write_text(f"{done.returncode}\n")
    (out / "stdout.txt").write_text(neutral(done.stdout, out, worktree))
    (out / "stderr.txt").write_text(neutral(done.stderr, out, worktree))
    return 0 if done.returncode in (0, 1, 2, 3) else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
