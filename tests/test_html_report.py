"""The HTML report, opened in a real headless Chromium (Debian's, driven by Playwright).

A real run of a real repository: one case identical, one whose keyed CSV moves (a numeric
column and a text cell holding a script), one whose candidate fails with a script in its
standard error. The page must load with no console error and no request, say the verdict,
filter and sort its case table, carry a plot of the moved column, and show every hostile
text as text. Screenshots go to the artifacts folder (tests/browser.py) for CI to upload.
Red cases: a page with a planted script or a planted external image trips the console and
reference checks these tests rely on.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser import open_page
from support import PY, Repo, run_cli, toml_str

from fidelity.cli.main import main

SCRIPT = "<script>window.__pwned=1</script>"
CELL = "<script>window.__pwned=3</script>"
PROG = f"""
import pathlib, sys
out, mode = pathlib.Path(sys.argv[1]), sys.argv[2]
cand = pathlib.Path("value.txt").read_text().strip() == "cand"
if mode == "breaks" and cand:
    sys.stderr.write({SCRIPT!r} + " boom\\n")
    sys.exit(2)
moves = mode == "moves" and cand
rows = ["request_id,latency_ms,label"]
for i in range(200):
    label = {CELL!r} if moves and i == 7 else "ok"
    rows.append(f"{{i}},{{(i * 7) % 50 + (1.5 * (i % 3) if moves else 0)}},{{label}}")
(out / "metrics.csv").write_text("\\n".join(rows) + "\\n")
"""


def table() -> str:
    lines = ["[matrix]", 'name = "html"', ""]
    for case in ("steady", "moves", "breaks"):
        lines += [
            "[[case]]",
            f"id = {toml_str(case)}",
            f'argv = [{toml_str(PY)}, "prog.py", "{{out}}", {toml_str(case)}]',
            'outputs = ["metrics.csv"]',
            "timeout_s = 30",
            f'tags = ["{case}-tag"]',
            '[case.compare."metrics.csv"]',
            'kind = "csv"',
            'key = ["request_id"]',
            "",
        ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real run with --html: (its run directory, its page)."""
    where = tmp_path_factory.mktemp("html-run")
    repo = Repo(where / "repo")
    base = repo.commit({"cases/matrix.toml": table(), "prog.py": PROG, "value.txt": "base"})
    cand = repo.commit({"value.txt": "cand"})
    out, page = where / "run", where / "page.html"
    argv = ["run", "--baseline", base, "--candidate", cand, "--repo", str(repo.path)]
    code, said = run_cli([*argv, "--out", str(out), "--html", str(page)])
    assert code == 1, said
    assert f"HTML report: {page} (" in said
    return out, page


class References(HTMLParser):
    """Every attribute that makes a browser fetch or navigate, with its value."""

    FETCH = frozenset({"src", "href", "xlink:href", "srcset", "action", "data", "poster"})

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self.policy = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
            self.policy = dict(attrs).get("content") or ""
        for name, value in attrs:
            if name in self.FETCH:
                self.found.append((tag, name, value or ""))
        if tag == "link":
            self.found.append((tag, "link", dict(attrs).get("href") or ""))


def external(html: str) -> list[tuple[str, str, str]]:
    """References that leave the page: anything but `#fragment` and `data:`."""
    parser = References()
    parser.feed(html)
    return [f for f in parser.found if not f[2].startswith(("#", "data:")) or f[1] == "link"]


def test_the_page_is_self_contained(run: tuple[Path, Path]) -> None:
    html = run[1].read_text()
    assert external(html) == []
    parser = References()
    parser.feed(html)
    assert parser.policy.startswith("default-src 'none'; img-src data:;"), parser.policy
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+';", parser.policy)
    assert SCRIPT not in html and CELL not in html  # escaped: never markup
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html


def test_the_reference_check_finds_a_planted_external_reference() -> None:
    planted = '<p>x</p><img src="https://example.invalid/x.png"><a href="#ok">ok</a>'
    assert external(planted) == [("img", "src", "https://example.invalid/x.png")]
    assert external('<link rel="stylesheet" href="data:text/css,">') != []


def test_the_page_renders_in_chromium(run: tuple[Path, Path], chromium: Any) -> None:
    opened = open_page(chromium, run[1])
    page = opened.page
    assert opened.errors == [] and opened.requests == []
    verdict = page.locator("#verdict").inner_text()
    assert verdict.startswith("MOVED: 1 moved, 1 failed of 3"), verdict
    plot = page.locator("#case-moves figure.plot[data-column='latency_ms'] svg")
    assert plot.count() == 1 and plot.first.is_visible()
    assert page.locator("#case-moves figure.plot").first.bounding_box()["height"] > 150
    values = page.locator("#case-moves table.values").first.inner_text()
    assert "latency_ms" in values and "%" in values  # old -> new, absolute and relative
    opened.shot("html-report-run.png")
    opened.shot("html-report-plot.png", "#case-moves figure.plot")
    page.close()


def test_hostile_text_renders_as_text_and_runs_nothing(
    run: tuple[Path, Path], chromium: Any
) -> None:
    opened = open_page(chromium, run[1])
    page = opened.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    logs = page.locator("#case-breaks pre.log").all_inner_texts()
    assert any(SCRIPT in text for text in logs), logs
    assert CELL in page.locator("#case-moves table.values").first.inner_text()
    assert opened.errors == []
    page.close()


def test_a_planted_script_is_blocked_and_trips_the_console_check(
    run: tuple[Path, Path], chromium: Any, tmp_path: Path
) -> None:
    """The red case of the console check, and the policy's own proof: a script the page
    did not ship (as unescaped text would be) does not run, and says so on the console."""
    planted = tmp_path / "planted.html"
    html = run[1].read_text()
    planted.write_text(html.replace("<body>", f"<body>{SCRIPT}", 1))
    opened = open_page(chromium, planted)
    assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    assert any("Content Security Policy" in e for e in opened.errors), opened.errors
    opened.page.close()


def test_the_case_table_filters_and_sorts_in_the_page(
    run: tuple[Path, Path], chromium: Any
) -> None:
    opened = open_page(chromium, run[1])
    page = opened.page

    def visible() -> list[str]:
        return [
            r.locator("td").first.inner_text()
            for r in page.locator("#cases tbody tr").all()
            if r.is_visible()
        ]

    assert sorted(visible()) == ["breaks", "moves", "steady"]
    assert page.locator("#cases-shown").inner_text() == "3 of 3 shown"
    page.fill("#cases-filter", "moves-tag")
    assert visible() == ["moves"]
    page.fill("#cases-filter", "")
    page.select_option("#cases-class", "candidate-only-failed")
    assert visible() == ["breaks"]
    assert page.locator("#cases-shown").inner_text() == "1 of 3 shown"
    page.select_option("#cases-class", "")
    page.click("#cases th:text('case')")
    assert visible() == ["breaks", "moves", "steady"]
    page.click("#cases th:text('case')")
    assert visible() == ["steady", "moves", "breaks"]
    assert opened.errors == []
    page.close()


def test_report_makes_the_page_again_from_the_run_directory(
    run: tuple[Path, Path], tmp_path: Path
) -> None:
    again = tmp_path / "again.html"
    code, said = run_cli(["report", str(run[0]), "--html", str(again)])
    assert code == 1  # as `fidelity compare` exits on this run
    assert said.startswith("MOVED: 1 moved, 1 failed of 3")
    assert again.read_text() == run[1].read_text()


def test_report_refuses_a_folder_that_holds_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path), "--html", str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert "holds neither run.json" in err and "report.json" in err
    assert not (tmp_path / "p.html").exists()


def test_report_needs_a_page_to_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["report", str(tmp_path)])
    assert exit.value.code == 2
    assert re.search(r"required: --html", capsys.readouterr().err)
