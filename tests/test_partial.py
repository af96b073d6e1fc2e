"""A partial run can never pass for the gate: every report of one leads with PARTIAL and
"N of M declared cases" (HELD and HOLDS included), and under CI (`CI` set) it exits 3 unless
`--partial` says it is meant; a shard is exempt, and the merge of every shard is the full
gate; `compare`, `verify` and `merge` judge a partial run as `run` does."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import PY, Repo

from fidelity.cli.main import main
from fidelity.cli.options import under_ci

COPY = "import shutil, sys; shutil.copy('{0}.txt', sys.argv[1])"
PREDICT = '[prediction]\nwhy = "the fix changes a.txt only"\nmoved = ["a"]\n'


def table() -> str:
    return "\n".join(
        f'[[case]]\nid = "{c}"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(COPY.format(c))}, '
        f'"{{out}}"]\noutputs = ["{c}.txt"]\n'
        for c in "abcd"
    )


@pytest.fixture
def repo(make_repo) -> Repo:
    r: Repo = make_repo("part")
    files = {f"{c}.txt": "1\n" for c in "abcd"}
    r.commit({**files, "cases/matrix.toml": table(), "cases/p.toml": PREDICT}, "base")
    r.git("tag", "base")
    r.commit({"a.txt": "2\n"}, "the fix")
    return r


def cli(repo: Repo, *argv: str) -> list[str]:
    return ["-q", "run", "--repo", str(repo.path), "--baseline", "base", *argv]


THREE = ("--case", "a", "--case", "b", "--case", "c")
HEAD = "PARTIAL (3 of 4 declared cases) HELD: the moved set equals the prediction (1 case)"


def test_a_partial_held_says_partial_in_every_report(repo: Repo, tmp_path: Path, capsys) -> None:
    """The issue's run: `--case` three times with `--expect`, a fourth case never ran."""
    out = tmp_path / "r"
    reports = [f"--markdown={out}.md", f"--junit={out}.xml", f"--json={out}.json"]
    code = main(cli(repo, *THREE, "--expect", "cases/p.toml", *reports, f"--html={out}.html"))
    terminal = capsys.readouterr().out
    assert code == 0
    assert f"{HEAD} (exit 0)" in terminal
    assert "selected 3 of 4 declared" in terminal and "declared 3 " not in terminal
    markdown = Path(f"{out}.md").read_text()
    assert markdown.startswith(f"### fidelity: {HEAD} (exit 0)")
    assert "declared 3 " not in markdown
    report = json.loads(Path(f"{out}.json").read_text())
    assert report["verdict"] == f"{HEAD} (exit 0)"
    assert report["selection"]["selected"] == ["a", "b", "c"]
    assert report["selection"]["declared"] == 4
    suite = ET.parse(f"{out}.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("skipped") == "1"
    [skipped] = [c for c in suite.iter("testcase") if c.find("skipped") is not None]
    assert skipped.get("name") == "d"
    said = "".join(t.text or "" for t in suite.iter("system-out"))
    assert HEAD in said
    assert HEAD in Path(f"{out}.html").read_text()


def test_a_partial_run_under_ci_exits_3_unless_meant(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("CI", "true")
    assert main(cli(repo, *THREE, "--expect", "cases/p.toml")) == 3
    out = capsys.readouterr()
    assert "partial-run" in out.err  # said before any case runs
    assert "partial-run: a partial run under CI: 3 of 4 declared cases (a, b, c)" in out.out
    assert "PARTIAL (3 of 4 declared cases) UNTRUSTED" in out.out
    assert main(cli(repo, "--case", "b")) == 3  # a plain partial gate too
    capsys.readouterr()
    assert main(cli(repo, *THREE, "--expect", "cases/p.toml", "--partial")) == 0
    assert f"{HEAD} (exit 0)" in capsys.readouterr().out
    assert main(cli(repo, "--expect", "cases/p.toml")) == 0  # the full gate
    monkeypatch.setenv("CI", "false")
    assert main(cli(repo, "--case", "b")) == 0


def test_compare_and_verify_judge_a_stored_partial_run_as_run_does(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    plain, meant = tmp_path / "plain", tmp_path / "meant"
    assert main(cli(repo, *THREE, "--expect", "cases/p.toml", "--out", str(plain))) == 0
    argv = ["--expect", "cases/p.toml", "--partial", "--out", str(meant)]
    assert main(cli(repo, *THREE, *argv)) == 0
    assert json.loads((meant / "run.json").read_text())["selection"]["meant"] is True
    capsys.readouterr()
    monkeypatch.setenv("CI", "1")
    assert main(["-q", "compare", str(plain)]) == 3
    assert main(["-q", "verify", str(plain)]) == 3
    assert "PARTIAL (3 of 4 declared cases) UNTRUSTED" in capsys.readouterr().out
    assert main(["-q", "verify", str(plain), "--partial"]) == 0
    assert main(["-q", "compare", str(meant)]) == 0  # the run said it was meant
    assert f"{HEAD} (exit 0)" in capsys.readouterr().out


def test_shards_are_exempt_and_their_merge_is_the_full_gate(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("CI", "true")
    dirs = [tmp_path / f"s{k}" for k in (1, 2)]
    for k, where in enumerate(dirs, 1):
        argv = ["--shard", f"{k}/2", "--expect", "cases/p.toml", "--out", str(where)]
        assert main(cli(repo, *argv)) == 0
        assert f"PARTIAL SHARD {k}/2: evidence kept for 2 of 4 declared cases" in (
            capsys.readouterr().out
        )
    merged = tmp_path / "merged"
    assert main(["-q", "merge", *map(str, dirs), "--out", str(merged)]) == 0
    out = capsys.readouterr().out
    assert "HELD: the moved set equals the prediction (1 case) (exit 0)" in out
    assert "PARTIAL" not in out
    half = tmp_path / "half"
    assert main(["-q", "merge", str(dirs[0]), "--out", str(half)]) == 3
    out = capsys.readouterr().out
    assert "PARTIAL (2 of 4 declared cases) UNTRUSTED" in out
    assert "shard-missing" in out and "partial-run" in out
    assert json.loads((half / "run.json").read_text())["selection"]["declared"] == 4
    assert main(["-q", "compare", str(half)]) == 3
    assert "PARTIAL (2 of 4 declared cases) UNTRUSTED" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("value", "ci"),
    [("true", True), ("1", True), ("yes", True), ("", False), ("0", False), ("False", False)],
)
def test_ci_is_the_ci_variable_set_to_a_true_value(value: str, ci: bool) -> None:
    assert under_ci({"CI": value}) is ci
    assert under_ci({}) is False
