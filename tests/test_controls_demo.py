"""The demo's controls: tinysim's tests catch five distinct defects; one residue is disclosed."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from conftest import run_git
from rich.console import Console

from fidelity import controls, demo


def demo_repo(where: Path) -> Path:
    demo.materialise(where)
    assert (where / "tests" / "test_scheduler.py").is_file()
    return where


def test_demo_controls_hold(tmp_path: Path) -> None:
    repo = demo_repo(tmp_path / "demo")
    out = StringIO()
    code = controls.run_demo_controls(Console(file=out, width=200, color_system=None), repo)
    text = out.getvalue()
    assert code == 0, text
    rows = {w[0]: w[1] for w in map(str.split, text.splitlines()) if len(w) > 2}
    for cid in ("offline-staggered", "replica-stuck", "lane-restarts", "depth-unbounded",
                "no-queueing"):  # fmt: skip
        assert rows[cid] == "caught"
    assert rows["cache-key-ignores-depth"] == "residue-held"
    assert "HOLDS: all 6 controls met their expectation: 5 caught, 1 residue-held (exit 0)" in text
    assert "do not discriminate" not in text, "every caught subset differs"
    assert "no-op control: survived" in text
    assert run_git(repo, "status", "--porcelain") == ""
