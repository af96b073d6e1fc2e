"""Per-side virtual environments, and set-up worktrees kept and reused only when sound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import Repo

from fidelity.errors import TableError
from fidelity.matrix import gate
from fidelity.matrix.cases.table import parse
from fidelity.matrix.run.request import RunRequest

WHERE = (
    "import shutil, sys; open(sys.argv[1] + '/where.txt', 'w').write("
    "sys.prefix + '\\n' + shutil.which('python'))"
)


def test_a_side_venv_is_its_python_and_first_on_path(make_repo) -> None:
    repo: Repo = make_repo("venv")
    table = (
        '[matrix]\nvenv = true\npython = "{python}"\n'
        f'[[case]]\nid = "w"\nargv = ["python", "-c", {json.dumps(WHERE)}, "{{out}}"]\n'
        'outputs = ["where.txt"]\n[case.compare."where.txt"]\nkind = "text"\n'
    )
    repo.commit({"cases/matrix.toml": table})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert outcome.exit_code == 0, outcome.findings
    prefix, python = (outcome.run_dir / "candidate/cases/w/out/where.txt").read_text().splitlines()
    assert prefix.endswith(".fidelity-venv") and python == prefix + "/bin/python"
    assert outcome.baseline.setup[0].argv.endswith("-m venv .fidelity-venv")


def test_venv_placeholder_needs_venv() -> None:
    text = '[[case]]\nid = "a"\nargv = ["{venv}/bin/x"]\noutputs = ["o"]\n'
    with pytest.raises(TableError, match="unknown placeholder {venv}"):
        parse(text.encode(), "t")
    assert parse(("[matrix]\nvenv = true\n" + text).encode(), "t").venv


COUNT = "import pathlib; p = pathlib.Path('setup-runs'); p.write_text(p.read_text() + 'x' if p.exists() else 'x')"
CASE = "import sys, pathlib; pathlib.Path('case-scratch.txt').write_text('x'); open(sys.argv[1] + '/r.txt', 'w').write(pathlib.Path('setup-runs').read_text())"


@pytest.fixture
def kept(make_repo) -> Repo:
    repo: Repo = make_repo("kept")
    table = (
        f'[matrix]\nreuse_setup = true\nsetup = [["{{python}}", "-c", {json.dumps(COUNT)}]]\n'
        f'[[case]]\nid = "c"\nargv = ["{{python}}", "-c", {json.dumps(CASE)}, "{{out}}"]\n'
        'outputs = ["r.txt"]\n'
    )
    repo.commit({"cases/matrix.toml": table, ".gitignore": ".fidelity/\n"})
    repo.commit({"unrelated.txt": "x"})
    return repo


def setup_steps(repo: Repo) -> list[str]:
    """The candidate's setup steps (each side has its own kept worktree)."""
    outcome = gate.run(repo.path, RunRequest("HEAD~1", "HEAD"))
    assert outcome.exit_code == 0, outcome.findings
    return [s.argv for s in outcome.candidate.setup]


def kept_dir(step: str) -> Path:
    return Path(step.split()[1].rstrip(":"))


def test_a_kept_setup_is_reused_while_commit_and_setup_are_the_same(kept: Repo) -> None:
    first = setup_steps(kept)
    assert first[0] == "(set up again: not set up before)"
    assert any("setup-runs" in step for step in first)  # set up once for HEAD
    again = setup_steps(kept)
    assert len(again) == 1 and again[0].startswith("(reused ")
    assert (kept_dir(again[0]) / "setup-runs").read_text() == "x", "setup did not run again"


def test_a_kept_setup_that_was_tampered_with_is_set_up_again(kept: Repo) -> None:
    setup_steps(kept)
    where = kept_dir(setup_steps(kept)[0])
    (where / "cases" / "matrix.toml").write_text("# edited in the kept worktree\n")
    assert setup_steps(kept)[0] == "(set up again: tracked files were changed or staged)"
    (where / "setup-runs").write_text("changed by hand")
    assert setup_steps(kept)[0].startswith("(set up again: what setup left has changed")


FOLDERS = (
    "import os, sys; os.mkdir('scratch'); os.makedirs('deep/er'); os.mkdir('setup-made/mine');"
    " open('scratch/t', 'w').write('x'); open(sys.argv[1] + '/r.txt', 'w').write('ok')"
)


def test_folders_a_previous_runs_case_made_are_gone_before_a_reuse(kept: Repo) -> None:
    """git's status lists files, not folders: a case's `mkdir scratch` outlived its files
    in the kept worktree, so the same case failed on the next reuse ("File exists"): a
    verdict that depended on which run came first. Folders setup left stay."""
    setup = '[["{python}", "-c", "import os; os.makedirs(\'setup-made/empty\')"]]'
    table = (
        f"[matrix]\nreuse_setup = true\nsetup = {setup}\n"
        f'[[case]]\nid = "c"\nargv = ["{{python}}", "-c", {json.dumps(FOLDERS)}, "{{out}}"]\n'
        'outputs = ["r.txt"]\n'
    )
    kept.commit({"cases/matrix.toml": table})
    kept.commit({"unrelated.txt": "y"})
    assert setup_steps(kept)[0] == "(set up again: not set up before)"
    for _ in range(2):  # the case's mkdir fails where a folder it made before is left
        reused = setup_steps(kept)[0]
        assert reused.startswith("(reused "), reused
    where = kept_dir(reused)
    assert (where / "setup-made" / "empty").is_dir()
    (where / "setup-made" / "empty").rmdir()  # a folder setup left, gone: set up again
    assert setup_steps(kept)[0].startswith("(set up again: what setup left has changed")


def test_a_changed_setup_gets_its_own_kept_worktree(kept: Repo) -> None:
    setup_steps(kept)
    table = (kept.path / "cases" / "matrix.toml").read_text()
    kept.commit({"cases/matrix.toml": table.replace("]]\n", '], ["{python}", "-c", "pass"]]\n', 1)})
    steps = setup_steps(kept)
    assert steps[0] == "(set up again: not set up before)"
