"""fidelity.git.log on one real history: a fix with trailers, a feature branch (a symbol, a
binary file) merged with --no-ff while main moved on. Each query is checked against what the
history holds; an unknown revision is a GitError naming the command; and a user's textconv
driver never rewrites the patches that patch ids and symbol searches read."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import Repo, hostile_textconv, run_git

from fidelity.git import log
from fidelity.git.command import GitError

FIX_MESSAGE = "fix a\n\nWhy it was wrong.\n\nFixes: #1\nSigned-off-by: Ada <ada@example.invalid>\n"


@pytest.fixture
def h(make_repo) -> dict[str, str]:
    """Commit shas by name, and "repo" -> the repository's path."""
    repo = make_repo("r")
    shas = {"base": repo.commit({"a.txt": "a\n", "doc.md": "doc\n"}, "base")}
    shas["fix"] = repo.commit({"a.txt": "a fixed\n"}, FIX_MESSAGE)
    repo.git("checkout", "-q", "-b", "feature")
    shas["feat"] = repo.commit({"f.py": "def gizmo():\n    return 1\n"}, "add gizmo")
    shas["bin"] = repo.commit({"img.bin": b"\0\1\2"}, "binary")
    repo.git("checkout", "-q", "main")
    shas["docs"] = repo.commit({"doc.md": "doc 2\n"}, "docs")
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    shas["merge"] = repo.git("rev-parse", "HEAD")
    shas["repo"] = str(repo.path)
    return shas


def R(h: dict[str, str]) -> Path:
    return Path(h["repo"])


def test_ancestry_and_shallow_clones(h: dict[str, str], tmp_path: Path) -> None:
    assert log.is_ancestor(R(h), h["base"], h["merge"])
    assert log.is_ancestor(R(h), h["fix"], h["fix"]), "a commit is its own ancestor"
    assert not log.is_ancestor(R(h), h["feat"], h["docs"])
    with pytest.raises(GitError, match="merge-base --is-ancestor"):
        log.is_ancestor(R(h), "0" * 40, h["fix"])
    assert not log.is_shallow(R(h))
    run_git(tmp_path, "clone", "-q", "--depth", "1", f"file://{h['repo']}", "shallow")
    assert log.is_shallow(tmp_path / "shallow")


def test_log_commits_and_touching_list_subjects(h: dict[str, str]) -> None:
    assert log.log_commits(R(h), ["main"], ["f.py"]) == [(h["feat"], "add gizmo")]
    every = {sha for sha, _ in log.log_commits(R(h), ["main"])}
    plain = {sha for sha, _ in log.log_commits(R(h), ["main"], no_merges=True)}
    assert every - plain == {h["merge"]} and len(plain) == 5
    assert log.touching(R(h), "main", [h["base"]], ["doc.md"]) == [(h["docs"], "docs")]
    assert {s for s, _ in log.touching(R(h), "main", [h["fix"]], [])} == {
        h["feat"],
        h["bin"],
        h["docs"],
    }
    with pytest.raises(GitError):
        log.log_commits(R(h), ["nope"])


def test_grep_files_finds_fixed_strings_in_a_tree(h: dict[str, str]) -> None:
    assert log.grep_files(R(h), "main", "gizmo(") == ["f.py"]
    assert log.grep_files(R(h), h["base"], "gizmo") == []
    with pytest.raises(GitError, match="git grep 'x' nope failed"):
        log.grep_files(R(h), "nope", "x")


def test_trailers_and_messages(h: dict[str, str]) -> None:
    want = [("Fixes", "#1"), ("Signed-off-by", "Ada <ada@example.invalid>")]
    assert log.parse_trailers(R(h), FIX_MESSAGE.encode()) == want
    after_divider = b"s\n\nbody\n---\nnot a diff\n\nFixes: #2\n"
    assert log.parse_trailers(R(h), after_divider) == [("Fixes", "#2")], "--no-divider"
    assert log.commit_message(R(h), h["fix"]) == FIX_MESSAGE.encode() + b"\n"
    assert log.log_trailers(R(h), [f"{h['base']}..{h['fix']}"]) == [(h["fix"], "fix a", want)]
    found = log.messages(R(h), [h["fix"], h["base"]])
    assert found[h["fix"]].startswith(FIX_MESSAGE) and set(found) == {h["fix"], h["base"]}
    assert log.messages(R(h), []) == {}
    with pytest.raises(GitError):
        log.commit_message(R(h), "nope")


def test_a_subject_holding_the_field_separator_is_read_alone(make_repo) -> None:
    repo = make_repo("odd")
    base = repo.commit({"x": "1"}, "root")
    odd = repo.commit({"x": "2"}, "odd \x1f subject\n\nKey: value\n")
    found = log.log_trailers(repo.path, [f"{base}..{odd}"])
    assert found == [(odd, "odd \x1f subject", [("Key", "value")])]


def test_paths_in_a_tree_and_the_size_of_a_change(h: dict[str, str]) -> None:
    assert log.path_in_tree(R(h), "main", "f.py") and not log.path_in_tree(R(h), "main", "no")
    assert log.path_in_tree(R(h), h["base"], "a.txt/") is True
    assert log.path_in_tree(R(h), None, "img.bin") and not log.path_in_tree(R(h), None, "no")
    assert log.diff_size(R(h), h["base"], "feature") == (3, 4), "a.txt 2, f.py 2, binary 0"
    with pytest.raises(GitError):
        log.diff_size(R(h), "nope", "main")


def test_merge_bases_parents_graph_and_descendants(h: dict[str, str], make_repo) -> None:
    assert log.merge_bases(R(h), [h["feat"], h["docs"]]) == [h["fix"]]
    assert log.merge_bases(R(h), [h["feat"]]) == [h["feat"]]
    assert log.bases_against(R(h), h["bin"], [h["docs"]]) == [h["fix"]]
    assert log.parents(R(h), h["merge"]) == [h["docs"], h["bin"]]
    graph = log.graph(R(h), ["main"], [h["fix"]])
    order = [sha for sha, _ in graph]
    assert order[0] == h["merge"] and set(order) == {h["merge"], h["docs"], h["bin"], h["feat"]}
    assert order.index(h["bin"]) < order.index(h["feat"]), "children before parents"
    assert dict(graph)[h["feat"]] == [h["fix"]]
    assert log.descendants(R(h), h["fix"], "main") == {h["feat"], h["bin"], h["docs"], h["merge"]}
    repo = Repo(R(h))
    repo.git("checkout", "-q", "--orphan", "alone")
    alone = repo.commit({"z": "z"}, "unrelated")
    assert log.merge_bases(R(h), [alone, h["fix"]]) == []
    assert log.bases_against(R(h), alone, [h["fix"]]) == []
    with pytest.raises(GitError):
        log.parents(R(h), "nope")


def test_unpushed_is_what_no_remote_branch_holds_oldest_first(h: dict[str, str]) -> None:
    repo = Repo(R(h))
    repo.git("update-ref", "refs/remotes/origin/main", h["fix"])
    pushed = log.unpushed(R(h), "main", "origin")
    assert set(pushed) == {h["feat"], h["bin"], h["docs"], h["merge"]} and pushed[-1] == h["merge"]
    assert log.unpushed(R(h), h["fix"], "origin") == []


def test_last_change_and_renames(h: dict[str, str]) -> None:
    assert log.last_change(R(h), "main", "a.txt") == h["fix"]
    assert log.last_change(R(h), "main", "never.txt") is None
    repo = Repo(R(h))
    repo.git("mv", "a.txt", "moved.txt")
    assert log.renamed_from(R(h), "HEAD", None, "moved.txt") == "a.txt", "staged rename"
    moved = repo.commit(message="move")
    assert log.renamed_from(R(h), h["merge"], moved, "moved.txt") == "a.txt"
    assert log.renamed_from(R(h), h["merge"], moved, "f.py") is None
    assert log.renamed_from(R(h), "nope", moved, "moved.txt") is None


def test_changed_paths_and_commit_paths(h: dict[str, str]) -> None:
    plain = log.changed_paths(R(h), "main", [h["fix"]])
    assert plain == {
        h["feat"]: frozenset({"f.py"}),
        h["bin"]: frozenset({"img.bin"}),
        h["docs"]: frozenset({"doc.md"}),
    }
    with_merges = log.changed_paths(R(h), "main", [h["fix"]], merges=True)
    assert with_merges[h["merge"]] == frozenset(), "a clean merge changes nothing of its own"
    assert log.commit_paths(R(h), [h["merge"], h["feat"]]) == {
        h["merge"]: frozenset({"f.py", "img.bin"}),
        h["feat"]: frozenset({"f.py"}),
    }
    assert log.commit_paths(R(h), []) == {}


def test_patch_ids_see_a_cherry_pick_and_a_revert(h: dict[str, str]) -> None:
    repo = Repo(R(h))
    repo.git("checkout", "-q", "-b", "picks", h["base"])
    repo.git("cherry-pick", h["feat"])
    picked = repo.git("rev-parse", "HEAD")
    repo.git("revert", "--no-edit", picked)
    undone = repo.git("rev-parse", "HEAD")
    ids = log.commit_patch_ids(R(h), [h["feat"], picked, undone, h["merge"]])
    assert ids[h["feat"]] == ids[picked] and h["merge"] not in ids, "merges have none"
    reverse = log.commit_patch_ids(R(h), [picked], reverse=True)
    assert reverse[picked] == ids[undone]
    assert log.commit_patch_ids(R(h), []) == {}
    assert log.revert_messages(R(h), "picks", [h["base"]]) == [(undone, [picked])]
    forward, backward, paths = log.pair_diffs(R(h), [(h["fix"], h["feat"])])
    assert forward == {h["feat"]: ids[h["feat"]]} and backward[h["feat"]] == ids[undone]
    assert paths == {h["feat"]: frozenset({"f.py"})}
    assert log.pair_diffs(R(h), []) == ({}, {}, {})


def test_symbol_changes_match_added_or_removed_lines(h: dict[str, str]) -> None:
    found = log.symbol_changes(R(h), "main", ["gizmo", "a.b("])
    assert [(sha, subject) for sha, subject, _ in found] == [(h["feat"], "add gizmo")]
    assert b"+def gizmo():" in found[0][2]
    assert log.symbol_changes(R(h), "main", ["-nothing-like-it"]) == []


def test_a_users_textconv_driver_does_not_rewrite_patches(
    h: dict[str, str], tmp_path: Path
) -> None:
    marker = hostile_textconv(Repo(R(h)), tmp_path)
    assert h["feat"] in log.commit_patch_ids(R(h), [h["feat"]])
    assert [c[0] for c in log.symbol_changes(R(h), "main", ["gizmo"])] == [h["feat"]]
    assert not marker.exists()
