"""Table reports said three ways (cli/report.py): plain under -q, rich otherwise, JSON."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support import Repo, run_cli

from fidelity.cli import report
from fidelity.cli.console import make
from fidelity.cli.main import main
from fidelity.cli.plain import PlainConsole

SHA = "0123456789abcdef0123456789abcdef01234567"


@dataclass(frozen=True)
class Fake:
    rows: list[list[str]]

    def table(self) -> tuple[list[str], list[list[str]]]:
        return ["where", "sha", "detail"], self.rows

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows}

    def exit_code(self) -> int:
        return 1 if self.rows else 3


ROWS = [["a.md:3", SHA, "a detail " * 20], ["b.md:9", SHA[:12], "multi\nline\tcell"]]


def test_plain_is_one_record_per_line_unwrapped() -> None:
    out = io.StringIO()
    report.render(PlainConsole(file=out, width=40), "title", Fake(ROWS), "2 rows")
    lines = out.getvalue().splitlines()
    assert lines[0] == "title" and lines[1] == "where\tsha\tdetail" and lines[-1] == "2 rows"
    assert lines[2] == f"a.md:3\t{SHA}\t{'a detail ' * 20}".rstrip("\n")
    assert lines[3] == f"b.md:9\t{SHA[:12]}\tmulti line cell"
    assert len(lines) == 5


def test_rich_folds_where_plain_does_not() -> None:
    """The nearest neighbour: the same report on a narrow rich console splits the sha."""
    out = io.StringIO()
    report.render(Console(file=out, width=40, color_system=None), "title", Fake(ROWS), "s")
    assert SHA not in out.getvalue()
    assert isinstance(make(quiet=True), PlainConsole) and not isinstance(make(False), PlainConsole)


def test_empty_report_and_findings_lines() -> None:
    out = io.StringIO()
    console = PlainConsole(file=out)
    report.print_lines(console, ["x.md:1:1: FD701 [not markup]"])
    report.render(console, "title", Fake([]), "nothing")
    assert out.getvalue() == "x.md:1:1: FD701 [not markup]\ntitle: no rows\nnothing\n"


def test_json_dash_is_standard_output_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = report.emit(PlainConsole(file=io.StringIO()), "t", Fake(ROWS), "s", json_path=Path("-"))
    assert code == 1
    assert json.loads(capsys.readouterr().out)["rows"] == ROWS
    assert not Path("-").exists()


@pytest.mark.parametrize("command", ["landed", "trailers"])
def test_history_commands_write_json_to_stdout(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo(tmp_path / "repo")
    config = '[tool.fidelity.trailers]\nrequired = { "Signed-off-by" = ".+" }\n'
    base = repo.commit({"pyproject.toml": config}, "root")
    sha = repo.commit({"a.py": "x = 1\n"}, "no sign-off")
    argv = {"landed": ["--commit", sha], "trailers": ["--range", f"{base}..HEAD"]}[command]
    code = main([command, "--repo", str(repo.path), *argv, "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert (code, data["exit_code"]) == ({"landed": 0, "trailers": 1}[command],) * 2
    code, out = run_cli([command, "-q", "--repo", str(repo.path), *argv])
    assert "━" not in out and "│" not in out
