"""Detached worktrees: always removed, and safe to add and remove from several threads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import PY, Repo, alive, git_env, matrix_toml

from fidelity import worktree


def test_removed_after_an_error(sim_repo: Repo) -> None:
    sha = sim_repo.git("rev-parse", "HEAD")
    with pytest.raises(RuntimeError), worktree.detached(sim_repo.path, sha, "t") as checkout:
        assert (checkout.path / "prog.py").is_file()
        raise RuntimeError("boom")
    assert checkout.removed and not checkout.path.exists()
    assert sim_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_concurrent_add_and_remove_do_not_race(sim_repo: Repo) -> None:
    sha = sim_repo.git("rev-parse", "HEAD")

    def cycle(i: int) -> Path:
        with worktree.detached(sim_repo.path, sha, f"t{i}") as checkout:
            assert (checkout.path / "value.txt").read_text() == "one\n"
        assert checkout.removed
        return checkout.path

    with ThreadPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(cycle, range(40)))
    assert len(set(paths)) == 40 and not any(p.exists() for p in paths)
    assert sim_repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def worktrees(repo: Repo) -> list[str]:
    return [
        line.removeprefix("worktree ")
        for line in repo.git("worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ][1:]


def test_a_worktree_is_locked_with_its_owner(sim_repo: Repo) -> None:
    sha = sim_repo.git("rev-parse", "HEAD")
    with worktree.detached(sim_repo.path, sha, "t") as checkout:
        listing = sim_repo.git("worktree", "list", "--porcelain")
        assert f"locked fidelity pid={os.getpid()} started=" in listing
        sim_repo.git("worktree", "prune")
        assert worktrees(sim_repo) == [str(checkout.path)], "prune keeps a live run's worktree"
        assert worktree.open_checkouts() == [checkout.path]
    assert worktrees(sim_repo) == [] and worktree.open_checkouts() == []


def test_prune_stale_spares_live_foreign_and_unlocked_worktrees(
    sim_repo: Repo, tmp_path: Path
) -> None:
    """Only a worktree whose fidelity owner is gone goes; the same pid started later (a
    reused pid) counts as gone too."""
    sha = sim_repo.git("rev-parse", "HEAD")
    me = worktree.me()
    dead = worktree.Owner(me.pid, "1", me.host)  # this pid, but another start time
    elsewhere = worktree.Owner(1, "1", me.host + "-other")
    for name, reason in (
        ("dead", dead.reason()),
        ("elsewhere", elsewhere.reason()),
        ("theirs", "someone else's lock"),
    ):
        sim_repo.git(
            "worktree", "add", "--detach", "--lock", "--reason", reason, str(tmp_path / name), sha
        )
    sim_repo.git("worktree", "add", "--detach", str(tmp_path / "plain"), sha)
    with worktree.detached(sim_repo.path, sha, "live") as live:
        found = worktree.prune_stale(sim_repo.path)
        assert [(s.path, s.removed) for s in found] == [(tmp_path / "dead", True)]
        assert "left by a fidelity run that is no longer running" in found[0].line()
        assert sorted(worktrees(sim_repo)) == sorted(
            [str(tmp_path / n) for n in ("elsewhere", "theirs", "plain")] + [str(live.path)]
        )
        assert worktree.prune_stale(sim_repo.path) == ()


def _fidelity(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fidelity", "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _sleeping_case(repo: Repo, mark: Path) -> None:
    sleeper = (
        f"import os, time; open(os.path.join({str(mark)!r}, str(os.getpid())), 'w').close(); "
        "time.sleep(120)"
    )
    table = (
        f'[[case]]\nid = "slow"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(sleeper)}]\n'
        'outputs = ["x"]\ntimeout_s = 300\n'
    )
    repo.commit({"cases/matrix.toml": table})


def test_sigkill_leaves_a_worktree_the_next_run_reports_and_prunes(
    sim_repo: Repo, tmp_path: Path
) -> None:
    """A real `fidelity run` killed with SIGKILL leaves its locked worktree and its case; the
    next run removes both and says so, while a live run's worktree stays untouched."""
    mark = tmp_path / "started"  # each side's case leaves its pid here, once it runs
    mark.mkdir()
    _sleeping_case(sim_repo, mark)
    killed = _fidelity("run", "--baseline", "HEAD", "--repo", str(sim_repo.path))
    try:
        deadline = time.monotonic() + 60
        while len(list(mark.iterdir())) < 2:  # both sides at once: wait for both cases
            assert time.monotonic() < deadline, "both sides' cases never started"
            time.sleep(0.05)
        left = worktrees(sim_repo)
        assert len(left) == 2, "the run's two worktrees exist while it runs"
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=30)
    finally:
        killed.kill()
    orphans = [int(p.name) for p in mark.iterdir()]
    assert all(map(alive, orphans)), "SIGKILL leaves the cases running: in their own sessions"
    assert worktrees(sim_repo) == left, "and the worktree registered"
    sha = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"cases/matrix.toml": matrix_toml({"a": "ok"})})
    with worktree.detached(sim_repo.path, sha, "live") as live:
        nxt = _fidelity("run", "--baseline", "HEAD", "--repo", str(sim_repo.path))
        _, err = nxt.communicate(timeout=120)
        assert nxt.returncode == 0, err
        text = err.decode()
        for path in left:
            assert f"removed worktree {path}" in text
        assert f"fidelity pid={killed.pid} " in text
        for orphan in orphans:
            assert f"killed 1 orphaned process(es) still running in it (pid {orphan})" in text
        assert worktrees(sim_repo) == [str(live.path)], "the live run's worktree stays"
        assert (live.path / "prog.py").is_file()
    deadline = time.monotonic() + 10
    while any(map(alive, orphans)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(alive, orphans))
    assert not any(Path(p).exists() or Path(p).parent.exists() for p in left)
    again = _fidelity("run", "--baseline", "HEAD", "--repo", str(sim_repo.path))
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0 and b"removed worktree" not in err, "said once, then gone"


def test_the_users_git_hooks_never_run(sim_repo: Repo, tmp_path: Path) -> None:
    """`git worktree add` and `checkout` fire post-checkout; a user's hook (a formatter, an
    LFS pull, anything) must not run inside fidelity's worktrees or see their paths."""
    mark = tmp_path / "hook-ran"
    hook = f"#!/bin/sh\necho \"$0 $*\" >> '{mark}'\n"
    own = tmp_path / "hooks"
    for folder in (sim_repo.path / ".git" / "hooks", own):
        folder.mkdir(exist_ok=True)
        for name in ("post-checkout", "reference-transaction", "post-index-change"):
            (folder / name).write_text(hook)
            (folder / name).chmod(0o755)
    sha = sim_repo.git("rev-parse", "HEAD")
    for configured in (False, True):
        if configured:
            sim_repo.git("config", "core.hooksPath", str(own))
        with worktree.detached(sim_repo.path, sha, "hooks") as checkout:
            assert (checkout.path / "prog.py").is_file()
        assert checkout.removed
        assert not mark.exists(), mark.read_text()
    live = ["git", "checkout", "-q", "--detach", sha]  # the hook is live: git itself runs it
    subprocess.run(live, cwd=sim_repo.path, env=git_env(tmp_path), check=True)
    assert mark.exists()


def test_a_replace_ref_does_not_change_what_a_side_runs(sim_repo: Repo) -> None:
    """`git replace` can swap a commit for another under the same id; a side is its
    commit's own tree, as are its evidence and the gate's verdict."""
    from fidelity.matrix import gate
    from fidelity.matrix.run.request import RunRequest

    base = sim_repo.git("rev-parse", "HEAD")
    cand = sim_repo.commit({"value.txt": "two\n"}, "the candidate")
    other = sim_repo.commit({"value.txt": "one\n"}, "back to one")
    sim_repo.git("replace", cand, other)
    assert sim_repo.git("show", f"{cand}:value.txt") == "one"  # git, by default, swaps it
    outcome = gate.run(sim_repo.path, RunRequest(base, cand))
    result = outcome.run_dir / "candidate" / "cases" / "a" / "out" / "result.txt"
    assert result.read_text() == "two\n"
    assert outcome.exit_code == 1  # a and b moved
