"""Both sides at once under one --jobs budget, the same answer for any --jobs, and a run
killed mid-way resumed: only cases without complete evidence run again."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import PY, Repo, snapshot

from fidelity.cli.main import main
from fidelity.matrix import gate, rejudge
from fidelity.matrix.run.ledger import finished as kept_runs
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.outcome import Outcome

CASE = (
    "import os, sys, time, pathlib\n"
    "log = pathlib.Path(os.environ['RUNS_LOG'])\n"
    "with log.open('a') as f: f.write(sys.argv[2] + '\\n')\n"
    "time.sleep(float(sys.argv[3]))\n"
    "pathlib.Path(sys.argv[1], 'r.txt').write_text(pathlib.Path('v.txt').read_text() + sys.argv[2])\n"
)


def table(n: int, sleep: float, log: Path) -> str:
    return f"[matrix]\nenv = {{ RUNS_LOG = {json.dumps(str(log))} }}\n" + "\n".join(
        f'[[case]]\nid = "c{i}"\nargv = [{json.dumps(PY)}, "case.py", "{{out}}", "c{i}", "{sleep}"]\n'
        f'outputs = ["r.txt"]\ntimeout_s = 60\n'
        for i in range(n)
    )


def evidence(outcome: Outcome) -> dict[str, object]:
    return {
        "verdicts": {r.case_id: str(r.verdict) for r in outcome.comparison.cases},
        "findings": sorted(f.code for f in outcome.findings),
        "outputs": {cid: dict(e.outputs) for cid, e in outcome.candidate.cases.items()},
        "exit": outcome.exit_code,
    }


def test_every_jobs_gives_the_same_verdicts_and_evidence(make_repo, tmp_path: Path) -> None:
    repo: Repo = make_repo("jobs")
    base = repo.commit(
        {"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(6, 0, tmp_path / "log")}
    )
    repo.commit({"v.txt": "2"})
    runs = [gate.run(repo.path, RunRequest(base, "HEAD", jobs=j)) for j in (1, 2, 4)]
    assert evidence(runs[0]) == evidence(runs[1]) == evidence(runs[2])
    assert runs[0].exit_code == 1 and len(runs[0].comparison.cases) == 6


def finished(out: Path) -> set[str]:
    """`case/side` of every whole line of the sides' evidence ledgers."""
    done = set()
    for ledger in out.glob("*/evidence.jsonl"):
        for line in ledger.read_text().splitlines():
            with contextlib.suppress(ValueError):
                done.add(json.loads(line)["case_id"] + "/" + ledger.parent.name)
    return done


def _count(log: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in log.read_text().split():
        counts[line] = counts.get(line, 0) + 1
    return counts


def test_a_run_killed_mid_way_resumes_only_what_it_had_not_done(
    make_repo, tmp_path: Path, capsys
) -> None:
    repo: Repo = make_repo("resume")
    log = tmp_path / "runs.log"
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(6, 0.4, log)})
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "fidelity", "-q", "run", "--repo", str(repo.path),
            "--baseline", "HEAD", "--jobs", "2", "--out", str(out)]  # fmt: skip
    killed = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(finished(out)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    finished_before = finished(out)
    assert 4 <= len(finished_before) < 12 and not (out / "run.json").exists()
    assert main(["compare", str(out)]) == 2
    assert "is an incomplete run" in capsys.readouterr().err
    ran_before = _count(log)
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 0
    ran_again = {k: v - ran_before.get(k, 0) for k, v in _count(log).items()}
    for case in (f"c{i}" for i in range(6)):
        sides_done = sum(1 for done in finished_before if done.startswith(case + "/"))
        if sides_done == 2:
            assert ran_again.get(case, 0) == 0, (case, ran_again)  # kept, not run again
        else:  # (a case the killed run had started may still log its start late)
            assert ran_again.get(case, 0) >= 2 - sides_done, (case, ran_again)
    assert rejudge.recompare(out).exit_code == 0
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 2  # complete


def _begun(repo: Repo, tmp_path: Path) -> Path:
    """A run directory as a killed run leaves it: a plan, some evidence, no run.json."""
    out = tmp_path / "begun"
    gate.run(repo.path, RunRequest("HEAD", "HEAD", out=out))
    (out / "run.json").unlink()
    return out


@pytest.fixture
def begun(make_repo, tmp_path: Path) -> tuple[Repo, Path]:
    repo: Repo = make_repo("refuse")
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(2, 0, tmp_path / "log")})
    return repo, _begun(repo, tmp_path)


def test_resume_refuses_a_changed_table(begun: tuple[Repo, Path], capsys) -> None:
    repo, out = begun
    before = snapshot(repo.path)
    (repo.path / "cases" / "matrix.toml").write_text(table(3, 0, Path("/tmp/x")))
    assert main(["run", "--repo", str(repo.path), "--resume", str(out)]) == 2
    assert "is not the one this run began with" in capsys.readouterr().err
    assert snapshot(repo.path) != before  # (only our own edit of the table)


def test_resume_refuses_a_side_that_moved(begun: tuple[Repo, Path], capsys) -> None:
    repo, out = begun
    repo.commit({"v.txt": "2"})
    assert main(["run", "--repo", str(repo.path), "--resume", str(out)]) == 2
    assert "but this run began at" in capsys.readouterr().err


def test_a_resumed_run_with_nothing_left_only_judges(
    begun: tuple[Repo, Path], tmp_path: Path
) -> None:
    repo, out = begun
    before = _count(tmp_path / "log")
    assert before == {"c0": 2, "c1": 2}  # each case ran on both sides before run.json went
    assert kept_runs(out) == 4  # what an interrupted run says it kept
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 0
    assert _count(tmp_path / "log") == before, "no case ran again"
    assert json.loads((out / "run.json").read_text())["exit_code"] == 0


def test_a_line_cut_short_runs_only_its_case_again(make_repo, tmp_path: Path) -> None:
    """A crash mid-append leaves a line cut short: that case runs again, and the line
    appended after it is read whole (each line starts on a line of its own)."""
    repo: Repo = make_repo("cut")
    log = tmp_path / "log"
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(3, 0, log)})
    out = _begun(repo, tmp_path)
    ledger = out / "baseline" / "evidence.jsonl"
    lines = ledger.read_bytes().split(b"\n")
    damaged = next(i for i, line in enumerate(lines) if b'"case_id":"c1"' in line)
    lines[damaged] = lines[damaged][: len(lines[damaged]) // 2]  # cut short, then more lines
    ledger.write_bytes(b"\n".join(lines))
    before = _count(log)
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 0
    again = {k: v - before.get(k, 0) for k, v in _count(log).items()}
    assert {k: v for k, v in again.items() if v} == {"c1": 1}
    assert rejudge.recompare(out).exit_code == 0


def test_a_run_begun_by_an_older_fidelity_keeps_its_per_case_evidence(
    make_repo, tmp_path: Path
) -> None:
    """Before evidence.jsonl, each case's evidence was its own evidence.json: a resume
    still reads it, and runs none of those cases again."""
    repo: Repo = make_repo("older")
    log = tmp_path / "log"
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(2, 0, log)})
    out = _begun(repo, tmp_path)
    for side in ("baseline", "candidate"):
        ledger = out / side / "evidence.jsonl"
        for line in ledger.read_text().split():
            data = json.loads(line)
            (out / side / "cases" / data["case_id"] / "evidence.json").write_text(line)
        ledger.unlink()
    before = _count(log)
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 0
    assert _count(log) == before


SLOW_CASE = (
    "import os, sys, time, pathlib\n"
    "started = pathlib.Path(os.environ['STARTED'])\n"
    "started.write_text(started.read_text() + 'x') if started.exists() else None\n"
    "time.sleep(float(pathlib.Path(os.environ['SLEEP']).read_text()))\n"
    "pathlib.Path(sys.argv[1], 'r.txt').write_text('same')\n"
)


def test_a_second_resume_of_one_run_is_refused_while_the_first_runs(
    make_repo, tmp_path: Path, capsys
) -> None:
    """Red before the lock: the second resume killed the first one's cases as a killed
    run's leftovers (exit -9 in the evidence), and the two wrote one ledger: a spurious
    exit 1 or 3, or a traceback, in 5 of 16 trials; never refused."""
    sleep, started = tmp_path / "sleep", tmp_path / "started"
    sleep.write_text("0")
    env = {"SLEEP": str(sleep), "STARTED": str(started)}
    head = f"[matrix]\nenv = {json.dumps(env).replace(':', ' =')}\n"
    cases = "".join(
        f'[[case]]\nid = "c{i}"\nargv = [{json.dumps(PY)}, "case.py", "{{out}}"]\n'
        'outputs = ["r.txt"]\ntimeout_s = 60\n'
        for i in range(2)
    )
    repo: Repo = make_repo("twice")
    repo.commit({"case.py": SLOW_CASE, "cases/matrix.toml": head + cases})
    out = _begun(repo, tmp_path)
    for ledger in out.glob("*/evidence.jsonl"):
        ledger.write_text("")  # every case runs again on resume
    sleep.write_text("3")
    started.write_text("")
    argv = ["-q", "run", "--repo", str(repo.path), "--resume", str(out)]
    first = subprocess.Popen(
        [sys.executable, "-m", "fidelity", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while not started.read_text() and time.monotonic() < deadline:  # its cases are running
        time.sleep(0.05)
    assert main(argv) == 2
    assert f"{out} is being run by another fidelity process right now" in capsys.readouterr().err
    printed = first.communicate(timeout=120)
    assert first.returncode == 0, printed
    assert rejudge.recompare(out).exit_code == 0


def test_a_kept_case_whose_output_was_altered_runs_again(make_repo, tmp_path: Path) -> None:
    """A resume keeps a finished case only while its recorded files hash as recorded: one
    edited after the interrupt runs again, alone (red with the re-hash skipped: the forged
    output was kept and the resumed run held)."""
    repo: Repo = make_repo("altered")
    log = tmp_path / "log"
    repo.commit({"case.py": CASE, "v.txt": "1", "cases/matrix.toml": table(2, 0, log)})
    out = _begun(repo, tmp_path)
    output = out / "candidate" / "cases" / "c0" / "out" / "r.txt"
    assert output.read_text() == "1c0"
    output.write_text("forged")  # evidence changed after it was recorded
    before = _count(log)
    assert main(["-q", "run", "--repo", str(repo.path), "--resume", str(out)]) == 0
    again = {k: v - before.get(k, 0) for k, v in _count(log).items()}
    assert {k: v for k, v in again.items() if v} == {"c0": 1}
    assert output.read_text() == "1c0"
    assert rejudge.recompare(out).exit_code == 0
