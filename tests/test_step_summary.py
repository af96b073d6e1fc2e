"""`--markdown` and GitHub's step summary: appended to, kept under 1 MiB, and never a page a
case can break with what it wrote to stderr.

Real runs in real repositories, as a CI step runs them (a subprocess with
GITHUB_STEP_SUMMARY set); the page is read back with markdown-it-py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support import PY, Repo, fidelity_cli

from fidelity.markdown import STEP_SUMMARY_LIMIT

HOSTILE = "</details><script>x</script>\\x00 \\x1b[31mred <img src=x onerror=alert(1)> *b* | c"
PROG = f"""
import pathlib, sys
out = pathlib.Path(sys.argv[1])
value = pathlib.Path("v.txt").read_text()
(out / "r.txt").write_text(value)
if "bad" in value:
    sys.stderr.buffer.write(b"{HOSTILE}\\n")
    sys.exit(1)
"""
EARLIER = "## an earlier step\n\n<details><summary>its own</summary>\n\nkept\n</details>\n"


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose candidate fails, writing HTML, NUL and ESC to stderr."""
    repo = Repo(tmp_path_factory.mktemp("hostile") / "repo")
    table = "".join(
        f'[[case]]\nid = "{name}"\nargv = [{json.dumps(PY)}, "{prog}", "{{out}}"]\n'
        'outputs = ["r.txt"]\n'
        for name, prog in (("calm", "calm.py"), ("hostile", "prog.py"))
    )
    calm = "import pathlib, sys; (pathlib.Path(sys.argv[1]) / 'r.txt').write_text('1')"
    files = {"prog.py": PROG, "calm.py": calm, "v.txt": "ok", "cases/matrix.toml": table}
    base = repo.commit(files)
    repo.commit({"v.txt": "bad"})
    out = repo.path.parent / "run"
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", base, "--out", str(out))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "\x1b"
        in json.loads((out / "run.json").read_text())["sides"]["candidate"]["cases"]["hostile"][
            "stderr_tail"
        ]
    ), "the case's own bytes are kept as evidence"
    return out


def summarise(run: Path, summary: Path, *more: str) -> tuple[int, str]:
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    done = fidelity_cli(run.parent, "-q", "compare", str(run), *more, env=env)
    return done.returncode, done.stderr


def test_the_report_is_appended_and_the_case_breaks_nothing(
    failed_run: Path, tmp_path: Path
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text(EARLIER)
    assert summarise(failed_run, summary, "--markdown", str(summary))[0] == 1
    assert summarise(failed_run, summary, "--markdown", str(summary))[0] == 1
    page = summary.read_bytes()
    assert page.startswith(EARLIER.encode()), "what earlier steps wrote is kept"
    assert page.count(b"### fidelity: MOVED") == 2 and b"</details>\n\n### fidelity" in page
    assert b"\x00" not in page and b"\x1b" not in page
    tokens = MarkdownIt("commonmark").enable("table").parse(page.decode())
    html = [t.content for t in tokens if t.type == "html_block"]
    html += [c.content for t in tokens for c in t.children or [] if c.type == "html_inline"]
    assert html == ["<details><summary>its own</summary>\n", "</details>\n"], "only the old page's"
    cells = [c.content for t in tokens for c in t.children or [] if c.type == "text"]
    said = next(c for c in cells if "script" in c)
    assert "</details><script>x</script>\\x00 \\x1b[31mred <img src=x" in said
    assert "*b* | c" in said, "no emphasis, no new cell"


def test_any_other_path_is_replaced(failed_run: Path, tmp_path: Path) -> None:
    summary, other = tmp_path / "step_summary.md", tmp_path / "report.md"
    summary.write_text(EARLIER)
    other.write_text("yesterday's report\n")
    assert summarise(failed_run, summary, "--markdown", str(other))[0] == 1
    assert other.read_text().startswith("### fidelity: MOVED")
    assert summary.read_text() == EARLIER


@pytest.mark.parametrize("room", [5000, 300, 0])
def test_the_1_mib_cap_counts_what_the_summary_holds(
    failed_run: Path, tmp_path: Path, room: int
) -> None:
    summary = tmp_path / "step_summary.md"
    earlier = ("x" * 99 + "\n") * ((STEP_SUMMARY_LIMIT - room) // 100)
    summary.write_text(earlier + "y" * ((STEP_SUMMARY_LIMIT - room) % 100))
    code, err = summarise(failed_run, summary, "--markdown", str(summary))
    assert code == 1
    page = summary.read_text()
    assert len(page.encode()) <= STEP_SUMMARY_LIMIT and page.startswith(earlier)
    if room == 5000:
        assert "### fidelity: MOVED" in page and "hostile" in page
    elif room == 300:
        assert "### fidelity: MOVED" in page and "Cut here" in page
    else:
        assert "no Markdown report added" in err and len(page.encode()) == STEP_SUMMARY_LIMIT
