"""The rows gate: a merge made without the record driver (a web merge, "keep ours" in a
conflict editor) that loses, duplicates or rewrites a keyed record row is caught, in a merge
waiting for its commit (--staged), in HEAD (--all) and in a range (--from-ref/--to-ref).
Real repositories, real `git merge`; the audit's rules as data."""

from __future__ import annotations

import subprocess

import pytest
from support import Repo, preflight_cli, run_git

from fidelity.recordmerge.audit import Step, Version, audit, duplicates

PYPROJECT = """\
[[tool.fidelity.records]]
path = "records/r.md"
key = "row"
commit_column = "commit"

[tool.fidelity.preflight]
gates = ["rows"]
"""
HEAD = "# Records\n\n## Rows\n\n| row | value | commit |\n|---|---|---|\n"


def table(*rows: str) -> str:
    return HEAD + "".join(f"| {r} |\n" for r in rows)


@pytest.fixture
def forked(make_repo) -> tuple[Repo, str]:
    """main and `side` each add a row at the table's end since the base: a conflict for
    git's text merge, which no driver is configured to resolve here."""
    repo = make_repo("records")
    base = repo.commit(
        {"pyproject.toml": PYPROJECT, "records/r.md": table("a | 1 | x", "b | 2 | x")}, "base"
    )
    repo.git("checkout", "-q", "-b", "side")
    repo.commit({"records/r.md": table("a | 1 | x", "b | 2 | x", "s | 3 | x")}, "side adds s")
    repo.git("checkout", "-q", "main")
    repo.commit({"records/r.md": table("a | 1 | x", "b | 2 | x", "m | 4 | x")}, "main adds m")
    return repo, base


def merge_with(repo: Repo, text: str) -> None:
    """Merge side into main the way a tool without the driver does, resolving to text."""
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "side"],
        cwd=repo.path,
        env=repo.env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "CONFLICT" in done.stdout, "git's text merge conflicts"
    repo.write({"records/r.md": text})
    repo.git("add", "records/r.md")


def test_keep_ours_loses_a_row_and_every_road_catches_it(forked: tuple[Repo, str]) -> None:
    repo, _ = forked
    before = repo.git("rev-parse", "HEAD")
    merge_with(repo, table("a | 1 | x", "b | 2 | x", "m | 4 | x"))  # "keep ours"
    code, out = preflight_cli(repo, "--staged")
    assert code == 1, out
    assert "row 's' under 'Rows': MERGE_HEAD" in out and "added this row, the merge lost it" in out
    repo.git("commit", "-q", "--no-edit")
    for args in (["--all"], ["--from-ref", before, "--to-ref", "HEAD"]):
        code, out = preflight_cli(repo, *args)
        assert code == 1, (args, out)
        assert "row 's'" in out and "the merge lost it" in out, args


def test_a_merge_that_keeps_every_row_holds(forked: tuple[Repo, str]) -> None:
    repo, _ = forked
    before = repo.git("rev-parse", "HEAD")
    merge_with(repo, table("a | 1 | x", "b | 2 | x", "m | 4 | x", "s | 3 | x"))
    code, out = preflight_cli(repo, "--staged")
    assert code == 0, out
    assert "every row kept" in out
    repo.git("commit", "-q", "--no-edit")
    for args in (["--all"], ["--from-ref", before, "--to-ref", "HEAD"]):
        code, out = preflight_cli(repo, *args)
        assert code == 0, (args, out)


@pytest.mark.parametrize(
    ("resolution", "why"),
    [
        (["a | 1 | x", "b | 2 | x", "m | 4 | x", "s | 3 | x", "s | 3 | x"], "is on 2 rows"),
        (["a | 9 | x", "b | 2 | x", "m | 4 | x", "s | 3 | x"], "no parent changed this row"),
        (["a | 1 | x", "m | 4 | x", "s | 3 | x"], "every parent kept this row, the merge lost it"),
        (["a | 1 | x", "b | 2 | x", "m | 4 | x", "s | 3 | x", "z | 0 | x"], "in no parent"),
    ],
)
def test_a_resolution_that_rewrites_rows_is_caught(
    forked: tuple[Repo, str], resolution: list[str], why: str
) -> None:
    repo, _ = forked
    merge_with(repo, table(*resolution))
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and why in out, out


def test_a_merge_outside_the_range_is_not_judged(forked: tuple[Repo, str]) -> None:
    repo, _ = forked
    merge_with(repo, table("a | 1 | x", "b | 2 | x", "m | 4 | x"))
    repo.git("commit", "-q", "--no-edit")
    merged = repo.git("rev-parse", "HEAD")
    repo.commit({"notes.txt": "later\n"}, "later")
    code, out = preflight_cli(repo, "--from-ref", merged, "--to-ref", "HEAD")
    assert code == 0, out  # the range brings no merge, and touches no record


def test_an_unknown_range_end_is_a_usage_error_never_a_pass(forked: tuple[Repo, str]) -> None:
    repo, _ = forked
    code, out = preflight_cli(repo, "--from-ref", "nope", "--to-ref", "HEAD")
    assert code == 2 and "fetch-depth: 0" in out
    code, out = preflight_cli(repo, "--from-ref", "HEAD")
    assert code == 2 and "go together" in out


def test_the_judged_commit_is_read_from_git_not_the_checkout(forked: tuple[Repo, str]) -> None:
    """A range judges its last commit even when the checkout holds something else."""
    repo, base = forked
    repo.write({"records/r.md": table("a | 1 | x", "a | 1 | x")})  # duplicated, not committed
    code, out = preflight_cli(repo, "--from-ref", base, "--to-ref", "HEAD")
    assert code == 0, out
    assert run_git(repo.path, "status", "--porcelain") == "M records/r.md", "checkout untouched"


ROWS = ["| row | v |", "|---|---|"]


def text(*rows: str) -> str:
    return "\n".join([*ROWS, *(f"| {r} |" for r in rows)]) + "\n"


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged", "found"),
    [
        (["a | 1"], ["a | 1", "b | 2"], ["a | 1", "c | 3"], ["a | 1", "b | 2", "c | 3"], []),
        (["a | 1"], ["a | 1", "b | 2"], ["a | 1", "c | 3"], ["a | 1", "b | 2"], ["'c'"]),
        (["a | 1", "b | 2"], ["a | 1"], ["a | 1", "b | 2"], ["a | 1"], []),
        (["a | 1", "b | 2"], ["a | 1"], ["a | 1", "b | 2"], ["a | 1", "b | 2"], ["deleted"]),
        (["a | 1"], ["a | 5"], ["a | 1"], ["a | 1"], ["undid the change"]),
        (["a | 1"], ["a | 5"], ["a | 6"], ["a | 7"], []),  # both changed: a person chose
        (["a | 1"], ["a | 5"], ["a | 6"], [], ["different ways"]),
        (["a | 1"], ["a | 5"], [], [], []),  # changed on one side, deleted on the other
        (["a | 1"], ["a |  1"], ["a | 1"], ["a | 1"], []),  # spacing is not a change
        (["a | 1"], ["a | 1"], ["a | 1"], ["a | 1", "a | 1"], ["is on 2 rows"]),
    ],
)
def test_the_audit_rules(
    base: list[str], ours: list[str], theirs: list[str], merged: list[str], found: list[str]
) -> None:
    step = Step(Version("theirs", text(*theirs)), (Version("the base", text(*base)),))
    problems = audit(Version("ours", text(*ours)), [step], text(*merged), ["row"])
    assert len(problems) == len(found), problems
    for problem, needle in zip(problems, found, strict=True):
        assert needle in problem.message


def test_duplicates_name_every_line() -> None:
    (problem,) = duplicates(text("a | 1", "b | 2", "a | 3"), ["row"])
    assert problem.line == 5 and "lines 3, 5" in problem.message


def merge_in(
    repo: Repo, *branches: str, no_commit: bool = True
) -> subprocess.CompletedProcess[str]:
    argv = ["git", "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "--no-edit"]
    return subprocess.run(
        [*argv, *(["--no-commit"] if no_commit else []), *branches],
        cwd=repo.path,
        env=repo.env(),
        capture_output=True,
        text=True,
    )


def rows_table(**rows: str) -> str:
    return table(*(f"{k} | {v} | x" for k, v in rows.items()))


FILLER = {f"f{i}": "f" for i in range(4)}  # rows apart, so git's text merge is clean


def test_a_criss_cross_merge_is_judged_against_every_base(make_repo) -> None:
    """Two merge bases: against one the merge looks like a conflict resolved, against the
    other it undoes a change. Whichever git lists first, it is caught."""
    for order in ("b1 first", "b2 first"):
        repo: Repo = make_repo(f"criss-{order[:2]}")
        repo.commit(
            {"pyproject.toml": PYPROJECT, "records/r.md": rows_table(k1="old", **FILLER, k2="x")}
        )
        branches = [("b1", "new", "x"), ("b2", "old", "y")]
        for name, k1, k2 in branches if order == "b1 first" else branches[::-1]:
            repo.git("checkout", "-q", "-b", name, "main")
            repo.commit({"records/r.md": rows_table(k1=k1, **FILLER, k2=k2)}, name)
        b1 = repo.git("rev-parse", "b1")  # each side merges the other's tip: a criss-cross
        repo.git("checkout", "-q", "b1")
        assert merge_in(repo, "b2", no_commit=False).returncode == 0
        p1 = repo.git("rev-parse", "HEAD")
        repo.git("checkout", "-q", "b2")
        assert merge_in(repo, b1, no_commit=False).returncode == 0
        p2 = repo.git("rev-parse", "HEAD")
        repo.git("checkout", "-q", "-b", "final", p1)
        repo.commit({"records/r.md": rows_table(k1="newer", **FILLER, k2="y")}, "newer")
        assert len(repo.git("merge-base", "--all", "final", p2).split()) == 2, order
        merge_in(repo, p2)
        repo.write({"records/r.md": rows_table(k1="new", **FILLER, k2="y")})  # undo "newer"
        repo.git("add", "-A")
        code, out = preflight_cli(repo, "--staged")
        assert code == 1 and "undid the change" in out, (order, out)


def test_an_octopus_merge_goes_pairwise(make_repo) -> None:
    repo: Repo = make_repo("octopus")
    repo.commit({"pyproject.toml": PYPROJECT, "records/r.md": rows_table(a="1", **FILLER, k="old")})
    repo.git("checkout", "-q", "-b", "x")
    repo.commit({"records/r.md": rows_table(a="1", x1="xx", **FILLER, k="old")}, "x")
    repo.git("checkout", "-q", "main")
    repo.commit({"records/r.md": rows_table(a="1", **FILLER, k="new")}, "main: new")
    repo.git("checkout", "-q", "-b", "y")
    repo.commit({"records/r.md": rows_table(a="1", **FILLER, k="newer")}, "y: newer")
    repo.git("checkout", "-q", "main")
    repo.commit({"o.txt": "o\n"}, "main moves on")
    assert merge_in(repo, "x", "y").returncode == 0
    good = rows_table(a="1", x1="xx", **FILLER, k="newer")
    assert (repo.path / "records/r.md").read_text() == good, "git's octopus result"
    assert preflight_cli(repo, "--staged")[0] == 0
    repo.write({"records/r.md": rows_table(a="1", x1="xx", **FILLER, k="old")})
    repo.git("add", "-A")
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and "row 'k'" in out, out


def test_an_octopus_merge_judges_each_head_against_the_merge_so_far(make_repo) -> None:
    """`y` branched from `x`'s first commit and set row r back: its base is that commit,
    which the merge so far holds, not main's. Against main alone y's row looks untouched,
    and taking x's value back would pass (red with the bases taken against main only)."""
    repo: Repo = make_repo("octopus-shared")
    repo.commit({"pyproject.toml": PYPROJECT, "records/r.md": rows_table(r="old", **FILLER, k="1")})
    repo.git("checkout", "-q", "-b", "x")
    repo.commit({"records/r.md": rows_table(r="new", **FILLER, k="1")}, "x: new")
    repo.git("checkout", "-q", "-b", "y")
    repo.commit({"records/r.md": rows_table(r="old", **FILLER, k="1")}, "y: back to old")
    repo.git("checkout", "-q", "x")
    repo.commit({"records/r.md": rows_table(r="new", **FILLER, k="1", x2="2")}, "x: a row apart")
    repo.git("checkout", "-q", "main")
    repo.commit({"o.txt": "o\n"}, "main moves on")
    assert merge_in(repo, "x", "y").returncode == 0
    good = rows_table(r="old", **FILLER, k="1", x2="2")
    assert (repo.path / "records/r.md").read_text() == good, "git's octopus result"
    assert preflight_cli(repo, "--staged")[0] == 0
    repo.write({"records/r.md": rows_table(r="new", **FILLER, k="1", x2="2")})
    repo.git("add", "-A")
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and "row 'r'" in out and "undid" in out, out


def test_a_record_renamed_on_one_side_keeps_the_other_sides_rows(make_repo) -> None:
    repo: Repo = make_repo("renamed")
    repo.commit({"pyproject.toml": PYPROJECT, "records/r.md": rows_table(a="1", b="2", c="3")})
    repo.git("checkout", "-q", "-b", "move")
    repo.git("mv", "records/r.md", "records/log.md")
    repo.commit({"pyproject.toml": PYPROJECT.replace("records/r.md", "records/log.md")}, "move")
    repo.git("checkout", "-q", "main")
    repo.commit({"records/r.md": rows_table(a="1", b="2", c="3", d="4")}, "add d")
    assert merge_in(repo, "move").returncode == 0
    assert "| d | 4 |" in (repo.path / "records/log.md").read_text(), "git carried d over"
    assert preflight_cli(repo, "--staged")[0] == 0
    repo.write({"records/log.md": rows_table(a="1", b="2", c="3")})
    repo.git("add", "-A")
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and "row 'd'" in out and "the merge lost it" in out, out


@pytest.mark.parametrize("how", ["squash", "cherry-pick"])
def test_a_squash_or_cherry_pick_being_committed_is_judged(make_repo, how: str) -> None:
    repo: Repo = make_repo(how)
    repo.commit({"pyproject.toml": PYPROJECT, "records/r.md": rows_table(a="1", **FILLER, b="2")})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit({"records/r.md": rows_table(a="1", s1="s", **FILLER, b="2")}, "side adds s1")
    repo.git("checkout", "-q", "main")
    repo.commit({"records/r.md": rows_table(a="1", **FILLER, b="2", m1="m")}, "main adds m1")
    if how == "squash":
        git = ["git", "-c", "core.hooksPath=/dev/null", "merge", "--squash", "side"]
    else:
        git = ["git", "-c", "core.hooksPath=/dev/null", "cherry-pick", "--no-commit", "side"]
    done = subprocess.run(git, cwd=repo.path, env=repo.env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    if how == "cherry-pick":  # --no-commit leaves no CHERRY_PICK_HEAD: a conflict would
        sha = repo.git("rev-parse", "side")
        (repo.path / ".git" / "CHERRY_PICK_HEAD").write_text(sha + "\n")
    assert preflight_cli(repo, "--staged")[0] == 0, "both rows kept"
    repo.write({"records/r.md": rows_table(a="1", s1="s", **FILLER, b="2")})  # m1 dropped
    repo.git("add", "-A")
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and "row 'm1'" in out and "HEAD added this row, the merge lost it" in out, out


@pytest.mark.parametrize("order", [1, -1])
def test_several_bases_each_must_hold(order: int) -> None:
    """A criss-cross step: against base B2 (k1 'old') both sides changed k1, a conflict any
    resolution passes; against B1 (k1 'new') only ours did, to 'newer', and the merge undid
    it. Whichever base git lists first, the undoing is found."""
    b1, b2 = Version("B1", text("k1 | new")), Version("B2", text("k1 | old"))
    step = Step(Version("theirs", text("k1 | new")), (b1, b2)[::order])
    problems = audit(Version("ours", text("k1 | newer")), [step], text("k1 | new"), ["row"])
    assert [p.message for p in problems] == [
        "row 'k1': the merge undid the change ours made to this row"
    ]
