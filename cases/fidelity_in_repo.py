"""One history case of fidelity's own case table: run fidelity inside a rebuilt git history.

    python cases/fidelity_in_repo.py OUT [--git "ARGS"]... [--keep PATH]... [--pty] [-- ARGS...]

Rebuilds `cases/fixtures/history/meter.fi` (see cases/fixtures/make_history.py) into a
fresh repository outside OUT with `git fast-import`, checks out `main`, configures the
record merge driver with what `fidelity merge-records --print-driver` prints, runs each
`--git` command there (a merge that git resolves with that driver), then `python -m
fidelity --quiet ARGS` in the repository. What git and fidelity printed, their exit codes
and each `--keep` file of the repository become files in OUT, with this side's paths
replaced by `{out}`, `{repo}` and `{worktree}`. Like cases/fidelity_cli.py, a red verdict
or a failed `--git` command is evidence: this script exits non-zero only when fidelity
crashed (an exit code outside 0-3) or the history could not be rebuilt.

With `--pty`, fidelity runs as a person types it: without `--quiet`, on a pseudo-terminal of
100 columns (progress bar, live display), and what the terminal showed is kept as
`screen.txt`, escape sequences and the bar's transient lines removed. A crash on the
terminal's road shows as an exit code and a traceback that the other side does not have.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

WIDTH = "160"  # rich wraps at 80 columns without a terminal; a fixed width keeps text stable
STREAM = Path("cases/fixtures/history/meter.fi")
WHEN = "1767650400 +0000"  # the merges' author and committer date: fixed, so ids are too
# what differs between two runs of the same code: elapsed times and the run's own folder
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


class Places:
    def __init__(self, out: Path, repo: Path, worktree: Path) -> None:
        self.pairs = [(str(out), "{out}"), (str(repo), "{repo}"), (str(worktree), "{worktree}")]

    def neutral(self, text: str) -> str:
        for path, name in self.pairs:
            text = text.replace(path, name)
        for pattern, replacement in VOLATILE:
            text = pattern.sub(replacement, text)
        return text


def run(argv: list[str], repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)


ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>]")
# the progress bar's lines (its glyph, or steps done and time elapsed at the end, which is all
# a bar without colour shows): transient on the terminal, and timed
BAR = re.compile(r"\u2501|\d+/\d+ +\d+:\d\d:\d\d$")


def on_pty(argv: list[str], repo: Path, env: dict[str, str]) -> tuple[int, str]:
    """Exit code and the terminal's text of argv run on a 100 x 40 pseudo-terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    shown = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm"}
    with subprocess.Popen(
        argv, cwd=repo, env=shown, stdin=follower, stdout=follower, stderr=follower
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=300)
    os.close(leader)
    text = ESCAPES.sub("", b"".join(chunks).decode(errors="replace"))
    lines = text.replace("\r\n", "\n").replace("\r", "\n").splitlines()
    kept = [line.rstrip() for line in lines if line.strip() and not BAR.search(line.rstrip())]
    return code, "".join(line + "\n" for line in kept)


def rebuild(repo: Path, stream: Path, env: dict[str, str]) -> None:
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "fast-import", "--quiet"],
        ["git", "checkout", "-q", "-f", "main"],
    ):
        done = subprocess.run(
            argv,
            cwd=repo,
            env=env,
            input=stream.read_text() if "fast-import" in argv else None,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise SystemExit(f"cannot rebuild the history: {' '.join(argv)}: {done.stderr}")
    fidelity = [sys.executable, "-m", "fidelity"]
    driver = run([*fidelity, "merge-records", "--print-driver"], repo, env).stdout.strip()
    run(["git", "config", "merge.fidelity-records.driver", driver], repo, env)
    run(["git", "config", "merge.fidelity-records.name", "fidelity record rows"], repo, env)


def main(raw: list[str]) -> int:
    cli = argparse.ArgumentParser(prog="fidelity_in_repo.py")
    cli.add_argument("out", type=Path)
    cli.add_argument("--git", action="append", default=[], help="a git command to run first")
    cli.add_argument("--keep", action="append", default=[], help="a repository file to keep")
    cli.add_argument("--pty", action="store_true", help="run fidelity on a pseudo-terminal")
    split = raw.index("--") if "--" in raw else len(raw)
    ns = cli.parse_args(raw[:split])
    ns.args = raw[split + 1 :]
    worktree = Path.cwd()
    stream = worktree / STREAM
    ns.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fidelity-history-") as tmp:
        repo = Path(tmp, "meter")
        repo.mkdir()
        places = Places(ns.out, repo, worktree)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env |= {
            "HOME": tmp,
            "GIT_CONFIG_NOSYSTEM": "1",
            "COLUMNS": WIDTH,
            "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "Meter Dev",
            "GIT_AUTHOR_EMAIL": "dev@meter.invalid",
            "GIT_COMMITTER_NAME": "Meter Dev",
            "GIT_COMMITTER_EMAIL": "dev@meter.invalid",
            "GIT_AUTHOR_DATE": WHEN,
            "GIT_COMMITTER_DATE": WHEN,
        }
        rebuild(repo, stream, env)
        log = []
        for command in ns.git:
            done = run(["git", *shlex.split(command)], repo, env)
            log.append(f"$ git {command}\nexit {done.returncode}\n{done.stdout}{done.stderr}")
        if log:
            (ns.out / "git.txt").write_text(places.neutral("\n".join(log)))
        code = 0
        if ns.args and ns.pty:
            code, screen = on_pty([sys.executable, "-m", "fidelity", *ns.args], repo, env)
            (ns.out / "exit.txt").write_text(f"{code}\n")
            (ns.out / "screen.txt").write_text(places.neutral(screen))
        elif ns.args:
            done = run([sys.executable, "-m", "fidelity", "--quiet", *ns.args], repo, env)
            code = done.returncode
            (ns.out / "exit.txt").write_text(f"{code}\n")
            (ns.out / "stdout.txt").write_text(places.neutral(done.stdout))
            (ns.out / "stderr.txt").write_text(places.neutral(done.stderr))
        for name in ns.keep:
            kept = ns.out / "kept" / name
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(places.neutral((repo / name).read_text()))
        for path in sorted(p for p in ns.out.rglob("*") if p.is_file()):
            path.write_text(places.neutral(path.read_text(errors="replace")))
    return 0 if code in (0, 1, 2, 3) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
