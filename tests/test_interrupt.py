"""Ctrl-C during a run: children killed, worktrees removed, the user's checkout untouched."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import PY, Repo, alive, snapshot, wait_for


def killed(pid: int, within: float = 10) -> bool:
    """Whether pid is gone within `within` seconds (a killed process is reaped a moment later)."""
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def left_as_it_was(repo: Repo, before: dict[str, str]) -> None:
    """The user's checkout as snapshot() saw it, and no worktree but the main one."""
    assert snapshot(repo.path) == before
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


@pytest.mark.parametrize(
    ("signum", "code", "said", "twice"),
    [
        (signal.SIGINT, 130, b"interrupted", False),
        (signal.SIGTERM, 143, b"interrupted", False),
        (signal.SIGINT, 130, b"interrupted", True),  # a second Ctrl-C during the cleanup
    ],
)
def test_ctrl_c_and_sigterm_clean_up_and_leave_the_checkout_unchanged(
    sim_repo: Repo, tmp_path: Path, signum: int, code: int, said: bytes, twice: bool
) -> None:
    mark = tmp_path / "case.pid"
    sleeper = f"import os, time; open({str(mark)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    table = f'[[case]]\nid = "slow"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(sleeper)}]\noutputs = ["x"]\n'
    sim_repo.commit({"cases/matrix.toml": table})
    (sim_repo.path / "wip.txt").write_text("uncommitted")
    before = snapshot(sim_repo.path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fidelity",
            "--quiet",
            "run",
            "--baseline",
            "HEAD",
            "--repo",
            str(sim_repo.path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(mark)
        worktrees = sim_repo.git("worktree", "list", "--porcelain")
        assert worktrees.count("worktree ") == 3, "both sides run at once, each in a worktree"
        proc.send_signal(signum)
        if twice:
            for _ in range(5):
                time.sleep(0.01)
                proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert said in err
    assert b"fidelity run --resume " in err  # the kept evidence, and how to finish the run
    assert b"fidelity: no case had finished in " in err  # it said "the finished cases'"
    assert killed(int(mark.read_text())), "the running case was not killed"
    left_as_it_was(sim_repo, before)


def test_ctrl_c_during_a_setup_step_kills_it_at_once(sim_repo: Repo, tmp_path: Path) -> None:
    """A setup command (a `pip install` of minutes) ran on to its end after Ctrl-C: it was
    not started under the run's cancellation, so the run waited (the whole step, 7 s of 8)."""
    mark = tmp_path / "setup.pid"
    sleeper = f"import os, time; open({str(mark)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    setup = json.dumps([[PY, "-c", sleeper]])
    table = f'[matrix]\nsetup = {setup}\n[[case]]\nid = "a"\nargv = ["true"]\noutputs = ["x"]\n'
    sim_repo.commit({"cases/matrix.toml": table})
    before = snapshot(sim_repo.path)
    argv = [sys.executable, "-m", "fidelity", "-q", "run", "--baseline", "HEAD",
            "--repo", str(sim_repo.path)]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(mark)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert took < 20, f"the run went on for {took:.1f} s after Ctrl-C"  # 120 s before
    assert killed(int(mark.read_text())), "the setup step was not killed"
    left_as_it_was(sim_repo, before)
