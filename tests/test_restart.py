"""A job its scheduler starts again (a Slurm requeue, a pod restart, a CI re-run) runs the same
command into the same --out. With --resume-if-exists it carries on: this run unfinished is
resumed, complete is judged again, nothing judged starts afresh, another run is refused. The
command `fidelity run --resume DIR` runs wherever it is printed (the run's plan names its
repository), and a judge that refuses still writes the reports asked for. Real repositories,
real processes killed mid-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from support import Repo
from test_resume import CASE, _count, finished, table

from fidelity.cli.main import main


def command(repo: Repo, out: Path, *extra: str) -> list[str]:
    return ["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD", "--out", str(out), *extra]


def killed_mid_way(repo: Repo, out: Path, *extra: str) -> set[str]:
    """The command run in a process of its own and killed once 2 case runs are done, as a
    requeue or a node failure kills a task: what it had finished."""
    argv = [sys.executable, "-m", "fidelity", *command(repo, out, *extra)]
    process = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(finished(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "run.json").exists(), "the run ended before it was killed"
    return finished(out)


@pytest.fixture
def slow(make_repo, tmp_path: Path) -> tuple[Repo, Path]:
    repo: Repo = make_repo("restart")
    log = tmp_path / "runs.log"
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(4, 0.4, log)})
    return repo, log


def test_a_restarted_run_resumes_its_own_folder(
    slow: tuple[Repo, Path], tmp_path: Path, capsys
) -> None:
    repo, log = slow
    out = tmp_path / "shard-1"
    before = killed_mid_way(repo, out, "--shard", "1/1")
    assert main(command(repo, out, "--shard", "1/1")) == 2  # what a requeue met before
    assert "already exists and is not empty; choose another --out" in capsys.readouterr().err
    ran = _count(log)
    assert main(command(repo, out, "--shard", "1/1", "--resume-if-exists")) == 0
    assert "holds this run, unfinished: resuming it" in capsys.readouterr().err
    again = {k: v - ran.get(k, 0) for k, v in _count(log).items()}
    assert sum(again.values()) <= 8 - len(before)  # what was finished is kept
    assert json.loads((out / "run.json").read_text())["exit_code"] == 0
    # started once more after it ended (a requeue of a finished task): judged, nothing runs
    ran = _count(log)
    assert main(command(repo, out, "--shard", "1/1", "--resume-if-exists")) == 0
    assert "holds this run, complete: judged again" in capsys.readouterr().err
    assert _count(log) == ran


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--shard", "1/2"], "its shard (--shard) is '1/1', this one's '1/2'"),
        (["--shard", "1/1", "--case", "c0"], "its selection (--case/--tag) is none"),
    ],
)
def test_another_command_is_refused_its_folder(
    slow: tuple[Repo, Path], tmp_path: Path, capsys, extra: list[str], says: str
) -> None:
    repo, _ = slow
    out = tmp_path / "shard-1"
    killed_mid_way(repo, out, "--shard", "1/1")
    assert main(command(repo, out, *extra, "--resume-if-exists")) == 2
    err = capsys.readouterr().err
    assert "holds another run" in err and says in err, err
    assert not (out / "run.json").exists()


def test_a_complete_run_of_another_commit_is_refused(
    slow: tuple[Repo, Path], tmp_path: Path, capsys
) -> None:
    repo, _ = slow
    out = tmp_path / "run"
    assert main(command(repo, out, "--resume-if-exists")) == 0
    repo.commit({"v.txt": "2"})
    assert main(command(repo, out, "--resume-if-exists")) == 2
    assert "holds a complete run whose baseline was" in capsys.readouterr().err


def test_nothing_judged_starts_afresh_and_anything_else_is_refused(
    slow: tuple[Repo, Path], tmp_path: Path, capsys
) -> None:
    repo, _ = slow
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "plan.json.tmp").write_text('{"schema": "fidel')  # killed while writing its plan
    assert main(command(repo, cut, "--resume-if-exists")) == 0
    assert json.loads((cut / "run.json").read_text())["exit_code"] == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    assert main(command(repo, other, "--resume-if-exists")) == 2
    assert "holds files but no run of fidelity's" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "mine\n"
    assert main(["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD",
                 "--resume-if-exists"]) == 2  # fmt: skip
    assert "give it with --out DIR" in capsys.readouterr().err


def test_the_printed_resume_command_runs_where_it_is_printed(
    slow: tuple[Repo, Path], tmp_path: Path
) -> None:
    """A run begun with --repo from a folder outside the repository (Slurm's submit folder):
    the `fidelity run --resume DIR` the judge prints, run there, finishes it."""
    repo, _ = slow
    submit = tmp_path / "submit"
    submit.mkdir()
    killed_mid_way(repo, submit / "77" / "shard-1")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    judge = [sys.executable, "-m", "fidelity", "-q", "merge", "77/shard-1", "--out", "77/m"]
    judged = subprocess.run(judge, cwd=submit, env=env, capture_output=True, text=True)
    assert judged.returncode == 2, judged.stderr
    printed = judged.stderr.split("`")[1]
    assert printed == "fidelity run --resume 77/shard-1", judged.stderr
    argv = [sys.executable, "-m", *printed.split()]
    done = subprocess.run(argv, cwd=submit, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (submit / "77" / "shard-1" / "run.json").is_file()


def test_a_judge_that_refuses_still_writes_its_reports(
    slow: tuple[Repo, Path], tmp_path: Path, capsys
) -> None:
    repo, _ = slow
    shard = tmp_path / "shard-1"
    killed_mid_way(repo, shard, "--shard", "1/1")
    reports = {"--junit": tmp_path / "junit.xml", "--markdown": tmp_path / "merged.md"}
    reports["--html"] = tmp_path / "report.html"
    asked = [word for flag, path in reports.items() for word in (flag, str(path))]
    assert main(["-q", "merge", str(shard), "--out", str(tmp_path / "m"), *asked]) == 2
    assert "is an incomplete run" in capsys.readouterr().err
    suite = ET.parse(reports["--junit"]).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("errors") == "1", ET.tostring(suite)
    error = suite.find("testcase/error")
    assert error is not None and "fidelity run --resume" in (error.text or "")
    assert "## fidelity merge: not judged (exit 2)" in reports["--markdown"].read_text()
    assert "is an incomplete run" in reports["--html"].read_text()
