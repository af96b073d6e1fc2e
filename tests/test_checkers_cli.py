"""`fidelity check-docs` end to end: the real CLI in a subprocess, and in-process rendering."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest

from checkers import report
from checkers.tree import check_tree

REPO = Path(__file__).resolve().parents[1]
BROKEN = "# Notes\n\n## Attempt 2\n\nSee [gone](gone.md).\n\n```\nnever closed\n"


def fidelity(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "fidelity", "-q", "check-docs", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "records").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_row_chars = 600\n")
    return tmp_path


def test_findings_exit_1_with_located_lines_unwrapped(repo: Path) -> None:
    (repo / "notes.md").write_text(BROKEN)
    done = fidelity(repo, "notes.md")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "notes.md:3:1: FD201 per-attempt heading 'Attempt 2' (matched 'Attempt 2'); record the "
        "attempt as a row of a keyed table instead",
        "notes.md:5:12: FD401 link target 'gone.md' does not exist (gone.md)",
        "notes.md:7:1: FD301 unclosed ``` fence swallows 1 line to the end of the document; "
        "close it with a line of at least 3 '`' and nothing after them",
        "check-docs: 3 findings in 1 of 1 file",
    ]


def test_clean_page_exits_0(repo: Path) -> None:
    (repo / "notes.md").write_text("# Notes\n\n## Attempts\n\nSee [top](#notes).\n")
    done = fidelity(repo, "notes.md")
    assert (done.returncode, done.stdout) == (0, "check-docs: 1 file clean\n")


def test_no_paths_checks_readme_agents_and_records(repo: Path) -> None:
    (repo / "README.md").write_text("# Readme\n")
    (repo / "records" / "bench.md").write_text("## 2026-01-01\n")
    (repo / "records" / "notes.txt").write_text("## 2026-01-01\n")
    done = fidelity(repo / "records", "--json", "-")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] == ["../README.md", "bench.md"]
    assert [f["code"] for f in report["findings"]] == ["FD201"]
    assert report["findings"][0] | {"message": "", "fingerprint": "x", "subject": ""} == {
        "path": "bench.md",
        "line": 1,
        "col": 1,
        "code": "FD201",
        "message": "",
        "fingerprint": "x",
        "subject": "",
    }
    assert re.fullmatch(r"[0-9a-f]{16}", report["findings"][0]["fingerprint"])


def test_bad_config_exits_2_naming_the_key(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_rows = 3\n")
    (repo / "README.md").write_text("# Readme\n")
    done = fidelity(repo)
    assert done.returncode == 2
    assert "unknown key 'max_rows'" in done.stderr


def test_missing_path_exits_2_and_nothing_to_check_exits_3(repo: Path) -> None:
    assert fidelity(repo, "nope.md").returncode == 2
    done = fidelity(repo)
    assert done.returncode == 3
    assert "nothing to check" in done.stderr


def test_in_process_render_and_json_file(repo: Path) -> None:
    (repo / "notes.md").write_text(BROKEN)
    out = StringIO()
    result = check_tree(["notes.md"], repo)
    report.render(result, out)
    (repo / "out.json").write_text(report.json_text(result))
    assert result.findings
    assert out.getvalue().splitlines()[1] == (
        "notes.md:5:12: FD401 link target 'gone.md' does not exist (gone.md)"
    )
    assert json.loads((repo / "out.json").read_text())["ok"] is False


def test_folders_are_searched_for_markdown(repo: Path) -> None:
    (repo / "docs" / ".hidden").mkdir(parents=True)
    (repo / "docs" / "a.md").write_text("# A\n")
    (repo / "docs" / ".hidden" / "b.md").write_text("## Attempt 1\n")
    out = StringIO()
    result = check_tree(["docs"], repo)
    report.render(result, out)
    assert not result.findings
    assert out.getvalue() == "check-docs: 1 file clean\n"


def test_the_collector_is_left_as_found(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check-docs raises the collector's threshold while it runs; a caller in the same
    process (a hook, a test) gets it back as it was."""
    import gc

    from fidelity.cli.main import main

    (repo / "notes.md").write_text(BROKEN)
    monkeypatch.chdir(repo)
    threshold = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        assert main(["-q", "check-docs", "notes.md"]) == 1
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*threshold)
