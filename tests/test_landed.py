"""`fidelity landed` against real histories: merged, unmerged, cherry-picked, squashed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import Repo, run_cli

from fidelity.errors import UsageError
from fidelity.history import landed
from fidelity.history.landed import CommitStatus


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit({"src/a.py": "x = 1\n"}, "root")
    return r


def test_ancestor_commit_landed(repo: Repo) -> None:
    sha = repo.commit({"src/b.py": "y = 2\n"}, "add b")
    report = landed.check(repo.path, "main", [sha[:8]], [])
    assert report.commits[0].status is CommitStatus.LANDED
    assert report.exit_code() == 0


def test_commit_on_unmerged_branch_is_red(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit({"src/f.py": "f = 1\n"}, "feature work")
    repo.git("switch", "-q", "main")
    report = landed.check(repo.path, "main", [sha], [])
    assert report.commits[0].status is CommitStatus.UNLANDED
    assert report.exit_code() == 1
    # the same claim holds against the branch it lives on
    assert landed.check(repo.path, "feature", [sha], []).exit_code() == 0


def test_cherry_pick_found_by_patch_id(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit({"src/a.py": "x = 2\n"}, "fix")
    repo.git("switch", "-q", "main")
    repo.commit({"README": "hi\n"}, "unrelated")
    repo.git("cherry-pick", sha)
    picked = repo.git("rev-parse", "HEAD")
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert (claim.status, claim.via, claim.squash) == (CommitStatus.LANDED_AS, picked, False)


def test_squash_landed_claim_found_by_patch_id(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    repo.commit({"src/a.py": "x = 1\nz = 3\n"}, "step 1")
    tip = repo.commit({"src/c.py": "c = 1\n"}, "step 2")
    repo.git("switch", "-q", "main")
    repo.commit({"README": "hi\n"}, "unrelated")
    repo.git("merge", "-q", "--squash", "feature")
    squashed = repo.commit(message="feature (squashed)")
    report = landed.check(repo.path, "main", [tip], [])
    claim = report.commits[0]
    assert (claim.status, claim.via, claim.squash) == (CommitStatus.LANDED_AS, squashed, True)
    assert report.exit_code() == 0


def test_squash_edited_while_merging_is_unlanded(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    tip = repo.commit({"src/a.py": "x = 5\n"}, "work")
    repo.git("switch", "-q", "main")
    repo.commit({"src/a.py": "x = 6\n"}, "landed differently")
    assert landed.check(repo.path, "main", [tip], []).commits[0].status is CommitStatus.UNLANDED


def test_unknown_commit_exits_2_but_still_reports(repo: Repo) -> None:
    code, out = run_cli(["landed", "--repo", str(repo.path), "--commit", "deadbeef" * 5])
    assert code == 2
    assert "unknown" in out and "names no commit here" in out


def test_unknown_ref_is_a_usage_error(repo: Repo) -> None:
    with pytest.raises(UsageError, match="unknown revision 'nope'"):
        landed.check(repo.path, "nope", [], ["x"])


def test_symbol_added_then_removed(repo: Repo) -> None:
    added = repo.commit({"src/h.py": "def frobnicate():\n    pass\n"}, "add helper")
    repo.commit({"src/a.py": "x = 3\n"}, "other")
    removed = repo.rm("src/h.py", "drop helper")
    claim = landed.check(repo.path, "main", [], ["frobnicate"]).symbols[0]
    assert [(c.sha, c.kind) for c in claim.changes] == [(added, "added"), (removed, "removed")]
    assert not claim.holds
    code, out = run_cli(["landed", "--repo", str(repo.path), "--symbol", "frobnicate"])
    assert code == 1
    assert "not in the tree now" in out


def test_symbol_present(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit({"src/h.py": "def frobnicate():\n    pass\n"}, "add helper")
    out_json = tmp_path / "landed.json"
    code, out = run_cli(
        ["landed", "--repo", str(repo.path), "--symbol", "frobnicate", "--json", str(out_json)]
    )
    assert code == 0
    data = json.loads(out_json.read_text())
    assert data["symbols"][0]["present_in"] == ["src/h.py"]
    assert data["symbols"][0]["changes"] == [
        {"sha": sha, "subject": "add helper", "kind": "added", "net": 1}
    ]
    assert "all 1 claims hold" in out


def test_markdown_output(repo: Repo, tmp_path: Path) -> None:
    sha = repo.commit({"src/b.py": "y = 2\n"}, "a | pipe")
    md = tmp_path / "landed.md"
    assert (
        run_cli(["landed", "--repo", str(repo.path), "--commit", sha, "--markdown", str(md)])[0]
        == 0
    )
    text = md.read_text()
    assert text.startswith("### landed on HEAD\n")
    assert "a \\| pipe" in text


def test_nothing_to_check_is_a_usage_error(repo: Repo) -> None:
    with pytest.raises(UsageError, match="nothing to check"):
        run_cli(["landed", "--repo", str(repo.path)])
