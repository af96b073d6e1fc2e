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
from fidelity.history import landed, stale
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
    assert "1 row checked against HEAD" in out and "all fresh" in out
    assert "2/2" in out


def test_a_record_that_starts_with_a_byte_order_mark_is_read(repo: Repo) -> None:
    measured = measure_then(repo, n_src=1)
    body = record(("speed", f"`{measured[:10]}`", "")).split("\n", 2)[2]  # no title: line 1
    repo.commit({"records/bench.md": "\ufeff" + body}, "a BOM before the header")
    code, out = run_cli(repo, "stale")
    assert code == 0 and "1 row checked against HEAD" in out, out
    assert "1/2" in out, out


def test_stale_by_count_names_the_newest_commits(repo: Repo, tmp_path: Path) -> None:
    measure_then(repo, n_src=3)
    out_json = tmp_path / "stale.json"
    code, out = run_cli(repo, "stale", "--json", str(out_json))
    assert code == 1
    assert "1 stale" in out
    row = json.loads(out_json.read_text())["rows"][0]
    assert row["detail"].startswith("3 commits touching its watched paths landed since it was")
    assert "(limit 2): re-measure it and record the new commit; newest: " in row["detail"]
    assert (row["status"], row["since"], row["line"], row["key"]) == ("stale", 3, 5, "speed")
    assert [c["subject"] for c in row["newest"]] == ["src change 2", "src change 1", "src change 0"]


def test_threshold_override_from_the_command_line(repo: Repo) -> None:
    measure_then(repo, n_src=3)
    assert run_cli(repo, "stale", "--stale-after", "3")[0] == 0


@pytest.mark.parametrize(
    ("watch", "said"),
    [
        ('["scr/"]', "row 'speed' watches 'scr/', which no commit of"),
        ('["src/", ":(bad"]', "row 'speed' watches ':(bad', which git cannot read as a pathspec"),
    ],
)
def test_a_watched_path_nothing_ever_touched_is_a_configuration_error(
    repo: Repo, watch: str, said: str
) -> None:
    """A typo in watch (`scr/` for `src/`) kept the row fresh whatever changed (exit 0, no
    word); a pathspec git cannot read was exit 3 with git's own error."""
    measure_then(repo, n_src=3)  # stale with the right watch
    repo.commit({"pyproject.toml": CONFIG.replace('watch = ["src/"]', f"watch = {watch}")})
    with pytest.raises(UsageError) as info:  # exit 2
        run_cli(repo, "stale")
    assert f"records/bench.md:5: {said}" in str(info.value)
    assert "could never go stale" in str(info.value)
    cell = record(("speed", repo.git("rev-parse", "HEAD~4")[:10], "`scr/`"))
    repo.commit({"pyproject.toml": CONFIG, "records/bench.md": cell})  # in the row's cell
    with pytest.raises(UsageError, match="row 'speed' watches 'scr/'"):
        run_cli(repo, "stale")


def test_a_negative_threshold_is_refused(repo: Repo) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["stale", "--repo", str(repo.path), "--stale-after", "-1"])
    assert info.value.code == 2


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
    assert "did not land on the ref" in check.detail()
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


def test_uppercase_sha_resolves(repo: Repo) -> None:
    measured = repo.git("rev-parse", "HEAD")
    repo.commit({"records/bench.md": record(("speed", measured[:12].upper(), ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.sha) == (RowStatus.FRESH, measured)


# --- one meaning of landed, shared with `fidelity landed` ---


def _squash_history(repo: Repo) -> tuple[str, str]:
    """A pull-request branch measured at its tip, then squash-merged: (tip, squash)."""
    repo.git("switch", "-q", "-c", "pr")
    repo.commit({"src/b.py": "b = 1\n"}, "pr step 1")
    tip = repo.commit({"src/b.py": "b = 2\n"}, "pr step 2")
    repo.git("switch", "-q", "main")
    repo.commit({"docs/x.md": "y\n"}, "docs meanwhile")
    repo.git("merge", "-q", "--squash", "pr")
    squash = repo.commit(message="pr (squashed)")
    return tip, squash


def test_squash_merged_row_is_landed_in_both_commands(repo: Repo) -> None:
    tip, squash = _squash_history(repo)
    repo.commit({"src/a.py": "a = 9\n"}, "src after the squash")
    repo.commit({"records/bench.md": record(("speed", tip, ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    # the squash itself carries the measured patch: only the later src commit counts
    assert (check.status, check.via, check.since) == (RowStatus.FRESH, squash, 1)
    claim = landed.check(repo.path, "HEAD", [tip], []).commits[0]
    assert (str(claim.status), claim.via) == ("landed-as", squash)


def test_a_stale_squash_merged_row_still_says_where_it_landed(repo: Repo) -> None:
    tip, squash = _squash_history(repo)
    for i in range(3):  # the limit is 2
        repo.commit({"src/a.py": f"a = {i + 10}\n"}, f"src after the squash {i}")
    repo.commit({"records/bench.md": record(("speed", tip, ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.via) == (RowStatus.STALE, squash)
    assert check.detail().startswith(f"landed as {squash[:10]}; 3 commits touching its watched")


def test_cherry_picked_row_is_landed_in_both_commands(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "side")
    measured = repo.commit({"src/c.py": "c = 1\n"}, "side work")
    repo.git("switch", "-q", "main")
    repo.commit({"docs/x.md": "z\n"}, "docs")
    repo.git("cherry-pick", measured)
    picked = repo.git("rev-parse", "HEAD")
    repo.commit({"records/bench.md": record(("speed", measured, ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.via) == (RowStatus.FRESH, picked)
    assert str(landed.check(repo.path, "HEAD", [measured], []).commits[0].status) == "landed-as"


def test_reverted_row_is_not_fresh(repo: Repo) -> None:
    measured = repo.commit({"src/a.py": "a = 5\n"}, "speed-up")
    repo.git("revert", "--no-edit", measured)
    revert = repo.git("rev-parse", "HEAD")
    repo.commit({"records/bench.md": record(("speed", measured, ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.reverted_by) == (RowStatus.REVERTED, revert)
    assert str(landed.check(repo.path, "HEAD", [measured], []).commits[0].status) == "reverted"
    assert "reverted it" in check.detail()


def test_counts_agree_with_git_rev_list_on_a_merge_history(repo: Repo) -> None:
    """Every commit of a history with merges and parallel branches as a row: the batched
    count equals `git rev-list --count --no-merges --full-history C..HEAD -- src/`."""
    for i in range(3):
        repo.commit({"src/a.py": f"a = {i}\n"}, f"main {i}")
        repo.git("switch", "-q", "-c", f"f{i}")
        repo.commit({f"src/f{i}.py": "x\n"}, f"feature {i}")
        repo.commit({"docs/x.md": f"f{i}\n"}, f"feature docs {i}")
        repo.git("switch", "-q", "main")
        repo.commit({"src/m.py": f"m{i}\n"}, f"main meanwhile {i}")
        repo.git("merge", "-q", "--no-ff", "--no-edit", f"f{i}")
    shas = repo.git("rev-list", "HEAD").split()
    rows = [(f"r{i}", sha, "") for i, sha in enumerate(shas)]
    repo.commit({"records/bench.md": record(*rows)}, "record")
    report = stale.check(repo.path, "HEAD", [RecordSpec("records/bench.md", watch=("src/",))])
    assert len(report.checks) == len(shas)
    for check in report.checks:
        expected = repo.git(
            "rev-list",
            "--count",
            "--no-merges",
            "--full-history",
            f"{check.sha}..HEAD",
            "--",
            "src/",
        )
        assert check.since == int(expected), check.row.key


# --- record paths: never outside the repository, never a traceback ---


def test_record_outside_the_repository_is_refused(repo: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text(record(("speed", repo.git("rev-parse", "HEAD"), "")))
    outside = CONFIG.replace('path = "records/bench.md"', 'path = "../outside.md"')
    repo.commit({"pyproject.toml": outside}, "point outside")
    with pytest.raises(UsageError, match="outside the repository"):
        run_cli(repo, "stale")
    assert cli.main(["stale", "--repo", str(repo.path)]) == 2
    # through a symbolic link inside the repository that points outside
    (repo.path / "records").mkdir(exist_ok=True)
    (repo.path / "records" / "bench.md").symlink_to(secret)
    repo.commit({"pyproject.toml": CONFIG}, "back")
    with pytest.raises(UsageError, match="outside the repository"):
        run_cli(repo, "stale")
    with pytest.raises(UsageError, match="outside the repository"):
        run_cli(repo, "stale", "records/bench.md")
    with pytest.raises(UsageError, match="outside the repository"):
        run_cli(repo, "stale", str(secret))
    # the nearest valid neighbour: a symbolic link that stays inside is read
    (repo.path / "records" / "bench.md").unlink()
    (repo.path / "records" / "real.md").write_text(secret.read_text())
    (repo.path / "records" / "bench.md").symlink_to("real.md")
    assert run_cli(repo, "stale")[0] == 0


def test_symlink_loop_and_non_utf8_record_are_located(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    records = repo.path / "records"
    records.mkdir()
    (records / "bench.md").symlink_to("loop.md")
    (records / "loop.md").symlink_to("bench.md")
    assert cli.main(["stale", "--repo", str(repo.path)]) == 2
    assert cli.main(["stale", "--repo", str(repo.path), "records/bench.md"]) == 2
    err = capsys.readouterr().err
    assert "records/bench.md" in err and "Traceback" not in err
    (records / "bench.md").unlink()
    (records / "bench.md").write_bytes(
        b"# Bench\n\n| row | commit |\n|---|---|\n| a \xff | abc1234 |\n"
    )
    assert cli.main(["stale", "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err
    assert "records/bench.md:5:5: not UTF-8 (byte 0xff)" in err and "Traceback" not in err


# --- output: -q is one record per line, --json - is standard output ---


def test_quiet_is_one_record_per_line_and_json_dash_is_stdout(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    measured = measure_then(repo, n_src=3)
    assert cli.main(["stale", "-q", "--repo", str(repo.path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("records/bench.md:5\t"))
    assert row.split("\t")[:5] == ["records/bench.md:5", "speed", measured[:10], "stale", "3/2"]
    assert all("━" not in line and "│" not in line for line in lines)
    assert cli.main(["stale", "--repo", str(repo.path), "--json", "-"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["status"] == "stale" and data["exit_code"] == 1
    assert not (repo.path / "-").exists()


def test_revert_and_reland_count_like_any_other_change(repo: Repo) -> None:
    """An ancestor reverted and landed again is landed; the revert and the re-landing are
    two changes since the measurement, as git rev-list counts them."""
    measured = repo.commit({"src/a.py": "a = 5\n"}, "speed-up")
    repo.git("revert", "--no-edit", measured)
    repo.git("revert", "--no-edit", "HEAD")
    reland = repo.git("rev-parse", "HEAD")
    repo.commit({"records/bench.md": record(("speed", measured, ""))}, "record")
    check = stale.check(repo.path, "HEAD", _specs(repo)).checks[0]
    assert (check.status, check.since) == (RowStatus.FRESH, 2)
    claim = landed.check(repo.path, "HEAD", [measured], []).commits[0]
    assert (str(claim.status), claim.via) == ("landed", reland)


@pytest.mark.parametrize(
    ("written", "hint"),
    [("deadbeef", "names no commit in this clone"), ("zzzz", "a sha of 7+ hex digits")],
)
def test_an_unknown_commit_is_told_why_by_what_is_written(
    repo: Repo, written: str, hint: str
) -> None:
    """`deadbeef` is 8 hex digits; the hint said a sha of 7+ hex digits was required."""
    repo.commit({"records/bench.md": record(("speed", written, ""))}, "record")
    code, out = run_cli(repo, "stale", "-q")
    assert code == 1 and hint in out, out
    assert ("7+ hex digits" in out) == (hint == "a sha of 7+ hex digits"), out
