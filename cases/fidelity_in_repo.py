"""One history case of fidelity's own case table: run fidelity inside a rebuilt git history.

    python cases/fidelity_in_repo.py OUT [--stream FILE] [--git "ARGS"]... [--before "ARGS"]...
        [--keep PATH]... [--steady] [--ids] [--pty] [-- ARGS...]

Rebuilds `cases/fixtures/history/meter.fi` (see cases/fixtures/make_history.py), or the
`--stream` given (`shop.fi`: cases/fixtures/make_shop.py), into a fresh repository outside
OUT with `git fast-import`, checks out `main`, configures the record merge driver with what
`fidelity merge-records --print-driver` prints, runs each `--git` command there (a merge
that git resolves with that driver), each `--before` fidelity command (what a case needs
done first: a run for `gc` to list, hooks for `--uninstall` to remove), then `python -m
fidelity --quiet ARGS` in the repository. What git and fidelity printed, their exit codes
and each `--keep` file of the repository become files in OUT, with this side's paths
replaced by `{out}`, `{repo}`, `{worktree}` and `{harness}` (this script's own tree, when a
case runs it from there). Like cases/fidelity_cli.py, a red verdict or a failed `--git`
command is evidence: this script exits non-zero only when fidelity crashed (an exit code
outside 0-3) or the history could not be rebuilt.

`--steady` also masks what commands that keep their own folders and clocks print
differently each time (STEADY: a folder's time stamp, a recorded time, a speed ratio, CPU
seconds, the interpreter's path), and `--ids` commit ids (each becomes `<commit N>` in the
order it first appears), for a repository built at the current time, as `fidelity demo`
builds its own; the history's ids are fixed, so history cases keep them as evidence.

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

from neutral import Places

WIDTH = "160"  # rich wraps at 80 columns without a terminal; a fixed width keeps text stable
STREAM = Path("cases/fixtures/history/meter.fi")
WHEN = "1767650400 +0000"  # the merges' author and committer date: fixed, so ids are too


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


def parse(raw: list[str]) -> argparse.Namespace:
    cli = argparse.ArgumentParser(prog="fidelity_in_repo.py")
    cli.add_argument("out", type=Path)
    cli.add_argument("--stream", type=Path, default=STREAM, help="the history to rebuild")
    cli.add_argument("--git", action="append", default=[], help="a git command to run first")
    cli.add_argument("--before", action="append", default=[], help="a fidelity command next")
    cli.add_argument("--keep", action="append", default=[], help="a repository file to keep")
    cli.add_argument("--steady", action="store_true", help="mask stamps, clocks, the interpreter")
    cli.add_argument("--ids", action="store_true", help="mask commit ids")
    cli.add_argument("--pty", action="store_true", help="run fidelity on a pseudo-terminal")
    split = raw.index("--") if "--" in raw else len(raw)
    ns = cli.parse_args(raw[:split])
    ns.args = raw[split + 1 :]
    return ns


def environment(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return env | {
        "HOME": home,
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


def transcript(name: str, commands: list[str], repo: Path, env: dict[str, str]) -> str:
    """Each command (of git, or of fidelity, quiet) run in turn, its exit code and words."""
    program = ["git"] if name == "git" else [sys.executable, "-m", "fidelity", "--quiet"]
    log = []
    for command in commands:
        done = run([*program, *shlex.split(command)], repo, env)
        log.append(f"$ {name} {command}\nexit {done.returncode}\n{done.stdout}{done.stderr}")
    return "\n".join(log)


def fidelity(ns: argparse.Namespace, repo: Path, env: dict[str, str], places: Places) -> int:
    """Run ARGS (on a pseudo-terminal with --pty) and keep what it said; its exit code."""
    if ns.pty:
        code, screen = on_pty([sys.executable, "-m", "fidelity", *ns.args], repo, env)
        (ns.out / "exit.txt").write_text(f"{code}\n")
        (ns.out / "screen.txt").write_text(places.neutral(screen))
        return code
    done = run([sys.executable, "-m", "fidelity", "--quiet", *ns.args], repo, env)
    (ns.out / "exit.txt").write_text(f"{done.returncode}\n")
    (ns.out / "stdout.txt").write_text(places.neutral(done.stdout))
    (ns.out / "stderr.txt").write_text(places.neutral(done.stderr))
    return done.returncode


def main(raw: list[str]) -> int:
    ns = parse(raw)
    worktree = Path.cwd()
    stream = worktree / ns.stream
    ns.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fidelity-history-") as tmp:
        repo = Path(tmp, stream.stem)
        repo.mkdir()
        pairs = [(ns.out, "{out}"), (repo, "{repo}"), (worktree, "{worktree}")]
        places = Places(pairs, steady=ns.steady, ids=ns.ids)
        env = environment(tmp)
        rebuild(repo, stream, env)
        if ns.git:
            log = transcript("git", ns.git, repo, env)
            (ns.out / "git.txt").write_text(places.neutral(log))
        if ns.before:
            log = transcript("fidelity", ns.before, repo, env)
            (ns.out / "before.txt").write_text(places.neutral(log))
        code = fidelity(ns, repo, env, places) if ns.args else 0
        for name in ns.keep:
            kept = ns.out / "kept" / name
            kept.parent.mkdir(parents=True, exist_ok=True)
            there = repo / name
            kept.write_text(places.neutral(there.read_text()) if there.exists() else "(none)\n")
        for path in sorted(p for p in ns.out.rglob("*") if p.is_file()):
            path.write_text(places.neutral(path.read_text(errors="replace")))
    return 0 if code in (0, 1, 2, 3) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
