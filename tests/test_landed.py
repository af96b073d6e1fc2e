"""`fidelity landed` against real histories: merged, unmerged, cherry-picked, squashed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from gitrepo import GitRepo

from fidelity import landed
from fidelity.errors import UsageError
from fidelity.landed import CommitStatus


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.commit("root", {"src/a.py": "x = 1\n"})
    return r


def test_ancestor_commit_landed(repo: GitRepo) -> None:
    sha = repo.commit("add b", {"src/b.py": "y = 2\n"})
    report = landed.check(repo.path, "main", [sha[:8]], [])
    assert report.commits[0].status is CommitStatus.LANDED
    assert report.exit_code() == 0


def test_commit_on_unmerged_branch_is_red(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit("feature work", {"src/f.py": "f = 1\n"})
    repo.git("switch", "-q", "main")
    report = landed.check(repo.path, "main", [sha], [])
    assert report.commits[0].status is CommitStatus.UNLANDED
    assert report.exit_code() == 1
    # the same claim holds against the branch it lives on
    assert landed.check(repo.path, "feature", [sha], []).exit_code() == 0


def test_cherry_pick_found_by_patch_id(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit("fix", {"src/a.py": "x = 2\n"})
    repo.git("switch", "-q", "main")
    repo.commit("unrelated", {"README": "hi\n"})
    repo.git("cherry-pick", sha)
    picked = repo.git("rev-parse", "HEAD")
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert (claim.status, claim.via, claim.squash) == (CommitStatus.LANDED_AS, picked, False)


def test_squash_landed_claim_found_by_patch_id(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    repo.commit("step 1", {"src/a.py": "x = 1\nz = 3\n"})
    tip = repo.commit("step 2", {"src/c.py": "c = 1\n"})
    repo.git("switch", "-q", "main")
    repo.commit("unrelated", {"README": "hi\n"})
    repo.git("merge", "-q", "--squash", "feature")
    squashed = repo.commit("feature (squashed)")
    report = landed.check(repo.path, "main", [tip], [])
    claim = report.commits[0]
    assert (claim.status, claim.via, claim.squash) == (CommitStatus.LANDED_AS, squashed, True)
    assert report.exit_code() == 0


def test_squash_edited_while_merging_is_unlanded(repo: GitRepo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    tip = repo.commit("work", {"src/a.py": "x = 5\n"})
    repo.git("switch", "-q", "main")
    repo.commit("landed differently", {"src/a.py": "x = 6\n"})
    assert landed.check(repo.path, "main", [tip], []).commits[0].status is CommitStatus.UNLANDED


def test_unknown_commit_exits_2_but_still_reports(repo: GitRepo) -> None:
    code, out = run_cli(["landed", "--repo", str(repo.path), "--commit", "deadbeef" * 5])
    assert code == 2
    assert "unknown" in out and "names no commit here" in out


def test_unknown_ref_is_a_usage_error(repo: GitRepo) -> None:
    with pytest.raises(UsageError, match="unknown revision 'nope'"):
        landed.check(repo.path, "nope", [], ["x"])


def test_symbol_added_then_removed(repo: GitRepo) -> None:
    added = repo.commit("add helper", {"src/h.py": "def frobnicate():\n    pass\n"})
    repo.commit("other", {"src/a.py": "x = 3\n"})
    removed = repo.rm("src/h.py", "drop helper")
    claim = landed.check(repo.path, "main", [], ["frobnicate"]).symbols[0]
    assert [(c.sha, c.kind) for c in claim.changes] == [(added, "added"), (removed, "removed")]
    assert not claim.holds
    code, out = run_cli(["landed", "--repo", str(repo.path), "--symbol", "frobnicate"])
    assert code == 1
    assert "not in the tree now" in out


def test_symbol_present(repo: GitRepo, tmp_path: Path) -> None:
    sha = repo.commit("add helper", {"src/h.py": "def frobnicate():\n    pass\n"})
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


def test_markdown_output(repo: GitRepo, tmp_path: Path) -> None:
    sha = repo.commit("a | pipe", {"src/b.py": "y = 2\n"})
    md = tmp_path / "landed.md"
    assert (
        run_cli(["landed", "--repo", str(repo.path), "--commit", sha, "--markdown", str(md)])[0]
        == 0
    )
    text = md.read_text()
    assert text.startswith("### landed on HEAD\n")
    assert "a \\| pipe" in text


def test_nothing_to_check_is_a_usage_error(repo: GitRepo) -> None:
    with pytest.raises(UsageError, match="nothing to check"):
        run_cli(["landed", "--repo", str(repo.path)])
