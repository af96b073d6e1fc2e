"""Off a terminal, long work says how far it got at a steady rhythm, on standard error: a CI
log or a `| tee` no longer shows a silent job until the verdict. `-q` and `--json -` stay
clean."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import PY, Repo, controls_lib, fidelity_cli

from fidelity.cli.progress import Ticker, every
from fidelity.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def slow_table(cases: int, seconds: float) -> str:
    lines = ['[matrix]\nname = "slow"\n']
    for i in range(cases):
        argv = json.dumps(
            [
                PY,
                "-c",
                f"import time, sys; time.sleep({seconds}); open(sys.argv[1] + '/r.txt', 'w').write('{i}')",
                "{out}",
            ]
        )
        lines.append(f'[[case]]\nid = "c{i}"\nargv = {argv}\noutputs = ["r.txt"]\n')
    return "\n".join(lines)


@pytest.fixture
def slow_repo(make_repo: Callable[[str], Repo]) -> Repo:
    repo = make_repo("slow")
    repo.commit({"cases/matrix.toml": slow_table(6, 0.6)}, "baseline")
    repo.commit({"notes.txt": "moves nothing\n"}, "candidate")
    return repo


def test_the_ticker_counts_steps_and_failures() -> None:
    stream = io.StringIO()
    ticker = Ticker("run", "case runs", 60, stream)
    began = time.monotonic()
    assert ticker.line(began + 3) == "fidelity run: setting up, 3s elapsed"
    ticker.expect(4)
    ticker.step("baseline", "a", "ok", False)
    ticker.step("candidate", "a", "failed", True)
    assert ticker.line(began + 75) == "fidelity run: 2 of 4 case runs done, 1 failed, 1m15s elapsed"


@pytest.mark.parametrize("bad", ["soon", "-1", "nan", "inf"])
def test_a_bad_rhythm_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="FIDELITY_PROGRESS_EVERY"):
        every({"FIDELITY_PROGRESS_EVERY": bad})
    assert every({}) == 10 and every({"FIDELITY_PROGRESS_EVERY": "0"}) == 0


def test_a_piped_run_says_how_far_it_got_before_it_ends(slow_repo: Repo) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FIDELITY_PROGRESS_EVERY": "0.4"}
    with subprocess.Popen(
        [PY, "-m", "fidelity", "run", "--baseline", "HEAD~1", "--jobs", "1"],
        cwd=slow_repo.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        first = proc.stderr.readline()
        still_running = proc.poll() is None
        rest = proc.stderr.read()
        out = proc.stdout.read()
        assert proc.wait(timeout=120) == 0, out + first + rest
    assert still_running and first.startswith("fidelity run: "), first
    lines = [first, *rest.splitlines()]
    assert any(" of 12 case runs done, 0 failed, " in line for line in lines), lines
    assert "fidelity run:" not in out  # never mixed into what standard output carries
    assert out.rstrip().splitlines()[-2].startswith("HOLDS"), out


@pytest.mark.parametrize("args", [["-q"], ["--json", "-"]], ids=["quiet", "json-stdout"])
def test_quiet_and_json_output_carry_no_progress(slow_repo: Repo, args: list[str]) -> None:
    quiet = args == ["-q"]
    command = (
        [*args, "run", "--baseline", "HEAD~1"] if quiet else ["run", "--baseline", "HEAD~1", *args]
    )
    done = fidelity_cli(slow_repo.path, *command, env={"FIDELITY_PROGRESS_EVERY": "0.2"})
    assert done.returncode == 0, done.stdout + done.stderr
    if quiet:
        assert "case runs done" not in done.stderr + done.stdout
    else:
        json.loads(done.stdout)  # standard output is the report alone
        assert "case runs done" in done.stderr


def test_controls_say_how_far_they_got(make_repo: Callable[[str], Repo]) -> None:
    lib = make_repo("lib")
    controls_lib(lib)
    done = fidelity_cli(
        lib.path,
        "controls",
        "run",
        "--only",
        "tax-rate",
        "--jobs",
        "1",
        env={"FIDELITY_PROGRESS_EVERY": "0.1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fidelity controls run: " in done.stderr and " of 3 controls done" in done.stderr
