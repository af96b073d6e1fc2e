"""`fidelity stale` over real histories: fresh, stale by count, unlanded, unknown."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo
from support import run_cli as support_run_cli

from fidelity import config
from fidelity.cli import main as cli
from fidelity.errors import UntrustedError, UsageError
from fidelity.history import stale
from fidelity.history.stale import RecordSpec, RowStatus

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
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit({"pyproject.toml": CONFIG, "src/a.py": "a = 0\n", "docs/x.md": "x\n"}, "root")
    return r


def run_cli(repo: Repo, *argv: str) -> tuple[int, str]:
    return support_run_cli([argv[0], "--repo", str(repo.path), *argv[1:]])


def measure_then(repo: Repo, n_src: int, n_docs: int = 0) -> str:
    """A row measured now, then n_src commits to src/ and n_docs to docs/ land."""
    measured = repo.git("rev-parse", "HEAD")
    for i in range(n_src):
        repo.commit({"src/a.py": f"a = {i + 1}\n"}, f"src change {i}")
    for i in range(n_docs):
        repo.commit({"docs/x.md": f"x{i}\n"}, f"docs change {i}")
    repo.commit({"records/bench.md": record(("speed", f"`{measured[:10]}`", ""))}, "record")
    return measured


def test_fresh_row_within_limit(repo: Repo) -> None:
    measure_then(repo, n_src=2, n_docs=5)  # exactly at the limit; docs do not count
    code, out = run_cli(repo, "stale")
    assert code == 0
    assert "1 rows checked against HEAD" in out and "all fresh" in out
    assert "2/2" in out


def test_stale_by_count_names_the_newest_commits(repo: Repo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    out_json = tmp_path / "stale.json"
    code, out = run_cli(repo, "stale", "--json", str(out_json))
    assert code == 1
    assert "1 stale" in out and "regrid owed" in out
    row = json.loads(out_json.read_text())["rows"][0]
    assert (row["status"], row["since"], row["line"], row["key"]) == ("stale", 3, 5, "speed")
    assert [c["subject"] for c in row["newest"]] == ["src change 2", "src change 1", "src change 0"]


def test_threshold_override_from_the_command_line(repo: Repo) -> None:
    measure_then(repo, n_src=3)
    assert run_cli(repo, "stale", "--stale-after", "3")[0] == 0


def test_per_row_watch_column_replaces_the_table_watch(repo: Repo) -> None:
    measured = repo.git("rev-parse", "HEAD")
    for i in range(3):
        repo.commit({"src/a.py": f"a = {i + 1}\n"}, f"src {i}")
    text = record(("docs-only", measured, "`docs/`"), ("all-src", measured, ""))
    repo.commit({"records/bench.md": text}, "record")
    report = stale.check(repo.path, "HEAD", _specs(repo))
    assert [(c.row.key, c.status) for c in report.checks] == [
        ("docs-only", RowStatus.FRESH),
        ("all-src", RowStatus.STALE),
    ]


def _specs(repo: Repo) -> list[RecordSpec]:
    return stale.specs_from_config(config.load(repo.path)["records"], "pyproject.toml")


def test_unlanded_row_measured_on_an_unmerged_branch(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "experiment")
    side = repo.commit({"src/a.py": "a = 99\n"}, "experiment")
    repo.git("switch", "-q", "main")
    repo.commit({"records/bench.md": record(("speed", side, ""))}, "record")
    code, out = run_cli(repo, "stale")
    assert code == 1
    assert out.rstrip().endswith(": 1 unlanded")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.sha, check.since) == (RowStatus.UNLANDED, side, None)
    assert "not an ancestor of the ref" in check.detail()
    # the same row (the record is read from the working tree) is fresh on its own branch
    assert stale.check(repo.path, "experiment", _specs(repo)).exit_code() == 0


def test_unknown_and_missing_commits(repo: Repo) -> None:
    text = record(("typo", "0badc0ffee", ""), ("blank", "", ""), ("symbolic", "HEAD", ""))
    repo.commit({"records/bench.md": text}, "record")
    report = stale.check(repo.path, "HEAD", _specs(repo))
    statuses = [c.status for c in report.checks]
    # `HEAD` resolves, but would be fresh forever: a measurement must name its sha
    assert statuses == [RowStatus.UNKNOWN, RowStatus.MISSING, RowStatus.UNKNOWN]
    assert report.exit_code() == 1
    assert report.summary().endswith(": 2 unknown, 1 missing")


def test_linked_commit_cell(repo: Repo) -> None:
    sha = repo.git("rev-parse", "HEAD")
    link = f"[{sha[:8]}](https://example.invalid/commit/{sha})"
    repo.commit({"records/bench.md": record(("speed", link, ""))}, "record")
    assert stale.check(repo.path, "HEAD", _specs(repo)).checks[0].sha == sha


def test_empty_table_checks_nothing(repo: Repo) -> None:
    repo.commit({"records/bench.md": record()}, "record")
    code, out = run_cli(repo, "stale", "records/bench.md")
    assert code == 3
    assert "nothing to check: no rows in records/bench.md" in out
    code, out = run_cli(repo, "stale", "--allow-empty")
    assert code == 0
    assert "exit 0 only because --allow-empty was given" in out


def test_record_without_the_columns_is_a_config_error(repo: Repo) -> None:
    repo.commit({"records/bench.md": "| name | figure |\n|---|---|\n| a | 1 |\n"}, "record")
    with pytest.raises(UsageError, match="no table with columns 'row' and 'commit'"):
        run_cli(repo, "stale")


def test_unknown_config_key_is_named() -> None:
    with pytest.raises(UsageError, match=r"\[0\].stale_afte: unknown key 'stale_afte'"):
        stale.specs_from_config([{"path": "r.md", "stale_afte": 3}], "pyproject.toml")


def test_unknown_ref_is_a_usage_error(repo: Repo) -> None:
    with pytest.raises(UsageError, match="unknown revision 'release'"):
        run_cli(repo, "stale", "--ref", "release")


def test_shallow_clone_is_refused(repo: Repo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)],
        check=True,
        env=repo.env(),
    )
    with pytest.raises(UntrustedError, match="shallow clone"):
        stale.check(shallow, "HEAD", _specs(repo))


def test_markdown_report(repo: Repo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    md = tmp_path / "stale.md"
    run_cli(repo, "stale", "--markdown", str(md))
    text = md.read_text()
    assert "| records/bench.md:5 | speed |" in text and "| stale | 3/2 |" in text


def test_the_projects_own_records_have_rows_with_a_commit_each() -> None:
    specs = stale.specs_from_config(config.load(ROOT)["records"], "pyproject.toml")
    assert specs, "pyproject.toml configures [[tool.fidelity.records]]"
    for spec in specs:
        rows = stale.read_rows((ROOT / spec.path).read_text(encoding="utf-8"), spec)
        assert rows, f"{spec.path} has no row under {spec.key!r} and {spec.commit_column!r}"
        for row in rows:
            assert row.key, f"{spec.path}:{row.line} has no key"
            assert stale.SHA.fullmatch(row.commit), f"{spec.path}:{row.line}: {row.commit!r}"


@given(sha=st.text("0123456789abcdef", min_size=7, max_size=40))
def test_commit_cell_decoration_is_removed(sha: str) -> None:
    for cell in (sha, f"`{sha}`", f"[{sha}](https://x.invalid/{sha})", f"**`{sha}`**"):
        assert stale.plain(cell) == sha


def test_shallow_exit_code_through_main(repo: Repo, tmp_path: Path) -> None:
    measure_then(repo, n_src=1)
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)],
        check=True,
        env=repo.env(),
    )
    assert cli.main(["stale", "--repo", str(shallow)]) == 3
    assert cli.main(["stale", "--repo", str(repo.path)]) == 0
