"""Off a terminal (a CI log, a pipe) no table folds a path or a test id mid-token: run as a
user's CI runs it, a subprocess whose output is a pipe and COLUMNS=80, each kind of table
fidelity prints keeps them whole on one line; on a terminal, tables still fit it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from collections.abc import Callable
from pathlib import Path

from support import PY, Repo, controls_lib, fidelity_cli

from fidelity.cli.console import WIDE, make, width

LONG = "a-folder-name-long-enough-that-an-80-column-table-must-fold-it-" * 2


def _whole(text: str, token: str) -> bool:
    return any(token in line for line in text.splitlines())


def test_a_console_is_wide_off_a_terminal_and_fits_one_on_it(capsys) -> None:
    with open(os.devnull, "w") as pipe_like:
        assert width(pipe_like) == WIDE
    assert make(quiet=False).width == WIDE and make(quiet=True).width == WIDE  # stdout: capsys
    leader, follower = pty.openpty()
    try:
        with open(follower, "w") as terminal:
            assert width(terminal) is None
    finally:
        os.close(leader)


def test_a_listing_keeps_a_long_path_whole_in_a_pipe(tmp_path: Path) -> None:
    path = str(tmp_path / LONG / "drive.py")
    table = tmp_path / "matrix.toml"
    table.write_text(
        f'[[case]]\nid = "a"\nargv = ["python", {json.dumps(path)}]\noutputs = ["r"]\n'
    )
    done = fidelity_cli(tmp_path, "cases", "list", str(table))
    assert done.returncode == 0, done.stderr
    assert _whole(done.stdout, path), done.stdout


def test_on_a_terminal_the_same_listing_fits_it(tmp_path: Path) -> None:
    """The nearest neighbour: a pseudo-terminal of 80 columns folds the path to fit."""
    path = str(tmp_path / LONG / "drive.py")
    table = tmp_path / "matrix.toml"
    table.write_text(
        f'[[case]]\nid = "a"\nargv = ["python", {json.dumps(path)}]\noutputs = ["r"]\n'
    )
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).parents[1])}
    with subprocess.Popen(
        [PY, "-m", "fidelity", "cases", "list", str(table)], stdout=follower, env=env
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
        assert proc.wait(timeout=60) == 0
    os.close(leader)
    text = b"".join(chunks).decode(errors="replace")
    assert "drive.py" in text and not _whole(text, path)


def test_the_case_table_keeps_log_paths_whole_in_a_pipe(
    make_repo: Callable[[str], Repo], tmp_path: Path
) -> None:
    r = make_repo("fails")
    fail = "import sys; sys.exit('lanes must be >= 1') if open('v.txt').read() == 'bad' else 0"
    argv = json.dumps([PY, "-c", fail])
    base = r.commit(
        {
            "cases/matrix.toml": f'[[case]]\nid = "a-case-id"\nargv = {argv}\ncache_env = "C"\n',
            "v.txt": "1",
        }
    )
    r.commit({"v.txt": "bad"})
    out = tmp_path / LONG
    done = fidelity_cli(r.path, "run", "--baseline", base, "--out", str(out), timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr  # a failure, nothing compared
    log = str(out / "candidate" / "cases" / "a-case-id" / "stderr.log")
    assert _whole(done.stdout, log), done.stdout


def test_the_controls_table_keeps_test_ids_whole_in_a_pipe(
    make_repo: Callable[[str], Repo],
) -> None:
    lib = make_repo("lib")
    controls_lib(lib)
    only = ["--only", "gross-drops-tax", "--jobs", "1"]
    done = fidelity_cli(lib.path, "controls", "run", *only, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for test_id in ("tests/test_cli.py::test_cli_prints_gross", "test_gross[100-120]"):
        assert _whole(done.stdout, test_id), done.stdout
    assert _whole(done.stdout, "4 of 20 tests: those that ran shop/prices.py:8 gross()")


def test_a_table_written_to_a_file_carries_no_trailing_blanks() -> None:
    """Off a terminal a table is as wide as its widest row; the other rows are not padded to
    it (a log of a run once carried about 2,500 blanks per row)."""
    moves = Path(__file__).resolve().parents[1] / "cases" / "fixtures" / "runs" / "moves"
    done = fidelity_cli(moves.parent, "compare", str(moves))
    assert done.returncode == 3, done.stdout + done.stderr  # the fixture is an old run
    lines = done.stdout.splitlines()
    assert sum(" moved " in line for line in lines) >= 2, done.stdout  # rows of unequal length
    assert [line for line in lines if line.endswith(" ")] == []
