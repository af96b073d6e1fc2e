"""`fidelity gc --apply` removes only what fidelity's own record says it made (issue 36):
never through a link found in `.fidelity/`, a worktree only through git and only one this
repository's git locked for fidelity, and never a set-up a live run still holds (issue 34).

Each shape is one a user can make by hand: a link in `.fidelity/setups/` to their own
worktree, `.fidelity` or `.fidelity/runs` as a link to a bigger disk, link loops, another
repository's worktree, a plain folder. What is outside fidelity's own entries is snapshot
(every path, its type, mode, content or link target) before and after.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from support import PY, Repo, run_cli, wait_for

from fidelity import workdir
from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest

OLD = 30 * 86400.0
NAME = "0123456789ab-0123456789ab"  # shaped like a kept set-up's name
EVERYTHING = ("--keep-runs", "0", "--keep-days", "0", "--apply")
LINK = "a link, not fidelity's: left (gc never removes through a link)"


def gc(repo: Repo, *args: str) -> tuple[int, str]:
    return run_cli(["gc", "-q", "--repo", str(repo.path), *args])


def old(*paths: Path) -> None:
    then = time.time() - OLD
    for path in paths:
        os.utime(path, (then, then), follow_symlinks=False)


def tree(root: Path) -> dict[str, tuple[str, ...]]:
    """Every path under root, links not followed: its type and mode, a file's content hash,
    a link's target."""
    found: dict[str, tuple[str, ...]] = {}
    for top, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(top, name)
            st = path.lstat()
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", oct(st.st_mode))
            else:
                found[rel] = (
                    "file",
                    oct(st.st_mode),
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
    return found


def worktrees(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},  # from a hook
    ).stdout
    return [
        line.removeprefix("worktree ") for line in out.splitlines() if line.startswith("worktree ")
    ]


def my_worktree(repo: Repo, where: Path) -> Path:
    """The user's own linked worktree, with uncommitted work in it."""
    repo.git("worktree", "add", "-q", "-b", where.name, str(where))
    (where / "wip.txt").write_text("uncommitted work\n")
    (where / "a.txt").write_text("changed, not committed\n")
    return where


def fidelity_run(repo: Repo) -> Path:
    """A real run directory, made as `fidelity run` makes it, old enough for any rule."""
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert outcome.exit_code == 0, outcome.findings
    old(outcome.run_dir)
    return outcome.run_dir


def test_a_link_in_setups_to_my_worktree_is_left_with_my_work(
    sim_repo: Repo, tmp_path: Path
) -> None:
    mine = my_worktree(sim_repo, tmp_path / "mine")
    root = sim_repo.path / ".fidelity/setups"
    root.mkdir(parents=True)
    link = root / NAME
    link.symlink_to(mine)
    old(link)
    before = tree(mine)
    code, out = gc(sim_repo, *EVERYTHING)
    assert tree(mine) == before, "gc went through the link into my worktree"
    assert str(mine) in worktrees(sim_repo.path)
    assert link.is_symlink() and code == 0, out
    assert f"setup\t.fidelity/setups/{NAME}\t" in out
    assert LINK in out


def test_runs_as_a_link_to_a_bigger_disk_stays_usable_and_only_runs_go(
    sim_repo: Repo, tmp_path: Path
) -> None:
    big = tmp_path / "big" / "runs"
    (big / "my-results").mkdir(parents=True)
    (big / "my-results" / "run.json").write_text('{"mine": true}\n')
    (big / "my-results" / "data.csv").write_text("1,2\n")
    (big / "notes").mkdir()
    (sim_repo.path / ".fidelity").mkdir()
    (sim_repo.path / ".fidelity/.gitignore").write_text("*\n")  # as an earlier run left it
    (sim_repo.path / ".fidelity/runs").symlink_to(big)
    run_dir = fidelity_run(sim_repo)
    assert run_dir.parent == sim_repo.path / ".fidelity/runs" and (big / run_dir.name).is_dir()
    old(big / "my-results", big / "notes")
    before = tree(big / "my-results")
    code, out = gc(sim_repo, *EVERYTHING)
    assert tree(big / "my-results") == before, "gc removed my folder through the runs link"
    assert (big / "notes").is_dir()
    assert not (big / run_dir.name).exists(), "the run fidelity made through the link goes"
    assert (sim_repo.path / ".fidelity/runs").is_symlink() and code == 0, out
    assert "no .fidelity-made marker" in out
    assert fidelity_run(sim_repo).parent.resolve() == big  # still usable


def test_fidelity_as_a_link_keeps_what_is_not_fidelitys(sim_repo: Repo, tmp_path: Path) -> None:
    target = tmp_path / "big" / "fid"
    (target / "runs" / "my-results").mkdir(parents=True)
    (target / "runs" / "my-results" / "run.json").write_text('{"mine": true}\n')
    (target / "setups").mkdir()
    mine = my_worktree(sim_repo, tmp_path / "mine")
    (target / "setups" / NAME).symlink_to(mine)
    (sim_repo.path / ".fidelity").symlink_to(target)
    run_dir = fidelity_run(sim_repo)
    old(target / "runs" / "my-results", target / "setups" / NAME)
    before = {"mine": tree(mine), "results": tree(target / "runs" / "my-results")}
    code, out = gc(sim_repo, *EVERYTHING)
    after = {"mine": tree(mine), "results": tree(target / "runs" / "my-results")}
    assert after == before, "gc removed through the .fidelity link"
    assert str(mine) in worktrees(sim_repo.path)
    assert not run_dir.exists() and code == 0, out
    assert (sim_repo.path / ".fidelity").is_symlink()


def test_a_link_to_a_run_fidelity_made_elsewhere_is_left_and_the_run_too(
    sim_repo: Repo, tmp_path: Path
) -> None:
    """The run directory the link names is fidelity's, but not this `.fidelity/`'s entry:
    gc removes entries, never what a link in them points at."""
    (tmp_path / "archive").mkdir()
    elsewhere = workdir.fresh(tmp_path / "archive", "runs", "kept-for-the-paper")
    (elsewhere / "run.json").write_text("{}\n")
    (elsewhere / "baseline").mkdir()
    (elsewhere / "baseline" / "evidence.jsonl").write_text("{}\n")
    link = workdir.folder(sim_repo.path, "runs") / "kept-for-the-paper"
    link.symlink_to(elsewhere)
    old(elsewhere, link)
    before = tree(tmp_path / "archive")
    code, out = gc(sim_repo, *EVERYTHING)
    assert tree(tmp_path / "archive") == before, "gc removed a run through a link to it"
    assert link.is_symlink() and code == 0, out
    assert "run\t.fidelity/runs/kept-for-the-paper\t" in out and LINK in out


def test_link_loops_are_listed_and_left(sim_repo: Repo) -> None:
    fid = sim_repo.path / ".fidelity"
    for folder in ("runs", "setups"):
        (fid / folder).mkdir(parents=True)
    loops = {
        fid / "runs" / "loop": "loop",
        fid / "runs" / "back": "../runs",
        fid / "setups" / NAME: NAME,
        fid / "setups" / "up": "..",
        fid / "controls": "controls",
    }
    for link, target in loops.items():
        link.symlink_to(target)
        old(link)
    before = tree(sim_repo.path)
    code, out = gc(sim_repo, *EVERYTHING)
    assert tree(sim_repo.path) == before
    assert code == 0, out
    assert out.count("a link, not fidelity's: left") == 4, out


def test_setups_as_a_link_loop_is_no_traceback(sim_repo: Repo) -> None:
    (sim_repo.path / ".fidelity").mkdir()
    (sim_repo.path / ".fidelity/setups").symlink_to("setups")
    before = tree(sim_repo.path)
    code, out = gc(sim_repo, *EVERYTHING)
    assert code == 0 and tree(sim_repo.path) == before, out


def test_another_repositorys_worktree_a_plain_folder_and_my_own_worktree_stay(
    sim_repo: Repo, make_repo, tmp_path: Path
) -> None:
    other: Repo = make_repo("other")
    other.commit({"theirs.txt": "theirs\n"})
    root = sim_repo.path / ".fidelity/setups"
    root.mkdir(parents=True)
    foreign = root / NAME
    other.git("worktree", "add", "-q", "--detach", str(foreign))
    (foreign / "wip.txt").write_text("their uncommitted work\n")
    plain = root / "fedcba987654-fedcba987654"
    (plain / "sub").mkdir(parents=True)
    (plain / "sub" / "keep.txt").write_text("mine\n")
    inside = root / "abcabcabcabc-abcabcabcabc"
    sim_repo.git("worktree", "add", "-q", "--detach", str(inside))
    (inside / "wip.txt").write_text("uncommitted\n")
    old(foreign, plain, inside)
    before = tree(root)
    code, out = gc(sim_repo, *EVERYTHING)
    assert tree(root) == before, "gc removed a worktree or folder fidelity did not make"
    assert str(foreign) in worktrees(other.path) and str(inside) in worktrees(sim_repo.path)
    assert code == 0, out
    assert "not a worktree of this repository: left" in out
    assert "not locked by fidelity" in out


def test_a_run_made_before_markers_is_left_and_says_so(sim_repo: Repo) -> None:
    legacy = sim_repo.path / ".fidelity/runs/20250101-legacy"
    legacy.mkdir(parents=True)
    (legacy / "run.json").write_text("{}\n")
    old(legacy)
    code, out = gc(sim_repo, *EVERYTHING)
    assert legacy.is_dir() and code == 0, out
    assert "made before fidelity marked its runs" in out and f"rm -rf {legacy}" in out


def test_a_link_is_no_record_of_fidelitys(tmp_path: Path) -> None:
    """`workdir.made`, the record gc trusts for a run directory: the marker fidelity wrote,
    in a folder that is no link, and not itself a link."""
    (tmp_path / "repo").mkdir()
    real = workdir.fresh(tmp_path / "repo", "runs", "r")
    assert workdir.made(real, "runs") and not workdir.made(real, "controls")
    (tmp_path / "to-run").symlink_to(real)
    (tmp_path / "forged").mkdir()
    (tmp_path / "forged" / workdir.MADE).symlink_to(real / workdir.MADE)
    (tmp_path / "loop").symlink_to("loop")
    for path in ("to-run", "forged", "loop", "absent"):
        assert not workdir.made(tmp_path / path, "runs"), path


def test_a_forged_marker_link_is_no_record(sim_repo: Repo, tmp_path: Path) -> None:
    real = workdir.fresh(sim_repo.path, "runs", "real")
    fake = sim_repo.path / ".fidelity/runs/fake"
    fake.mkdir()
    (fake / workdir.MADE).symlink_to(real / workdir.MADE)
    (fake / "run.json").write_text("{}\n")
    old(real, fake)
    code, out = gc(sim_repo, *EVERYTHING)
    assert fake.is_dir() and not real.exists() and code == 0, out


# --- a live run holds its kept set-ups until it ends (issue 34) ----------------------------

SLOW = """
import pathlib, sys, time
if pathlib.Path('slow.flag').exists():
    pathlib.Path(sys.argv[2]).write_text('started')
    while not pathlib.Path(sys.argv[3]).exists():
        time.sleep(0.05)
open(sys.argv[1] + '/r.txt', 'w').write('r')
"""


def _free(lock: Path) -> bool:
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def test_gc_during_a_live_run_leaves_its_setups_and_the_run_ends_fine(
    make_repo, tmp_path: Path
) -> None:
    repo: Repo = make_repo("live")
    started, go = tmp_path / "started", tmp_path / "go"
    argv = [PY, "-c", SLOW, "{out}", str(started), str(go)]
    table = (
        "[matrix]\nreuse_setup = true\n"
        f'[[case]]\nid = "c"\nargv = {json.dumps(argv)}\noutputs = ["r.txt"]\ntimeout_s = 120\n'
    )
    base = repo.commit({"cases/matrix.toml": table, ".gitignore": ".fidelity/\n"})
    repo.commit({"slow.flag": "the candidate's case waits for the test\n"})
    cmd = [sys.executable, "-m", "fidelity", "-q", "run", "--baseline", "HEAD~1"]
    proc = subprocess.Popen(
        [*cmd, "--repo", str(repo.path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for(started, 120)
        done = repo.path / ".fidelity/setups"
        (baseline,) = [p for p in done.glob(f"{base[:12]}-*") if p.is_dir()]
        lock = baseline.with_name(baseline.name + ".lock")
        deadline = time.monotonic() + 3  # the baseline side is done: its case is quick
        while time.monotonic() < deadline and not _free(lock):
            time.sleep(0.05)
        code, out = gc(repo, "--keep-days", "0", "--apply")
        assert code == 0, out
        assert baseline.is_dir(), "gc removed the set-up a live run holds"
        assert "a fidelity run holds it until the run ends" in out
        go.write_text("go")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        go.write_text("go")  # a case still waiting ends, whatever failed above
        proc.terminate()  # fidelity's own handler stops its cases; kill only if it hangs
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, (stdout, stderr)
    (run_dir,) = (repo.path / ".fidelity/runs").iterdir()
    sides = json.loads((run_dir / "run.json").read_text())["sides"]
    assert all(Path(sides[s]["kept"]).is_dir() for s in ("baseline", "candidate"))
    code, out = gc(repo, "--keep-days", "0", "--apply")
    assert code == 0 and not baseline.exists(), "the run ended: its set-ups are gc's again"
