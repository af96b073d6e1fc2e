"""check-docs' peak memory on hostile pages stays within the bound docs/check-docs.md states.

The bound is the documented formula, written once below (a test holds the docs to the same
text): peak RSS at most 30 MB + 150 x P + 90 x max_page_bytes, P the largest page checked.
Each page is checked by the real CLI in a child process (its `ru_maxrss`, seen from here
through RUSAGE_CHILDREN of a fresh wrapper). The pages are the shapes that cost most per
byte, just under a cap of 400,000 bytes (the formula scales with the cap, so a small cap
keeps the test quick): a 20,000-column table, emphasis markers, one-character cells, list
items, headings, deep nesting, blank lines, reference definitions, and 20,000 broken links
(findings: each run writes the JSON and SARIF reports too, which list a page's first 1,000).
A page over its token budget (one per 8 bytes of the cap) is FD705, not parsed. The red
cases remove the budget, and the cap on the findings listed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MB = 2**20
CAP = 400_000
FORMULA = "`30 MB + 150 × P + 90 × max_page_bytes`"


def bound(page_bytes: int, cap: int) -> float:
    return 30 * MB + 150 * page_bytes + 90 * cap


def _table(size: int) -> str:
    cols = 20_000
    text = "|" + "|".join(f"c{i}" for i in range(cols)) + "|\n"
    text += "|" + "|".join("-" * cols) + "|\n"
    row = "|" + "|".join("x" * cols) + "|\n"
    while len(text) + len(row) < size:
        text += row
    return text


SHAPES: dict[str, Callable[[int], str]] = {
    "20,000-column table": _table,
    "emphasis markers": lambda n: "*a " * (n // 3),
    "mixed emphasis": lambda n: "_a* " * (n // 4),
    "one-character cells": lambda n: "|a|b|\n|-|-|\n" + "|a|b|\n" * (n // 6 - 2),
    "list items": lambda n: "- a\n" * (n // 4),
    "headings": lambda n: "# h\n" * (n // 4),
    "nested quotes": lambda n: ">" * (n - 3) + " x\n",
    "nested lists": lambda n: "".join("  " * i + "- x\n" for i in range(int(n**0.5 * 0.9))),
    "blank lines": lambda n: "\n" * n,
    "reference definitions": lambda n: "".join(f"[r{i}]: #x{i}\n" for i in range(n // 18)),
    "broken links": lambda n: "[a](missing/x.md#y) " * (n // 20),
}

PEAK = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps([done.returncode, peak, done.stdout[-2000:], done.stderr[-2000:]]))
"""
ALL_SHOWN = """
import sys
from checkers import check
check.SHOWN = 10**9  # red case: every finding listed in every report
from fidelity.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
NO_BUDGET = """
import sys
from checkers import site
site.Site.token_budget = property(lambda self: 10**9)  # red case: no budget
from fidelity.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def peak(repo: Path, name: str, runner: list[str]) -> tuple[int, int, str]:
    reports = ["--json", str(repo / "out.json"), "--sarif", str(repo / "out.sarif")]
    argv = [*runner, "-q", "check-docs", "--no-cache", *reports, name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *argv],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    code, used, out, err = json.loads(done.stdout)
    return code, used, out + err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text(f"[tool.fidelity.docs]\nmax_page_bytes = {CAP}\n")
    for i, make in enumerate(SHAPES.values()):
        text = make(CAP - 100)
        assert len(text.encode()) <= CAP
        (root / f"shape{i}.md").write_text(text)
    return root


@pytest.mark.parametrize("shape", SHAPES)
def test_hostile_page_peak_within_bound(repo: Path, shape: str) -> None:
    name = f"shape{list(SHAPES).index(shape)}.md"
    code, used, out = peak(repo, name, [sys.executable, "-m", "fidelity"])
    assert code in (0, 1), out
    size = (repo / name).stat().st_size
    limit = bound(size, CAP)
    assert used <= limit, f"{shape}: peak {used / MB:.0f} MB over the bound {limit / MB:.0f} MB"


def test_a_page_over_its_token_budget_is_fd705(repo: Path) -> None:
    _, _, out = peak(repo, "shape3.md", [sys.executable, "-m", "fidelity"])
    assert "shape3.md:1:1: FD705 page holds more than 50,000 Markdown tokens" in out


def test_without_the_token_budget_the_bound_is_exceeded(repo: Path) -> None:
    """Red case: one-character cells parsed in full take more than the bound allows."""
    code, used, out = peak(repo, "shape3.md", [sys.executable, "-c", NO_BUDGET])
    assert code in (0, 1) and "FD705" not in out, out
    limit = bound((repo / "shape3.md").stat().st_size, CAP)
    assert used > limit, f"peak {used / MB:.0f} MB, bound {limit / MB:.0f} MB"


def test_docs_state_the_bound_tested_here() -> None:
    docs = (ROOT / "docs" / "check-docs.md").read_text()
    assert FORMULA in docs, f"docs/check-docs.md no longer states {FORMULA}"
    assert "FD705" in docs


def test_a_page_lists_its_first_findings_and_counts_the_rest(repo: Path) -> None:
    name = f"shape{list(SHAPES).index('broken links')}.md"
    code, _, out = peak(repo, name, [sys.executable, "-m", "fidelity"])
    found = (CAP - 100) // 20 + 1  # each link FD401, and the one paragraph is FD103
    assert code == 1
    assert f"{name}: {found - 1000:,} more FD401 findings on this page not shown" in out
    assert f"check-docs: {found} findings in 1 of 1 file" in out
    report = json.loads((repo / "out.json").read_text())
    assert len(report["findings"]) == 1000
    assert report["not_shown"] == {name: {"FD401": found - 1000}}


def test_listing_every_finding_exceeds_the_bound(repo: Path) -> None:
    """Red case: 20,000 broken links, each in the text, JSON and SARIF reports."""
    name = f"shape{list(SHAPES).index('broken links')}.md"
    code, used, out = peak(repo, name, [sys.executable, "-c", ALL_SHOWN])
    assert code == 1 and "not shown" not in out, out
    limit = bound((repo / name).stat().st_size, CAP)
    assert used > limit, f"peak {used / MB:.0f} MB, bound {limit / MB:.0f} MB"
