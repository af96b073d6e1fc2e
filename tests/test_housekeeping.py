"""`fidelity gc` and what a run records about kept set-up worktrees, on real repositories.

Runs use a `reuse_setup` table whose setup leaves read-only folders in the kept worktree
(as a package manager can); gc lists by default, removes only with --apply, through git,
and leaves the user's checkout and index exactly as they were.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console
from support import Repo, run_cli, snapshot

from fidelity import workdir
from fidelity.matrix import gate
from fidelity.matrix.housekeeping import DAY, human_size
from fidelity.matrix.run import ledger, rundir, setups
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict import render
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]
SETUP = (
    "import os, pathlib; d = pathlib.Path('.fidelity-venv/lib'); d.mkdir(parents=True); "
    "(d / 'mod.py').write_text('x'); os.chmod(d / 'mod.py', 0o444); os.chmod(d, 0o555)"
)
CASE = "import sys; open(sys.argv[1] + '/r.txt', 'w').write('r')"


@pytest.fixture
def kept(make_repo) -> Repo:
    repo: Repo = make_repo("kept")
    table = (
        f'[matrix]\nreuse_setup = true\nsetup = [["{{python}}", "-c", {json.dumps(SETUP)}]]\n'
        f'[[case]]\nid = "c"\nargv = ["{{python}}", "-c", {json.dumps(CASE)}, "{{out}}"]\n'
        'outputs = ["r.txt"]\n'
    )
    repo.commit({"cases/matrix.toml": table, ".gitignore": ".fidelity/\n"})
    repo.commit({"unrelated.txt": "x"})
    return repo


def run(repo: Repo) -> Outcome:
    outcome = gate.run(repo.path, RunRequest("HEAD~1", "HEAD"))
    assert outcome.exit_code == 0, outcome.findings
    return outcome


def gc(repo: Repo, *args: str) -> tuple[int, str]:
    return run_cli(["gc", "-q", "--repo", str(repo.path), *args])


def listed(repo: Repo) -> list[str]:
    lines = repo.git("worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


def age(paths: list[Path], days: float) -> None:
    then = time.time() - days * DAY
    for path in paths:
        os.utime(path, (then, then), follow_symlinks=False)


def kept_paths(outcome: Outcome) -> list[Path]:
    return [Path(outcome.baseline.kept), Path(outcome.candidate.kept)]


# --- what run.json and the terminal say ----------------------------------------------------


def test_run_json_says_a_kept_worktree_was_kept_and_reused_not_removed(kept: Repo) -> None:
    first = run(kept)
    side = json.loads((first.run_dir / "run.json").read_text())["sides"]["candidate"]
    assert side["worktree_removed"] is False  # it said true: a kept worktree "removed"
    assert side["kept"] == side["worktree"] and Path(side["kept"]).is_dir()
    assert side["reused"] is False
    assert Code.WORKTREE_NOT_REMOVED not in {f.code for f in first.findings}
    second = run(kept)
    again = rundir.read(second.run_dir)
    assert again.baseline.reused and again.candidate.reused
    assert again.candidate.kept == side["kept"]


def test_a_run_without_reuse_keeps_nothing(sim_repo: Repo) -> None:
    outcome = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD"))
    side = json.loads((outcome.run_dir / "run.json").read_text())["sides"]["baseline"]
    assert side["worktree_removed"] is True and side["kept"] == "" and side["reused"] is False


def test_a_run_json_written_before_kept_and_reused_still_loads() -> None:
    record = rundir.read(ROOT / "cases/fixtures/runs/holds")
    assert "kept" not in record.raw["sides"]["baseline"]
    assert record.baseline.kept == "" and not record.baseline.reused


def terminal(outcome: Outcome) -> str:
    out = io.StringIO()
    render.outcome(Console(file=out, width=100, color_system=None), outcome, plain=True)
    return out.getvalue()


def test_the_terminal_says_a_setup_was_kept_then_reused(kept: Repo) -> None:
    first = terminal(run(kept))
    where = run(kept).candidate.kept
    assert f"candidate: set up in a worktree kept for the next run {where}" in first
    second = terminal(run(kept))
    assert f"candidate: setup reused from the kept worktree {where}" in second
    assert "`fidelity gc` lists them" in second


# --- fidelity gc on kept set-up worktrees --------------------------------------------------


def test_gc_lists_by_default_and_removes_nothing(kept: Repo) -> None:
    outcome = run(kept)
    before, worktrees = snapshot(kept.path), listed(kept)
    code, out = gc(kept, "--keep-days", "0")
    assert code == 0
    for path in kept_paths(outcome):
        assert f"setup\t.fidelity/setups/{path.name}\t" in out
        assert "min\tremove\tkept set-up, last used " in out and "(not within 0 days)" in out
        assert path.is_dir()
    assert "dry run: would remove 2 " in out and "pass --apply to remove them" in out
    assert snapshot(kept.path) == before and listed(kept) == worktrees


def test_gc_apply_removes_kept_setups_through_git_and_leaves_the_checkout(kept: Repo) -> None:
    outcome = run(kept)
    before = snapshot(kept.path)
    code, out = gc(kept, "--keep-days", "0", "--apply")
    assert code == 0, out
    assert listed(kept) == [str(kept.path)]
    assert not any((kept.path / ".fidelity/setups").iterdir())  # venvs, records, locks
    assert out.count("\tremoved\t") == 2 and "removed 2 " in out
    after = snapshot(kept.path)
    assert {**after, "worktrees": ""} == {**before, "worktrees": ""}
    assert not any(p.exists() for p in kept_paths(outcome))
    steps = [s.argv for s in run(kept).candidate.setup]
    assert steps[0] == "(set up again: not set up before)"


def test_gc_keeps_setups_used_recently_and_removes_them_once_old(kept: Repo) -> None:
    outcome = run(kept)
    code, out = gc(kept, "--apply")
    assert code == 0 and "(kept while used within 7 days)" in out
    assert all(p.is_dir() for p in kept_paths(outcome))
    for path in kept_paths(outcome):
        age([path, *setups.companions(path)], 8)
    code, out = gc(kept, "--apply")
    assert code == 0 and out.count("\tremoved\t") == 2
    assert listed(kept) == [str(kept.path)]


def test_gc_keeps_a_setup_a_run_is_using_and_one_locked_in_git(kept: Repo) -> None:
    busy, pinned = kept_paths(run(kept))
    assert "locked fidelity kept set-up" in kept.git("worktree", "list", "--porcelain")
    kept.git("worktree", "unlock", str(pinned))  # fidelity's lock, its record of the set-up
    kept.git("worktree", "lock", "--reason", "my bisect", str(pinned))
    with setups.locked(setups.companions(busy)[1]) as mine:
        assert mine
        code, out = gc(kept, "--keep-days", "0", "--apply")
    assert code == 0
    assert "a fidelity run holds it until the run ends" in out
    assert "locked in git (my bisect), not by fidelity: left; it is yours to remove" in out
    assert busy.is_dir() and pinned.is_dir()
    assert set(listed(kept)) == {str(kept.path), str(busy), str(pinned)}
    code, out = gc(kept, "--keep-days", "0", "--apply")
    assert code == 0 and set(listed(kept)) == {str(kept.path), str(pinned)}


# --- fidelity gc on run directories --------------------------------------------------------


def fake_runs(repo: Repo, names: list[str], file: str = "run.json") -> list[Path]:
    """Run directories as fidelity makes them (marked), with a run.json or a plan.json,
    each a day older."""
    made = []
    for n, name in enumerate(names):
        folder = workdir.fresh(repo.path, "runs", name)
        (folder / file).write_text("{}\n")
        age([folder], 10 + n)
        made.append(folder)
    return made


def test_retention_keeps_the_newest_runs_and_the_young_ones(kept: Repo) -> None:
    real = run(kept).run_dir
    old = fake_runs(kept, ["old-0", "old-1", "old-2", "old-3", "old-4"])
    code, out = gc(kept, "--keep-runs", "3", "--keep-days", "30", "--apply")
    assert code == 0 and all(p.is_dir() for p in [real, *old]), "all younger than 30 days"
    code, out = gc(kept, "--keep-runs", "3", "--apply")
    assert code == 0, out
    assert [p.is_dir() for p in [real, *old]] == [True, True, True, False, False, False]
    assert "older than 7 days and not among the newest 3" in out


EVERY = ("--include-interrupted",)


def test_an_interrupted_run_stays_unless_asked_and_a_running_one_always(kept: Repo) -> None:
    resumable, live = fake_runs(kept, ["resumable", "live"], ledger.PLAN)
    (kept.path / ".fidelity/runs/notes").mkdir()
    code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", "--apply")
    assert code == 0 and resumable.is_dir() and live.is_dir()
    assert f"interrupted: finish it with `fidelity run --resume {resumable}`" in out
    assert "not a fidelity run (no .fidelity-made marker): left alone" in out
    with ledger.running(live):
        code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", *EVERY)
        assert "a fidelity run is running in it now" in out
        code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", "--apply", *EVERY)
    assert code == 0
    assert not resumable.exists() and live.is_dir()
    assert (kept.path / ".fidelity/runs/notes").is_dir()


def test_a_removal_that_fails_exits_1_and_says_how(kept: Repo) -> None:
    (old,) = fake_runs(kept, ["old"])
    stuck = old / "stuck"
    stuck.write_text("x")
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(stuck)]).returncode != 0:
        pytest.skip("needs chattr +i (root, and a filesystem that has it) to make a file stick")
    try:
        code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", "--apply")
    finally:
        subprocess.run([chattr, "-i", str(stuck)], check=True)
    assert code == 1
    assert f"NOT removed\tcould not remove it; remove it with `rm -rf {old}`" in out
    assert "1 could NOT be removed" in out
    code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", "--apply")
    assert code == 0 and not old.exists()


def test_gc_writes_json_and_says_sizes(kept: Repo, tmp_path: Path) -> None:
    run(kept)
    code, _ = gc(kept, "--json", str(tmp_path / "gc.json"))
    data = json.loads((tmp_path / "gc.json").read_text())
    assert code == 0 == data["exit_code"] and data["applied"] is False
    kinds = sorted(i["kind"] for i in data["items"])
    assert kinds == ["run", "setup", "setup"]
    assert all(i["bytes"] > 0 and i["action"] == "keep" for i in data["items"])
    assert [human_size(n) for n in (999, 28_000_000, 999_999_999)] == [
        "999 B",
        "28.0 MB",
        "1.0 GB",
    ]


def test_controls_runs_fall_under_the_same_rule_and_a_live_one_stays(kept: Repo) -> None:
    """Issue 22: `.fidelity/controls/` kept every run's logs for good. The rule is the
    matrix's, with the newest counted apart; a folder a live process writes stays."""
    import sys

    root = kept.path / ".fidelity/controls"
    names = ["20261101-101010-abcdef0", "20261102-101010-abcdef0", "20261103-101010-abcdef0"]
    folders = []
    for n, name in enumerate(names):
        workdir.fresh(kept.path, "controls", name)
        (root / name / "report.json").write_text("{}\n")
        age([root / name], 30 - n)
        folders.append(root / name)
    (root / "mine").mkdir()  # not a controls run: left alone
    live = workdir.fresh(kept.path, "controls", "20261104-101010-abcdef0")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from fidelity import workdir; "
            f"workdir.hold(Path({str(live)!r})); print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        age([live], 40)
        run(kept)  # one matrix run: it does not count among the controls runs' newest
        code, out = gc(kept, "--keep-runs", "1", "--keep-days", "7", "--apply")
        assert code == 0, out
        assert [f.is_dir() for f in folders] == [False, False, True], out
        assert live.is_dir() and "a fidelity command is writing to it now" in out
        assert (root / "mine").is_dir() and "not a fidelity controls run (no .fidelity-made" in out
        assert len(list((kept.path / ".fidelity/runs").iterdir())) == 1
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    code, out = gc(kept, "--keep-runs", "0", "--keep-days", "0", "--apply")
    assert code == 0 and not live.exists(), "the holder is gone: the rule applies"
