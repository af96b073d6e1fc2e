"""Which `git commit`s a command line runs, where, and with what message: cases as data."""

from __future__ import annotations

import pytest

from fidelity.preflight.shell import commits

CWD = "/w"

# command -> [(cwd, amend, stages, message or None)] for each commit it runs
CASES: list[tuple[str, list[tuple[str, bool, bool, str | None]]]] = [
    ("ls -la", []),
    ("git status && git log --oneline", []),
    ("echo 'git commit' # git commit", []),
    ("git log --grep commit", []),
    ("git commit -m fix", [("/w", False, False, "fix\n")]),
    ("git commit -qm 'two words'", [("/w", False, False, "two words\n")]),
    ("git commit -m a -m b", [("/w", False, False, "a\n\nb\n")]),
    ("git commit --message=fix --amend", [("/w", True, False, "fix\n")]),
    ("git commit -am fix", [("/w", False, True, "fix\n")]),
    ("git commit -m fix -- src/a.py", [("/w", False, True, "fix\n")]),
    ("git commit src/a.py -m fix", [("/w", False, True, "fix\n")]),
    ("git add -A && git commit -m fix", [("/w", False, True, "fix\n")]),
    ("git commit -m x; echo done", [("/w", False, False, "x\n")]),
    ("git commit -m x | tee log 2>&1", [("/w", False, False, "x\n")]),
    ("git -C sub commit -m x", [("/w/sub", False, False, "x\n")]),
    ("git -C /abs -C rel commit -m x", [("/abs/rel", False, False, "x\n")]),
    ("cd sub && git commit -m x", [("/w/sub", False, False, "x\n")]),
    ("cd sub\ngit -C .. commit -m x", [("/w", False, False, "x\n")]),
    ("(cd sub && git add .) && git commit -m x", [("/w", False, True, "x\n")]),
    ("bash -lc 'cd /r && git commit -m x'", [("/r", False, False, "x\n")]),
    (
        "GIT_AUTHOR_NAME=x env -u Y git --no-pager -c a.b=c commit -m x",
        [("/w", False, False, "x\n")],
    ),
    ("sudo -u me git commit -m x", [("/w", False, False, "x\n")]),
    (
        "git commit -m \"$(cat <<'EOF'\nSubject\n\nAssisted-by: x\nEOF\n)\"",
        [("/w", False, False, "Subject\n\nAssisted-by: x\n")],
    ),
    (
        "git commit -F - <<EOF\nmsg\ngit commit -m inner\nEOF\ngit status",
        [("/w", False, False, None)],
    ),
    ("git commit --amend --no-edit", [("/w", True, False, None)]),
    ('git commit -m "$MSG"', [("/w", False, False, None)]),
    ("git commit -C HEAD", [("/w", False, False, None)]),
    ("git commit --fixup=abc123", [("/w", False, False, None)]),
    (
        "git commit -m a && git commit --amend -m b",
        [("/w", False, False, "a\n"), ("/w", True, True, "b\n")],
    ),
    ("git commit -m 'unbalanced", [("/w", False, True, None)]),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_commits_of_a_command_line(
    command: str, expected: list[tuple[str, bool, bool, str | None]]
) -> None:
    found = [(c.cwd, c.amend, c.stages, c.message) for c in commits(command, CWD)]
    assert found == expected


def test_a_message_that_cannot_be_known_says_why() -> None:
    (commit,) = commits('git commit -m "$(date)"', CWD)
    assert commit.message is None and "built by the shell" in commit.unknown
    (commit,) = commits("git commit -F notes/msg.txt", CWD)
    assert commit.message_file == "notes/msg.txt" and commit.unknown


def test_a_directory_named_by_a_variable_is_unknown() -> None:
    (commit,) = commits('cd "$REPO" && git commit -m x', CWD)
    assert not commit.cwd_known
    (commit,) = commits("git -C $HOME/r commit -m x", CWD)
    assert not commit.cwd_known
    (commit,) = commits("(cd $X) && git commit -m x", CWD)
    assert commit.cwd_known and commit.cwd == CWD, "a subshell's cd ends with it"
