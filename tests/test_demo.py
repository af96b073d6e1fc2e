"""`fidelity demo` as a user runs it: a real subprocess, a real repository, both verdicts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from browser import open_page
from support import run_git


def test_demo_gates_the_refactor_and_the_fix(tmp_path: Path, chromium: Any) -> None:
    """With a bare venv's python (no pytest, no fidelity) first on PATH, as under pipx."""
    where = tmp_path / "demo"
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    env = {**os.environ, "PATH": f"{bare / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [sys.executable, "-m", "fidelity", "--quiet", "demo", "--dir", str(where)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "HOLDS: all 5 declared cases identical (exit 0)" in out
    assert "dp1-online baseline: cache-reproduces (cold" in out  # the replay verdict, warm
    assert "dp1-online candidate: cache-reproduces (cold" in out
    assert "HELD: the moved set equals the prediction (3 cases) (exit 0)" in out
    assert "FALSIFIED: 2 unexpected, 0 missed, 0 failed (exit 1)" in out
    assert "unexpected (moved, not predicted): dp2-online-r2, dp4-online" in out
    for case in ("dp2-online", "dp2-online-r2", "dp4-online"):
        assert f"\n{case}: moved: " in out  # -q: one record per case, no table
    assert "columns lane" in out  # the CSV comparator says where the move is
    assert "HOLDS: all 6 controls met their expectation (5 caught, 1 residue-held) (exit 0)" in out
    rows = {w[0]: w[1] for w in map(str.split, out.splitlines()) if len(w) > 2}
    for control in ("offline-staggered", "replica-stuck", "lane-restarts", "depth-unbounded"):
        assert rows[control] == "caught", control
    assert "do not discriminate" not in out, "every caught subset differs"
    assert "no-op control: survived" in out
    assert out.count("ok   ") == 4 and "FAIL" not in out
    sections = re.findall(r"^\W*(\d)\. ", out, flags=re.MULTILINE)
    assert sections == ["1", "2", "3", "4"], sections
    log = run_git(where, "log", "--format=%s")
    assert log.splitlines() == [
        "fix: keep DP lane rotation across calls",
        "refactor: extract _slot",
        "baseline",
    ]
    assert run_git(where, "status", "--porcelain") == ""
    assert run_git(where, "worktree", "list", "--porcelain").count("worktree ") == 1
    page = where / ".fidelity" / "demo-report.html"  # under the ignored .fidelity/
    assert f"HTML report of gate 2 (what moved, with plots): {page}; open it" in out
    opened = open_page(chromium, page)
    assert opened.errors == [] and opened.requests == []
    assert opened.page.locator("#verdict").inner_text().startswith("HELD: the moved set")
    plot = opened.page.locator("#case-dp2-online figure.plot[data-column='lane'] svg")
    assert plot.count() == 1 and plot.is_visible()
    opened.shot("demo-report.png")
    opened.shot("demo-report-plot.png", "#case-dp2-online figure.plot[data-column='lane']")
    opened.page.close()


def test_demo_refuses_a_non_empty_dir(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = subprocess.run(
        [sys.executable, "-m", "fidelity", "demo", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "not empty" in result.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine"
