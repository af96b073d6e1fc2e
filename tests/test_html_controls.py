"""The controls page: a real `controls run --html` on the fixture library, made again by
`fidelity report` from the run's report.json, opened in headless Chromium; and a report
whose test ids and failure kinds are hostile, rendered as text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from browser import open_page
from support import Repo, controls_lib, run_cli

from fidelity.htmlreport import controlspage

ONLY = ["--only", "gross-drops-tax", "--only", "slug-underscores", "--jobs", "1"]
GROSS = "tests/test_cli.py::test_cli_prints_gross"


def test_controls_run_writes_the_matrix_page(
    make_repo: Callable[[str], Repo], tmp_path: Path, chromium: Any
) -> None:
    lib = make_repo("lib")
    controls_lib(lib)
    page, report = tmp_path / "controls.html", tmp_path / "controls.json"
    argv = ["controls", "run", "--repo", str(lib.path), *ONLY]
    code, said = run_cli([*argv, "--html", str(page), "--json", str(report)])
    assert code == 0, said
    assert f"HTML report: {page} (" in said
    logs = json.loads(report.read_text())["logs"]
    again = tmp_path / "again.html"
    code, said = run_cli(["report", logs, "--html", str(again)])
    assert code == 0 and said.startswith("HOLDS: all 2 controls met their expectation")
    assert again.read_text() == page.read_text()

    opened = open_page(chromium, page)
    assert opened.errors == [] and opened.requests == []
    grid = opened.page.locator("#matrix")
    row = grid.locator("tr", has_text="gross-drops-tax")
    heads = grid.locator("thead th").all_inner_texts()
    cell = row.locator("td").nth(heads.index(GROSS))
    assert cell.inner_text() == "assertion" and "caught" in (cell.get_attribute("class") or "")
    # a function id expected stands for its parametrized cases: caught, none missed
    slug = grid.locator("tr", has_text="slug-underscores")
    assert slug.locator("td.caught").count() == 3 and slug.locator("td.missed").count() == 0
    never = opened.page.locator("#never-failed li").all_inner_texts()
    assert never and GROSS not in never
    opened.page.fill("#controls-filter", "slug")
    shown = [r for r in opened.page.locator("#controls tbody tr").all() if r.is_visible()]
    assert [r.locator("td").first.inner_text() for r in shown] == ["slug-underscores"]
    opened.shot("html-report-controls.png")
    opened.page.close()


HOSTILE = "tests/t.py::test_x[<script>window.__pwned=1</script>]"


def test_hostile_test_ids_and_kinds_are_text(tmp_path: Path, chromium: Any) -> None:
    report = {
        "rev": "HEAD",
        "sha": "a" * 40,
        "table": "cases/controls.toml",
        "baseline": {"status": "passed", "tests": 2},
        "noop": {"verdict": "residue-held"},
        "controls": [
            {
                "id": "c<b>1</b>",
                "verdict": "caught",
                "expected": [HOSTILE],
                "failing": [HOSTILE, "tests/t.py::test_y"],
                "kinds": {HOSTILE: "error: <img src=x onerror=alert(1)>"},
                "how": "error 1",
            },
            {
                "id": "missed-one",
                "verdict": "survived",
                "expected": ["tests/t.py::test_w"],
                "failing": [],
            },
        ],
        "never_failed": ["tests/t.py::test_z"],
        "summary": "HOLDS: the one control met its expectation (1 caught) (exit 0)",
        "exit_code": 0,
    }
    html = controlspage.page(report)
    assert "<script>window" not in html and "<img src=x" not in html and "<b>1" not in html
    path = tmp_path / "hostile.html"
    path.write_text(html)
    opened = open_page(chromium, path)
    assert opened.errors == [] and opened.requests == []
    assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    text = opened.page.locator("#matrix").inner_text()
    assert "error: <img src=x onerror=alert(1)>" in text and "c<b>1</b>" in text
    assert opened.page.locator("td.caught").count() == 1  # the hostile one, as expected
    assert opened.page.locator("td.extra").count() == 1  # test_y failed, not expected
    missed = opened.page.locator("td.missed")  # test_w was expected and did not fail
    assert missed.count() == 1 and missed.inner_text() == "not failed"
    opened.page.close()


INSIDE = (
    "() => { const t = document.querySelector('#controls');"
    " const detail = t.querySelector('td.detail').getBoundingClientRect();"
    " return document.documentElement.scrollWidth <= window.innerWidth"
    " && detail.width >= 150; }"
)


def test_long_test_ids_wrap_and_the_detail_stays_readable(tmp_path: Path, chromium: Any) -> None:
    """The demo's page had its detail column squeezed to a word a line and pushed out of
    the page by two columns of long test ids."""
    long = "tests/test_scheduler.py::test_lanes_rotate_across_calls_even_when_a_replica_is_idle"
    controls = [
        {"id": f"c{i}", "verdict": "caught", "expected": [long], "failing": [long], "how": "x"}
        for i in range(5)
    ]
    controls.append(
        {
            "id": "residue",
            "verdict": "residue-held",
            "expected": [],
            "failing": [],
            "detail": "no test reads the cache back at a second queue depth; the day one "
            "does, this control goes red",
        }
    )
    report = {
        "rev": "HEAD",
        "sha": "a" * 40,
        "table": "cases/controls.toml",
        "baseline": {"status": "passed", "tests": 10},
        "noop": {"verdict": "residue-held"},
        "controls": controls,
        "never_failed": [],
        "summary": "HOLDS: all 6 controls met their expectation (exit 0)",
        "exit_code": 0,
    }
    path = tmp_path / "long.html"
    path.write_text(controlspage.page(report))
    opened = open_page(chromium, path)
    opened.page.set_viewport_size({"width": 1280, "height": 900})
    assert opened.page.evaluate(INSIDE), "the controls table overflows the page"
    opened.page.close()
