"""`fidelity stale` over real histories: fresh, stale by count, unlanded, unknown."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path

import pytest
from gitrepo import GitRepo
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from fidelity import cli, cli_evidence, config, stale
from fidelity.errors import UntrustedError, UsageError
from fidelity.stale import RecordSpec, RowStatus

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """\
[[tool.fidelity.records]]
path = "records/bench.md"
key = "row"
commit_column = "commit"
watch = ["src/"]
watch_column = "watch"
stale_after = 2
"""


def record(*rows: tuple[str, str, str]) -> str:
    body = "".join(f"| {key} | 1.0 s | {commit} | {watch} |\n" for key, commit, watch in rows)
    return f"# Bench\n\n| row | figure | commit | watch |\n|---|---|---|---|\n{body}"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.commit("root", {"pyproject.toml": CONFIG, "src/a.py": "a = 0\n", "docs/x.md": "x\n"})
    return r


def run_cli(repo: GitRepo, *argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    cli_evidence.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([argv[0], "--repo", str(repo.path), *argv[1:]])
    out = io.StringIO()
    code: int = args.handler(args, Console(file=out, width=100, color_system=None))
    return code, out.getvalue()


def measure_then(repo: GitRepo, n_src: int, n_docs: int = 0) -> str:
    """A row measured now, then n_src commits to src/ and n_docs to docs/ land."""
    measured = repo.git("rev-parse", "HEAD")
    for i in range(n_src):
        repo.commit(f"src change {i}", {"src/a.py": f"a = {i + 1}\n"})
    for i in range(n_docs):
        repo.commit(f"docs change {i}", {"docs/x.md": f"x{i}\n"})
    repo.commit("record", {"records/bench.md": record(("speed", f"`{measured[:10]}`", ""))})
    return measured


def test_fresh_row_within_limit(repo: GitRepo) -> None:
    measure_then(repo, n_src=2, n_docs=5)  # exactly at the limit; docs do not count
    code, out = run_cli(repo, "stale")
    assert code == 0
    assert "1 rows checked against HEAD" in out and "all fresh" in out
    assert "2/2" in out


def test_stale_by_count_names_the_newest_commits(repo: GitRepo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    out_json = tmp_path / "stale.json"
    code, out = run_cli(repo, "stale", "--json", str(out_json))
    assert code == 1
    assert "1 stale" in out and "regrid owed" in out
    row = json.loads(out_json.read_text())["rows"][0]
    assert (row["status"], row["since"], row["line"], row["key"]) == ("stale", 3, 5, "speed")
    assert [c["subject"] for c in row["newest"]] == ["src change 2", "src change 1", "src change 0"]


def test_threshold_override_from_the_command_line(repo: GitRepo) -> None:
    measure_then(repo, n_src=3)
    assert run_cli(repo, "stale", "--stale-after", "3")[0] == 0


def test_per_row_watch_column_replaces_the_table_watch(repo: GitRepo) -> None:
    measured = repo.git("rev-parse", "HEAD")
    for i in range(3):
        repo.commit(f"src {i}", {"src/a.py": f"a = {i + 1}\n"})
    text = record(("docs-only", measured, "`docs/`"), ("all-src", measured, ""))
    repo.commit("record", {"records/bench.md": text})
    report = stale.check(repo.path, "HEAD", _specs(repo))
    assert [(c.row.key, c.status) for c in report.checks] == [
        ("docs-only", RowStatus.FRESH),
        ("all-src", RowStatus.STALE),
    ]


def _specs(repo: GitRepo) -> list[RecordSpec]:
    return stale.specs_from_config(config.load(repo.path)["records"], "pyproject.toml")


def test_unlanded_row_measured_on_an_unmerged_branch(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "experiment")
    side = repo.commit("experiment", {"src/a.py": "a = 99\n"})
    repo.git("switch", "-q", "main")
    repo.commit("record", {"records/bench.md": record(("speed", side, ""))})
    code, out = run_cli(repo, "stale")
    assert code == 1
    assert out.rstrip().endswith(": 1 unlanded")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.sha, check.since) == (RowStatus.UNLANDED, side, None)
    assert "not an ancestor of the ref" in check.detail()
    # the same row (the record is read from the working tree) is fresh on its own branch
    assert stale.check(repo.path, "experiment", _specs(repo)).exit_code() == 0


def test_unknown_and_missing_commits(repo: GitRepo) -> None:
    text = record(("typo", "0badc0ffee", ""), ("blank", "", ""), ("symbolic", "HEAD", ""))
    repo.commit("record", {"records/bench.md": text})
    report = stale.check(repo.path, "HEAD", _specs(repo))
    statuses = [c.status for c in report.checks]
    # `HEAD` resolves, but would be fresh forever: a measurement must name its sha
    assert statuses == [RowStatus.UNKNOWN, RowStatus.MISSING, RowStatus.UNKNOWN]
    assert report.exit_code() == 1
    assert report.summary().endswith(": 2 unknown, 1 missing")


def test_linked_commit_cell(repo: GitRepo) -> None:
    sha = repo.git("rev-parse", "HEAD")
    link = f"[{sha[:8]}](https://example.invalid/commit/{sha})"
    repo.commit("record", {"records/bench.md": record(("speed", link, ""))})
    assert stale.check(repo.path, "HEAD", _specs(repo)).checks[0].sha == sha


def test_empty_table_checks_nothing(repo: GitRepo) -> None:
    repo.commit("record", {"records/bench.md": record()})
    code, out = run_cli(repo, "stale", "records/bench.md")
    assert code == 3
    assert "nothing to check: no rows in records/bench.md" in out
    code, out = run_cli(repo, "stale", "--allow-empty")
    assert code == 0
    assert "exit 0 only because --allow-empty was given" in out


def test_record_without_the_columns_is_a_config_error(repo: GitRepo) -> None:
    repo.commit("record", {"records/bench.md": "| name | figure |\n|---|---|\n| a | 1 |\n"})
    with pytest.raises(UsageError, match="no table with columns 'row' and 'commit'"):
        run_cli(repo, "stale")


def test_unknown_config_key_is_named() -> None:
    with pytest.raises(UsageError, match=r"\[0\].stale_afte: unknown key 'stale_afte'"):
        stale.specs_from_config([{"path": "r.md", "stale_afte": 3}], "pyproject.toml")


def test_unknown_ref_is_a_usage_error(repo: GitRepo) -> None:
    with pytest.raises(UsageError, match="unknown revision 'release'"):
        run_cli(repo, "stale", "--ref", "release")


def test_shallow_clone_is_refused(repo: GitRepo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)],
        check=True,
        env=repo.env(),
    )
    with pytest.raises(UntrustedError, match="shallow clone"):
        stale.check(shallow, "HEAD", _specs(repo))


def test_markdown_report(repo: GitRepo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    md = tmp_path / "stale.md"
    run_cli(repo, "stale", "--markdown", str(md))
    text = md.read_text()
    assert "| records/bench.md:5 | speed |" in text and "| stale | 3/2 |" in text


def test_the_projects_own_record_has_the_configured_columns() -> None:
    specs = stale.specs_from_config(config.load(ROOT)["records"], "pyproject.toml")
    for spec in specs:
        rows = stale.read_rows((ROOT / spec.path).read_text(encoding="utf-8"), spec)
        assert all(row.path == spec.path for row in rows)


@settings(derandomize=True, max_examples=100)
@given(sha=st.text("0123456789abcdef", min_size=7, max_size=40))
def test_commit_cell_decoration_is_removed(sha: str) -> None:
    for cell in (sha, f"`{sha}`", f"[{sha}](https://x.invalid/{sha})", f"**`{sha}`**"):
        assert stale.plain(cell) == sha


def test_shallow_exit_code_through_main(repo: GitRepo, tmp_path: Path) -> None:
    measure_then(repo, n_src=1)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)],
        check=True,
        env=repo.env(),
    )
    assert cli.main(["stale", "--repo", str(shallow)]) == 3
    assert cli.main(["stale", "--repo", str(repo.path)]) == 0
