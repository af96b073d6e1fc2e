"""`fidelity landed` against real histories: merged, unmerged, cherry-picked, squashed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import Repo, run_cli

from fidelity.cli import main as cli
from fidelity.errors import UntrustedError, UsageError
from fidelity.history import landed, landing
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


def test_a_claim_never_lands_as_its_own_ancestor_whatever_else_is_asked(repo: Repo) -> None:
    """`redo` undoes main's x = 2 and does it again: its patch is main's commit's, but that
    commit is redo's own ancestor. Asked alone or with a claim from elsewhere, redo is
    unlanded: each claim gets its own verdict (red with the ancestor filter removed:
    asked together, redo "landed as" main's commit)."""
    repo.commit({"src/a.py": "x = 2\n"}, "x = 2")
    repo.git("switch", "-q", "-c", "redo")
    repo.commit({"src/a.py": "x = 1\n"}, "back")
    redo = repo.commit({"src/a.py": "x = 2\n"}, "redo")
    repo.git("switch", "-q", "-c", "other", "main~1")
    other = repo.commit({"src/o.py": "o = 1\n"}, "other")
    repo.git("switch", "-q", "main")
    alone = landed.check(repo.path, "main", [redo], []).commits
    together = landed.check(repo.path, "main", [redo, other], []).commits
    assert [c.status for c in alone] == [CommitStatus.UNLANDED]
    assert [c.status for c in together] == [CommitStatus.UNLANDED] * 2


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


def test_a_long_symbol_history_is_capped_in_the_row_and_whole_in_json(
    repo: Repo, tmp_path: Path
) -> None:
    """Twelve commits that each add one more `frobnicate`: the row names the first and the
    newest four, counts the rest; --json lists all twelve."""
    shas = [repo.commit({"src/h.py": "frobnicate()\n" * n}, f"call {n}") for n in range(1, 13)]
    out_json = tmp_path / "landed.json"
    argv = ["landed", "-q", "--repo", str(repo.path), "--symbol", "frobnicate"]
    code, out = run_cli([*argv, "--json", str(out_json)])
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("symbol frobnicate\t")]
    shown = [f"added 1 in {sha[:12]} call {n}" for n, sha in enumerate(shas, start=1)]
    assert row.endswith("; ".join([shown[0], "... and 7 more; --json has all", *shown[-4:]])), row
    assert len(json.loads(out_json.read_text())["symbols"][0]["changes"]) == 12


def test_a_short_symbol_history_is_shown_whole(repo: Repo) -> None:
    for n in range(1, 6):
        repo.commit({"src/h.py": "frobnicate()\n" * n}, f"call {n}")
    code, out = run_cli(["landed", "-q", "--repo", str(repo.path), "--symbol", "frobnicate"])
    assert code == 0 and out.count("added 1 in ") == 5 and "more; --json has all" not in out


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


# --- symbols are whole identifiers ---


def test_symbol_inside_a_longer_name_does_not_count(repo: Repo) -> None:
    """`abs_timedelta` removed while `_abs_timedelta` stays: the claim does not hold, and
    the output says what was matched."""
    code = "def abs_timedelta(d):\n    return _abs_timedelta(d)\n\ndef _abs_timedelta(d):\n    return d\n"
    added = repo.commit({"src/t.py": code}, "add abs_timedelta")
    removed = repo.commit({"src/t.py": "def _abs_timedelta(d):\n    return d\n"}, "drop public")
    report = landed.check(repo.path, "main", [], ["abs_timedelta"])
    claim = report.symbols[0]
    assert [(c.sha, c.kind, c.net) for c in claim.changes] == [
        (added, "added", 1),
        (removed, "removed", -1),
    ]
    assert not claim.holds and report.exit_code() == 1
    code_, out = run_cli(["landed", "-q", "--repo", str(repo.path), "--symbol", "abs_timedelta"])
    assert code_ == 1
    assert "identifier abs_timedelta (whole word: not inside a longer name)" in out
    assert "not in the tree now" in out
    # its nearest valid neighbour: the private name is found, with its count
    other = landed.check(repo.path, "main", [], ["_abs_timedelta"]).symbols[0]
    assert other.holds and other.present_in == (("src/t.py", 1),)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("x = frob\n", 1),
        ("x = frob2 + frob_x + xfrob + _frob\n", 0),
        ("x = obj.frob(frob)\n", 2),
        ("x = 'frob' # frob-like\n", 2),
        ("x = éfrob + frobé\n", 0),  # Python identifiers take non-ASCII letters
    ],
)
def test_identifier_boundaries(text: str, count: int) -> None:
    assert len(landed.identifier("frob").findall(text)) == count


# --- one meaning of landed: reverts, relands, batches, shallow clones ---


def test_revert_of_a_landed_commit_is_reported(repo: Repo) -> None:
    sha = repo.commit({"src/a.py": "x = 2\n"}, "change x")
    repo.commit({"README": "r\n"}, "unrelated")
    repo.git("revert", "--no-edit", sha)
    revert = repo.git("rev-parse", "HEAD")
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert (claim.status, claim.reverted_by) == (CommitStatus.REVERTED, revert)
    code, out = run_cli(["landed", "-q", "--repo", str(repo.path), "--commit", sha])
    assert code == 1
    assert f"then reverted by {revert[:12]}" in out
    # reverting the revert lands it again
    repo.git("revert", "--no-edit", revert)
    assert landed.check(repo.path, "main", [sha], []).commits[0].holds


def test_revert_found_by_its_message_when_the_patch_differs(repo: Repo) -> None:
    sha = repo.commit({"src/a.py": "x = 2\n"}, "change x")
    repo.commit(
        {"src/a.py": "x = 1  # back\n"}, f'Revert "change x"\n\nThis reverts commit {sha[:10]}.\n'
    )
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert claim.status is CommitStatus.REVERTED


def test_an_undo_found_by_its_patch_when_the_message_says_nothing(repo: Repo) -> None:
    """The reverse patch-id of a claim is the forward one of a commit that undoes it; `-R`
    swaps git's a/ and b/ prefixes, so before the ids were taken without prefixes an undo
    with its own words was never found."""
    sha = repo.commit({"src/a.py": "x = 2\n"}, "change x")
    repo.commit({"README": "r\n"}, "unrelated")
    undo = repo.commit({"src/a.py": "x = 1\n"}, "put x back as it was")
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert (claim.status, claim.reverted_by) == (CommitStatus.REVERTED, undo)


def test_revert_of_a_cherry_pick_is_reported(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit({"src/a.py": "x = 2\n"}, "fix")
    repo.git("switch", "-q", "main")
    repo.commit({"README": "hi\n"}, "unrelated")
    repo.git("cherry-pick", sha)
    picked = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", picked)
    claim = landed.check(repo.path, "main", [sha], []).commits[0]
    assert (claim.status, claim.via) == (CommitStatus.REVERTED, picked)


def test_claims_are_answered_together(repo: Repo) -> None:
    """Several claims of every kind in one call: each gets its own verdict."""
    base = repo.git("rev-parse", "HEAD")
    repo.git("switch", "-q", "-c", "picked")
    to_pick = repo.commit({"src/p.py": "p = 1\n"}, "to pick")
    repo.git("switch", "-q", "-c", "lost", base)
    lost = repo.commit({"src/l.py": "l = 1\n"}, "lost")
    repo.git("switch", "-q", "main")
    merged = repo.commit({"src/m.py": "m = 1\n"}, "merged")
    repo.git("cherry-pick", to_pick)
    report = landed.check(repo.path, "main", [merged, to_pick, lost, base[:9]], [])
    assert [c.status for c in report.commits] == [
        CommitStatus.LANDED,
        CommitStatus.LANDED_AS,
        CommitStatus.UNLANDED,
        CommitStatus.LANDED,
    ]


def test_shallow_clone_is_refused(repo: Repo, tmp_path: Path) -> None:
    for i in range(6):
        repo.commit({"src/a.py": f"x = {i}\n"}, f"c{i}")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(shallow)],
        check=True,
        env=repo.env(),
    )
    with pytest.raises(UntrustedError, match="shallow clone"):
        landed.check(shallow, "HEAD", [], ["x"])
    assert cli.main(["landed", "--repo", str(shallow), "--symbol", "x"]) == 3
    assert cli.main(["landed", "--repo", str(repo.path), "--symbol", "x"]) == 0


def test_merge_base_from_the_walk_agrees_with_git(repo: Repo) -> None:
    """The walk finds a branch's merge base itself (no process per claim): it is git's."""
    tips = []
    for i in range(4):
        repo.git("switch", "-q", "-c", f"b{i}")
        repo.commit({f"src/b{i}.py": "1\n"}, f"b{i} 1")
        tips.append(repo.commit({f"src/b{i}.py": "2\n"}, f"b{i} 2"))
        repo.git("switch", "-q", "main")
        repo.commit({"src/a.py": f"x = {i}\n"}, f"main {i}")
        if i % 2:
            repo.git("merge", "-q", "--no-ff", "--no-edit", f"b{i - 1}")
    ref = repo.git("rev-parse", "HEAD")
    walk = landing.Walk.of(repo.path, ref, tips)
    on_ref, position = walk.reachable(ref), walk.position()
    for tip in tips:
        if tip not in on_ref:
            assert walk.merge_base(tip, on_ref, position) == repo.git("merge-base", tip, ref)


def test_symbol_that_looks_like_an_option_or_a_regex(repo: Repo) -> None:
    repo.commit({"src/r.py": "x = a.b + c_d\n"}, "add")
    report = landed.check(repo.path, "main", [], ["-x", "a.b", "c"])
    assert [s.holds for s in report.symbols] == [False, True, False]
    assert report.symbols[1].present_in == (("src/r.py", 1),)


def test_a_replace_graft_does_not_land_a_commit(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git replace --graft` makes main's history hold a feature commit for git itself;
    fidelity judges the commits as they are, whatever the caller's GIT_NO_REPLACE_OBJECTS."""
    repo.git("switch", "-q", "-c", "feature")
    sha = repo.commit({"src/f.py": "f = 1\n"}, "feature work")
    repo.git("switch", "-q", "main")
    tip = repo.commit({"README": "hi\n"}, "main moves on")
    repo.git("replace", "--graft", tip, repo.git("rev-parse", "HEAD~1"), sha)
    repo.git("merge-base", "--is-ancestor", sha, "main")  # git, by default, is fooled
    for value in (None, "1"):
        if value:
            monkeypatch.setenv("GIT_NO_REPLACE_OBJECTS", value)
        report = landed.check(repo.path, "main", [sha], [])
        assert report.commits[0].status is CommitStatus.UNLANDED, value
        assert report.exit_code() == 1


def test_a_symbol_in_a_file_whose_name_holds_a_line_break_is_found(repo: Repo) -> None:
    """git's batch reads such a name as two: every file's contents were misread, and the
    symbol was "not in the tree now" (exit 1) though it stood in two files."""
    repo.commit({"odd\nname.py": "def frobnicate():\n    pass\n", "plain.py": "frobnicate()\n"})
    claim = landed.check(repo.path, "main", [], ["frobnicate"]).symbols[0]
    assert sorted(claim.present_in) == [("odd\nname.py", 1), ("plain.py", 1)], claim
