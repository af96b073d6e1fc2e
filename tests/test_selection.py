"""A partial run (--case/--tag) says so everywhere; failures say why and where to look;
the verdict's words are true to what was compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import PY, Repo

from fidelity.cli.main import main
from fidelity.matrix import gate, rejudge
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.predict import PredictionError

OK = "import sys; open(sys.argv[1] + '/r.txt', 'w').write(open('v.txt').read())"
FAILS_ON_BAD = (
    "import sys\nv = open('v.txt').read()\nif v == 'bad':\n    print('loading the model')\n"
    "    sys.exit('ValueError: lanes must be >= 1')\nopen(sys.argv[1] + '/r.txt', 'w').write(v)"
)


def table() -> str:
    cases = []
    for cid, tags in (("a", ["fast"]), ("b", ["fast", "online"]), ("c", ["slow"])):
        code = FAILS_ON_BAD if cid == "c" else OK
        cases.append(
            f'[[case]]\nid = "{cid}"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(code)}, "{{out}}"]\n'
            f'outputs = ["r.txt"]\ntags = {json.dumps(tags)}\n'
        )
    return "\n".join(cases)


@pytest.fixture
def repo(make_repo) -> Repo:
    r: Repo = make_repo("sim")
    r.commit({"cases/matrix.toml": table(), "v.txt": "1"})
    return r


def test_a_selection_runs_only_its_cases_and_says_it_is_partial(repo: Repo, capsys) -> None:
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD", selectors=("a", "tag:online")))
    assert [r.case_id for r in outcome.comparison.cases] == ["a", "b"]
    assert outcome.exit_code == 0
    assert outcome.manifest["selection"] == {
        "selectors": ["a", "tag:online"],
        "selected": ["a", "b"],
        "declared": 3,
        "shard": None,
        "all": [[c, outcome.manifest["selection"]["all"][i][1]] for i, c in enumerate("abc")],
        "meant": False,
    }
    code = main(["-q", "compare", str(outcome.run_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert "PARTIAL (2 of 3 declared cases) HOLDS: all 2 selected cases identical (exit 0)" in out
    assert "a partial run: 2 of 3 declared cases selected by a, tag:online" in out
    assert "selected 2 of 3 declared · executed 2 baseline, 2 candidate" in out
    assert "declared 2" not in out  # "declared 2" would contradict "2 of 3 declared"


def test_the_cli_selects_by_case_and_tag_and_refuses_an_unknown_one(repo: Repo, capsys) -> None:
    argv = ["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD"]
    assert main([*argv, "--tag", "slow"]) == 0
    assert (
        "PARTIAL (1 of 3 declared cases) HOLDS: the 1 selected case identical (exit 0)"
        in capsys.readouterr().out
    )
    assert main([*argv, "--case", "nope"]) == 2
    assert "selector 'nope' matches no case" in capsys.readouterr().err
    with pytest.raises(PredictionError):
        gate.run(repo.path, RunRequest("HEAD", "HEAD", selectors=("tag:missing",)))


def test_the_full_gate_never_reads_as_partial(repo: Repo, capsys) -> None:
    assert main(["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "HOLDS: all 3 declared cases identical (exit 0)" in out and "partial" not in out


def test_a_selection_of_every_case_is_a_full_run(repo: Repo, capsys) -> None:
    """`--tag fast --tag slow` names all 3 cases: the full gate, not "partial: 3 of 3"."""
    argv = ["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD", "--tag", "fast"]
    assert main([*argv, "--tag", "slow"]) == 0
    out = capsys.readouterr().out
    assert "HOLDS: all 3 declared cases identical (exit 0)" in out and "partial" not in out
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD", selectors=("a", "b", "c")))
    assert outcome.selection is None and outcome.manifest["selection"] is None


def test_a_commit_compared_with_itself_says_so_everywhere(repo: Repo, tmp_path: Path, capsys):
    """A fresh-clone self-gate (--baseline origin/main --candidate HEAD at origin/main) holds,
    exit 0, but every report says the two sides are one commit."""
    sha = repo.git("rev-parse", "HEAD")
    note = (
        f"baseline and candidate are the same commit {sha[:10]}: this compares a commit with itself"
    )
    reports = [f"--markdown={tmp_path / 'v.md'}", f"--json={tmp_path / 'v.json'}"]
    argv = ["run", "--repo", str(repo.path), "--baseline", sha, "--candidate", "HEAD"]
    assert main([*argv, *reports]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("HOLDS"))
    assert lines[verdict - 1].startswith(note)
    markdown = (tmp_path / "v.md").read_text().splitlines()
    assert markdown[0].startswith("### fidelity: HOLDS") and markdown[2].startswith(f"**{note}")
    assert json.loads((tmp_path / "v.json").read_text())["same_commit"] is True
    repo.commit({"unrelated.txt": "x"})  # the nearest neighbour: two commits say nothing
    assert main([*argv, *reports]) == 0
    assert "same commit" not in capsys.readouterr().out + (tmp_path / "v.md").read_text()
    assert json.loads((tmp_path / "v.json").read_text())["same_commit"] is False


def test_a_prediction_about_unselected_cases_cannot_hold(repo: Repo) -> None:
    repo.commit({"cases/p.toml": '[prediction]\nwhy = "x"\nmoved = ["tag:fast"]\n', "v.txt": "2"})
    outcome = gate.run(
        repo.path, RunRequest("HEAD~1", "HEAD", expect="cases/p.toml", selectors=("a",))
    )
    assert Code.PARTIAL_PREDICTION in {f.code for f in outcome.findings}
    assert outcome.exit_code == 3
    said = "\n".join(words.prediction_lines(outcome))  # a case not run did not "not move"
    assert outcome.judged is not None and outcome.selection is not None
    unrun = [c for c in outcome.judged.missed if c not in outcome.selection.selected]
    assert unrun and f"left out of this partial run): {', '.join(unrun)}" in said, said
    assert not any(line.startswith("missed") and unrun[0] in line for line in said.splitlines())
    whole = gate.run(
        repo.path, RunRequest("HEAD~1", "HEAD", expect="cases/p.toml", selectors=("tag:fast",))
    )
    assert whole.findings == () and whole.exit_code == 0  # every predicted case ran and moved
    assert whole.judged is not None and set(whole.judged.moved) == {"a", "b"}


def test_a_failure_says_why_and_names_its_log_everywhere(make_repo, tmp_path: Path, capsys) -> None:
    r: Repo = make_repo("fails")
    base = r.commit({"cases/matrix.toml": table(), "v.txt": "1"})
    r.commit({"v.txt": "bad"})
    reports = [f"--markdown={tmp_path / 'v.md'}", f"--junit={tmp_path / 'v.xml'}"]
    code = main(
        [
            "-q",
            "run",
            "--repo",
            str(r.path),
            "--baseline",
            base,
            "--case",
            "a",
            "--case",
            "c",
            *reports,
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "candidate failed (exit 1): ValueError: lanes must be >= 1" in out
    for text in (out, (tmp_path / "v.md").read_text(), (tmp_path / "v.xml").read_text()):
        assert (
            "ValueError: lanes must be &gt;= 1" in text or "ValueError: lanes must be >= 1" in text
        )
        assert "stderr.log" in text


def test_within_tolerance_only_is_not_called_identical(make_repo) -> None:
    r: Repo = make_repo("tol")
    copy = "import shutil, sys; shutil.copy('m.csv', sys.argv[1])"
    t = (
        f'[[case]]\nid = "m"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(copy)}, "{{out}}"]\n'
        'outputs = ["m.csv"]\n[case.compare."m.csv"]\nkind = "csv"\nkey = ["id"]\natol = 0.1\n'
    )
    base = r.commit({"cases/matrix.toml": t, "m.csv": "id,v\n1,1.00\n"})
    r.commit({"m.csv": "id,v\n1,1.05\n"})
    outcome = gate.run(r.path, RunRequest(base, "HEAD"))
    from fidelity.matrix.verdict import words

    assert (
        words.verdict(outcome)
        == "HOLDS: the 1 declared case within tolerance, none identical (exit 0)"
    )
    assert rejudge.recompare(outcome.run_dir).exit_code == 0
