"""No merge route loses a keyed record row unseen: `git merge -X ours`, `git merge -s ours`
(with the record driver configured) and a rebase whose conflict is resolved with `git
checkout --theirs` each drop a row; each is stopped before it leaves the machine (the hook
git runs exits non-zero naming the row and what to do) and by CI's range check
(`preflight --from-ref`). Real git, the hooks `fidelity install-hooks` writes, a bare
remote to push to."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import Repo, preflight_cli, run_cli, run_git

PYPROJECT = """\
[[tool.fidelity.records]]
path = "records/r.md"
key = "row"

[tool.fidelity.docs]
paths = ["records/r.md"]

[[tool.fidelity.docs.page]]
path = "records/r.md"
keyed_tables = { key = "row" }

[tool.fidelity.preflight]
gates = ["docs", "rows"]
"""
HEAD = "# Records\n\n## Rows\n\n| row | value |\n|---|---|\n"
ROWS = ["a | 1", "b | 2", "c | 3", "d | 4", "e | 5"]


def table(*rows: str) -> str:
    return HEAD + "".join(f"| {r} |\n" for r in rows)


def inserted(row: str, *more: str) -> str:
    """The rows with `row` (and `more`) in the middle of the table, after c."""
    return table(*ROWS[:3], row, *more, *ROWS[3:])


def git(repo: Repo, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """git as a user runs it: hooks on (the helpers turn them off)."""
    return subprocess.run(
        ["git", *args],
        cwd=repo.path,
        env={**repo.env(), "GIT_EDITOR": "true"},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture
def forked(tmp_path: Path) -> Repo:
    """main and `side` each insert a row after c since the base (m and s), both pushed to a
    bare `origin`; the hooks and the record driver installed, the driver not yet assigned to
    any file (.gitattributes)."""
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(tmp_path / "origin.git"))
    repo = Repo(tmp_path / "work")
    repo.commit({"pyproject.toml": PYPROJECT, "records/r.md": table(*ROWS)}, "base")
    repo.git("checkout", "-q", "-b", "side")
    repo.commit({"records/r.md": inserted("s | 9")}, "side adds s")
    repo.git("checkout", "-q", "main")
    repo.commit({"records/r.md": inserted("m | 8")}, "main adds m")
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    repo.git("push", "-q", "origin", "main", "side")
    code, out = run_cli(["install-hooks", "--repo", str(repo.path)])
    assert code == 0, out
    return repo


def remote(repo: Repo, branch: str) -> str:
    return repo.git("ls-remote", "origin", f"refs/heads/{branch}").split()[0]


def assert_caught(done: subprocess.CompletedProcess[str], row: str, todo: str) -> None:
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert f"row {row!r}" in said, said
    assert todo in said, said


@pytest.mark.parametrize(
    ("how", "row"), [(["-X", "ours"], "s"), (["-s", "ours"], "s"), (["-X", "theirs"], "m")]
)
def test_an_automatic_merge_that_drops_a_row_is_stopped_at_the_merge(
    forked: Repo, how: list[str], row: str
) -> None:
    """git merges on its own and runs pre-merge-commit before it writes MERGE_HEAD; the hook
    reads the heads from GITHEAD_<sha>. `-s ours` with the driver assigned: the driver never
    runs, since the strategy takes our tree whole."""
    repo = forked
    if how == ["-s", "ours"]:
        repo.commit({".gitattributes": "records/*.md merge=fidelity-records\n"}, "driver")
    before = repo.git("rev-parse", "HEAD")
    done = git(repo, "merge", *how, "--no-edit", "side")
    assert_caught(done, row, "git merge --abort")
    assert "added this row, the merge lost it" in done.stdout + done.stderr
    assert repo.git("rev-parse", "HEAD") == before, "nothing committed"


def test_the_same_merge_keeping_every_row_lands(forked: Repo) -> None:
    repo = forked
    repo.commit({".gitattributes": "records/*.md merge=fidelity-records\n"}, "driver")
    done = git(repo, "merge", "-X", "ours", "--no-edit", "side")  # the driver merges rows
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| s | 9 |" in (repo.path / "records/r.md").read_text()


@pytest.mark.parametrize("how", [["-X", "ours"], ["-s", "ours"]])
def test_a_merge_past_the_hook_is_stopped_at_push_and_in_ci(forked: Repo, how: list[str]) -> None:
    repo = forked
    done = git(repo, "merge", "--no-verify", *how, "--no-edit", "side")
    assert done.returncode == 0, done.stdout + done.stderr
    pushed = remote(repo, "main")
    done = git(repo, "push", "origin", "main")
    assert_caught(done, "s", "the merge lost it")
    assert remote(repo, "main") == pushed, "nothing pushed"
    code, out = preflight_cli(repo, "--from-ref", "origin/main", "--to-ref", "HEAD")
    assert code == 1 and "row 's'" in out, out


def rebase_dropping(repo: Repo, side: str = "--theirs") -> str:
    """Rebase side onto main, the conflict resolved to one side's file: `--theirs` while
    rebasing is the commit being replayed (no row m), `--ours` is main's (no row s). What
    the rebase printed (the post-rewrite hook's words among it)."""
    repo.git("checkout", "-q", "side")
    done = git(repo, "rebase", "main")
    assert done.returncode == 1 and "CONFLICT" in done.stdout + done.stderr, done.stdout
    repo.git("checkout", side, "records/r.md")
    repo.git("add", "records/r.md")
    done = git(repo, "rebase", "--continue")
    assert done.returncode == 0, done.stdout + done.stderr  # git ignores post-rewrite's code
    gone = "| m |" if side == "--theirs" else "| s |"
    assert gone not in (repo.path / "records/r.md").read_text()
    return done.stdout + done.stderr


def rebase_dropping_m(repo: Repo) -> None:
    rebase_dropping(repo, "--theirs")


def test_a_rebase_that_drops_a_row_is_stopped_at_push_and_in_ci(forked: Repo) -> None:
    repo = forked
    rebase_dropping_m(repo)
    pushed = remote(repo, "side")
    done = git(repo, "push", "--force", "origin", "side")
    assert_caught(done, "m", "Removes-Row: m")
    assert remote(repo, "side") == pushed, "nothing pushed"
    for start in ("main", "origin/main"):
        code, out = preflight_cli(repo, "--from-ref", start, "--to-ref", "side")
        assert code == 1 and "row 'm'" in out and "side adds s" in out, (start, out)


def test_a_rebase_pushed_as_a_new_branch_is_stopped(forked: Repo) -> None:
    repo = forked
    rebase_dropping_m(repo)
    repo.git("branch", "-q", "-m", "side", "side2")
    done = git(repo, "push", "origin", "side2")
    assert_caught(done, "m", "Removes-Row: m")
    assert repo.git("ls-remote", "origin", "refs/heads/side2") == ""


def test_a_rebase_that_keeps_every_row_is_pushed(forked: Repo) -> None:
    repo = forked
    repo.git("checkout", "-q", "side")
    assert git(repo, "rebase", "main").returncode == 1
    repo.write({"records/r.md": inserted("m | 8", "s | 9")})
    repo.git("add", "records/r.md")
    assert git(repo, "rebase", "--continue").returncode == 0
    done = git(repo, "push", "--force", "origin", "side")
    assert done.returncode == 0, done.stdout + done.stderr
    code, out = preflight_cli(repo, "--from-ref", "origin/main", "--to-ref", "side")
    assert code == 0, out


@pytest.mark.parametrize(
    ("rows", "message", "code"),
    [
        (["a | 1", "c | 3", "m | 8", "d | 4", "e | 5"], "drop b", 0),  # only a row deleted
        (["a | 1", "c | 7", "m | 8", "d | 4", "e | 5"], "drop b, change c", 1),
        (["a | 1", "c | 7", "m | 8", "d | 4", "e | 5"], "drop b\n\nRemoves-Row: b\n", 0),
        (["a | 1", "c | 7", "m | 8", "d | 4", "e | 5"], "drop b\n\nRemoves-Row: x\n", 1),
    ],
)
def test_a_commit_that_removes_a_row_removes_it_deliberately_when_it_says_so(
    forked: Repo, rows: list[str], message: str, code: int
) -> None:
    """A commit whose whole change to the record is deleting rows meant it; any other commit
    that loses a row names it in a `Removes-Row:` trailer, or the row counts as lost."""
    repo = forked
    repo.write({"records/r.md": table(*rows)})
    repo.git("add", "-A")
    done = git(repo, "commit", "-q", "-F", "-", stdin=message)
    assert done.returncode == 0, done.stdout + done.stderr  # no merge: the commit hooks pass
    got, out = preflight_cli(repo, "--from-ref", "origin/main", "--to-ref", "HEAD")
    assert got == code, out
    done = git(repo, "push", "origin", "main")
    assert (done.returncode == 0) == (code == 0), done.stdout + done.stderr
    if code:
        assert "row 'b'" in out and "Removes-Row: b" in out, out


def record(*rows: str, prose: str = "") -> str:
    return "| row | v |\n|---|---|\n" + "".join(f"| {r} |\n" for r in rows) + prose


@pytest.mark.parametrize(
    ("history", "found"),
    [
        ([["a | 1", "b | 2"], ["a | 1"]], []),  # only deleted: meant
        ([["a | 1", "b | 2"], ["a | 5"]], [("b", 1)]),  # deleted while changing a
        ([["a | 1", "b | 2"], ["a | 1", "c | 3"]], [("b", 1)]),  # deleted while adding c
        ([["a | 1"], ["a | 1", "n | 2"], ["a | 5"]], [("n", 2)]),  # added in the range, lost
        ([["a | 1", "b | 2"], ["a | 5"], ["a | 5", "b | 2"]], []),  # lost, then back
        ([["a | 1", "b | 2"], ["a | 1"], ["a | 1", "b | 2"], ["a | 9"]], [("b", 3)]),
        ([["a | 1", "b | 2"], None], []),  # the record deleted
        ([["a | 1", "b | 2"], ["a | 1", "b | 2"], ["b | 2", "a | 1"]], []),  # moved, kept
        ([["a | 1", "b | 2"], ["a | 1", ("b | 2", "x")]], []),  # another table holds b
    ],
)
def test_the_lost_row_rules(history: list, found: list[tuple[str, int]]) -> None:
    """A linear history c0 (the base) .. cN; each found row with the commit that lost it."""
    from fidelity.recordmerge.lost import Commit, lost

    texts: dict[str, str | None] = {}
    for n, rows in enumerate(history):
        if rows is None:
            texts[f"c{n}"] = None
        elif rows and isinstance(rows[-1], tuple):
            moved, heading = rows[-1]
            texts[f"c{n}"] = record(*rows[:-1], prose=f"\n## {heading}\n\n" + record(moved))
        else:
            texts[f"c{n}"] = record(*rows)
    commits = [Commit(f"c{n}", (f"c{n - 1}",)) for n in range(len(history) - 1, 0, -1)]
    got = lost(commits, "c0", f"c{len(history) - 1}", texts, "row")
    assert [(item.key, int(item.by[1:])) for item in got] == found


def test_a_row_lost_at_a_merge_is_left_to_the_merge_audit() -> None:
    from fidelity.recordmerge.lost import Commit, lost

    texts = {"b": record("a | 1"), "s": record("a | 1", "s | 2"), "m": record("a | 1")}
    commits = [Commit("m", ("b", "s")), Commit("s", ("b",))]
    assert lost(commits, "b", "m", texts, "row") == []


def test_a_deletion_that_also_edits_prose_is_not_only_a_deletion() -> None:
    from fidelity.recordmerge.lost import only_deletes

    before = record("a | 1", "b | 2", prose="\nNotes.\n")
    assert only_deletes(before, record("a | 1", prose="\nNotes.\n"), "row")
    assert not only_deletes(before, record("a | 1", prose="\nOther notes.\n"), "row")
    assert not only_deletes(before, before, "row"), "nothing deleted"


def test_git_revert_of_the_commit_that_added_a_row_removes_it_deliberately(forked: Repo) -> None:
    repo = forked
    added = repo.commit({"records/r.md": inserted("m | 8", "n | 7").replace("c | 3", "c | 6")})
    repo.git("push", "-q", "origin", "main")
    repo.git("revert", "--no-edit", added)  # takes n out and puts c back: not only deletes
    code, out = preflight_cli(repo, "--from-ref", "origin/main", "--to-ref", "HEAD")
    assert code == 0, out
    repo.git("reset", "-q", "--hard", "origin/main")
    repo.commit({"records/r.md": inserted("m | 8")}, "This reverts commit " + "0" * 40 + ".")
    code, out = preflight_cli(repo, "--from-ref", "origin/main", "--to-ref", "HEAD")
    assert code == 1 and "row 'n'" in out, "a commit that did not add n"


@pytest.mark.parametrize(("side", "row"), [("--theirs", "m"), ("--ours", "s")])
def test_post_rewrite_names_the_row_a_rebase_lost_as_it_ends(
    forked: Repo, side: str, row: str
) -> None:
    """`--ours` drops the replayed commit's own row, which then never is in the pushed
    history: only this hook sees it."""
    said = rebase_dropping(forked, side)
    assert "the rebase lost record rows" in said and f"row {row!r}" in said, said
    assert "git reset --hard ORIG_HEAD" in said


def test_post_rewrite_is_quiet_on_a_rebase_that_keeps_every_row(forked: Repo) -> None:
    repo = forked
    repo.git("checkout", "-q", "side")
    assert git(repo, "rebase", "main").returncode == 1
    repo.write({"records/r.md": inserted("m | 8", "s | 9")})
    repo.git("add", "records/r.md")
    done = git(repo, "rebase", "--continue")
    assert done.returncode == 0 and "lost record rows" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old_parent", "old", "new_parent", "new", "found"),
    [
        (["a"], ["a", "s"], ["a", "m"], ["a", "m", "s"], []),  # both kept
        (["a"], ["a", "s"], ["a", "m"], ["a", "s"], ["m"]),  # --theirs
        (["a"], ["a", "s"], ["a", "m"], ["a", "m"], ["s"]),  # --ours
        (["a", "b"], ["a"], ["a", "b", "m"], ["a", "m"], []),  # replays a deletion
        (["a", "b"], ["a", "s"], ["a", "m"], ["a", "m", "s"], []),  # b was gone upstream
    ],
)
def test_the_rewrite_rules(
    old_parent: list[str], old: list[str], new_parent: list[str], new: list[str], found: list[str]
) -> None:
    from fidelity.recordmerge.lost import rewrite_losses

    t = [record(*(f"{k} | 1" for k in rows)) for rows in (old_parent, old, new_parent, new)]
    assert [k for k, _ in rewrite_losses(t[0], t[1], t[2], t[3], "row")] == found


def test_squashed_commits_are_judged_together() -> None:
    from fidelity.preflight.rewritten import pairs

    text = "o1 n1\no2 n2 extra\no3 n2\n"
    assert pairs(text) == [(("o1",), "n1"), (("o2", "o3"), "n2")]
