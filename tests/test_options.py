"""Report files through the one writer (fidelity/cli/options.py): a path that cannot be
written is exit 2 naming it, never a traceback, and nothing written before it is lost.

A full disk is real: /dev/full (ENOSPC on every write, no root needed), and where this runs
as root a 1 MiB tmpfs holding a run directory.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fidelity.cli.main import main

ROOT = Path(__file__).parent.parent
FIXTURES = ROOT / "cases" / "fixtures"
FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system")


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["-q", *argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(FIXTURES / "runs" / "moves", copy)
    return copy


@pytest.mark.parametrize("option", ["--json", "--markdown", "--junit"])
@pytest.mark.parametrize("command", ["compare", "verify"])
def test_a_full_disk_under_a_report_is_a_clean_error(
    run_dir: Path, tmp_path: Path, command: str, option: str
) -> None:
    before = (run_dir / "run.json").read_bytes()
    earlier = tmp_path / "earlier.json"  # a report written before the one that fails
    extra = ["--expect", str(FIXTURES / "predict.toml")] if command == "verify" else []
    reports = [] if option == "--json" else ["--json", str(earlier)]
    code, out, err = cli([command, str(run_dir), *extra, *reports, option, str(FULL)])
    assert code == 2, err
    assert f"cannot write the report {FULL}: No space left on device; free space" in err
    assert f"`fidelity compare {run_dir}` writes them again" in err
    assert "Traceback" not in err and "internal error" not in err
    assert "moved" in out  # the verdict is still shown
    assert (run_dir / "run.json").read_bytes() == before
    assert option == "--json" or '"exit_code": 3' in earlier.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["check-docs", "--root", str(FIXTURES / "docs"), "--json", str(FULL)],
        ["ab", "--from", str(FIXTURES / "ab" / "paired.csv"), "--json", str(FULL)],
        ["ab", "--from", str(FIXTURES / "ab" / "paired.csv"), "--markdown", str(FULL)],
        [
            "failset",
            "diff",
            "--baseline",
            str(FIXTURES / "failset" / "baseline.json"),
            str(FIXTURES / "failset" / "run.xml"),
            "--json",
            str(FULL),
        ],
        ["failset", "record", str(FIXTURES / "failset" / "run.xml"), "--out", str(FULL)],
    ],
    ids=["check-docs", "ab-json", "ab-markdown", "failset-diff", "failset-record"],
)
def test_every_command_reports_a_full_disk_by_path(argv: list[str]) -> None:
    code, _, err = cli(argv)
    assert code == 2, err
    assert f"cannot write the report {FULL}: No space left on device" in err
    assert "Traceback" not in err and "internal error" not in err


def test_a_report_that_is_a_folder_is_refused_before_anything_runs(run_dir: Path) -> None:
    code, out, err = cli(["compare", str(run_dir), "--json", str(run_dir)])
    assert code == 2 and f"report path {run_dir} is a directory; name a file" in err
    assert out == ""


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["compare", "RUN", "--json", "-", "--markdown", "-"], "standard output ('-')"),
        (["compare", "RUN", "--json", "r.out", "--junit", "r.out"], "r.out"),
        (["check-docs", "--json", "-", "--sarif", "-", "nope.md"], "standard output ('-')"),
    ],
)
def test_two_reports_in_one_place_are_refused_before_anything_runs(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], where: str
) -> None:
    """`--json - --sarif -` wrote two documents one after the other on standard output, so
    neither parsed; two reports to one file kept only the last."""
    monkeypatch.chdir(tmp_path)
    code, out, err = cli([str(run_dir) if a == "RUN" else a for a in argv])
    assert code == 2 and f"two reports are asked for in {where}" in err, err
    assert out == "" and not (tmp_path / "r.out").exists()


def test_a_failed_report_leaves_the_old_file_whole(run_dir: Path, tmp_path: Path) -> None:
    """The temporary beside the report cannot be made: the old report is still there."""
    folder = tmp_path / "reports"
    folder.mkdir()
    report = folder / "v.json"
    report.write_text("old report\n")
    (folder / f".v.json.{os.getpid()}.tmp").mkdir()  # blocks the temporary
    code, _, err = cli(["compare", str(run_dir), "--json", str(report)])
    assert code == 2 and f"cannot write the report {report}: Is a directory" in err, err
    assert report.read_text() == "old report\n"


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A real 1 MiB filesystem (tmpfs); skipped where mounting needs a root this is not."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_run_directory_on_a_full_disk_is_a_clean_error(tiny_disk: Path, run_dir: Path) -> None:
    """The run fills the disk: compare's report there fails by name; the run.json stays."""
    shutil.copytree(run_dir, tiny_disk / "run")
    filler = tiny_disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as f:
        f.write(b"x" * 4 * 1024 * 1024)
    before = (tiny_disk / "run" / "run.json").read_bytes()
    report = tiny_disk / "reports" / "v.json"  # beside the run: never inside it
    code, _, err = cli(["compare", str(tiny_disk / "run"), "--json", str(report)])
    assert code == 2, err
    assert f"cannot write the report {report}: No space left on device" in err
    assert (tiny_disk / "run" / "run.json").read_bytes() == before
    assert not list((tiny_disk / "reports").glob(".*.tmp")), "no temporary left"


@pytest.mark.parametrize(
    ("argv", "inside"),
    [
        (["report", "RUN", "--html", "RUN/run.json"], "run.json"),
        (["compare", "RUN", "--json", "RUN/run.json"], "run.json"),
        (["verify", "RUN", "--expect", "PREDICT", "--markdown", "RUN/new.md"], "new.md"),
        (["merge", "RUN", "--out", "OUT", "--junit", "RUN/junit.xml"], "junit.xml"),
    ],
)
def test_a_report_is_never_written_into_the_run_directory_it_judges(
    run_dir: Path, tmp_path: Path, argv: list[str], inside: str
) -> None:
    """`report RUN --html RUN/run.json` wrote the page over the run's own record (exit 0),
    and every later compare of it said the run directory was damaged."""
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    names = {"RUN": str(run_dir), "PREDICT": str(FIXTURES / "predict.toml")}
    names["OUT"] = str(tmp_path / "merged")
    given = [names.get(a, a.replace("RUN/", f"{run_dir}/")) for a in argv]
    code, _, err = cli(given)
    assert code == 2 and "is inside the run directory" in err, err
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    assert not (run_dir / inside).exists() or inside == "run.json"
