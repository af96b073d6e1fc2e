"""Which `git commit`s a command line runs, where, and with what message: cases as data."""

from __future__ import annotations

import pytest

from fidelity.preflight.gitcli import INDEX_UNKNOWN, TREE_UNKNOWN
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
        [("/w", False, False, "msg\ngit commit -m inner\n")],
    ),
    ("git commit \\\n  -m x", [("/w", False, False, "x\n")]),
    ("git commit -m $'a\\nb'", [("/w", False, False, "a\nb\n")]),
    ("g'i't co\"mm\"it -m x", [("/w", False, False, "x\n")]),
    ("\\git commit -m x", [("/w", False, False, "x\n")]),
    ("GIT_DIR=/o/.git git commit -m x", [("/o", False, False, "x\n")]),
    ("export GIT_WORK_TREE=/t; git commit -m x", [("/w", False, False, "x\n")]),
    ("git --work-tree=/t commit -m x", [("/w", False, False, "x\n")]),
    ("export GIT_INDEX_FILE=/tmp/i; git commit -m x", [("/w", False, False, "x\n")]),
    ("env -C sub git commit -m x", [("/w/sub", False, False, "x\n")]),
    ("timeout -s KILL 5 git commit -m x", [("/w", False, False, "x\n")]),
    ("xargs -n 1 git commit -m x", [("/w", False, True, None)]),
    ("echo commit -m x | xargs git", [("/w", False, True, None)]),
    ("x=$(git commit -m y)", [("/w", False, False, "y\n")]),
    (
        "echo $(cd sub && git commit -m y) && git commit -m z",
        [("/w/sub", False, False, "y\n"), ("/w", False, True, "z\n")],
    ),
    ("cat <<'EOF' > notes.md\ngit commit -m x\nEOF", []),
    ("python -m pytest -q", []),
    ("$EDITOR notes.md", [("/w", False, True, None)]),
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


def in_doubt(why: str) -> tuple[str, bool, bool, str | None, str]:
    """A commit in doubt where the line runs, staging and with its message unknown."""
    return (CWD, False, True, None, why)


class Lookup:
    """A machine with one alias file and one script, as the agent hook would read them."""

    def aliases(self, cwd: str) -> dict[str, str]:
        return {"ci": "commit -v", "cia": "!git add -A && git commit", "st": "status"}

    def script(self, path: str) -> str | None:
        return {"/w/go.sh": "cd sub\ngit commit -m s\n", "/w/py": "#!/usr/bin/python\n"}.get(path)

    def program(self, name: str) -> bool:
        return name not in ("gcm", "Fix")  # an alias of the user's shell; no program

    def folder(self, path: str) -> bool:
        return path in ("/w/sub", "/p/sub")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git ci -m x", [("/w", False, False, "x\n", "git alias 'ci'")]),
        ("git cia -m x", [("/w", False, True, "x\n", "git alias 'cia'")]),
        ("git st", []),
        ("sh go.sh", [("/w/sub", False, False, "s\n", "")]),
        ("./go.sh", [("/w/sub", False, False, "s\n", "")]),
        ("./py", []),
        (
            "git $(echo commit)",
            [("/w", False, True, None, "the git subcommand is built by the shell")],
        ),
        ("$GIT commit", [("/w", False, True, None, "the command name is built by the shell")]),
        ("git {commit,x}", [("/w", False, True, None, "the git subcommand is built by the shell")]),
        ("git c*", [("/w", False, True, None, "the git subcommand is built by the shell")]),
        ('eval "$LINE"', [("/w", False, True, None, "eval runs a line built by the shell")]),
        (
            "echo 'git commit' | bash",
            [("/w", False, True, None, "a shell reads its script from standard input")],
        ),
        (
            "sh missing.sh && git status",
            [("/w", False, True, None, "a shell runs missing.sh, which could not be read")],
        ),
        ("find . -exec git commit -m x \\;", [("/w", False, True, "x\n", "run by find")]),
        ('ssh host "cd r && git commit -m x"', [("/w/r", False, False, "x\n", "run by ssh")]),
        ("git -c alias.x='!git commit' x -m y", [("/w", False, False, "y\n", "git alias 'x'")]),
        ("git merge --no-ff topic", [("/w", False, True, None, "git merge creates commits")]),
        ("git pull --rebase", [("/w", False, True, None, "git pull creates commits")]),
        ("git cherry-pick abc", [("/w", False, True, None, "git cherry-pick creates commits")]),
        (
            "git commit-tree HEAD^{tree} -m x",
            [("/w", False, True, None, "git commit-tree creates commits")],
        ),
        ("git merge --abort && git cherry-pick -n abc", []),
        (
            "gcm -m x",
            [
                (
                    "/w",
                    False,
                    True,
                    None,
                    "gcm is no program on PATH (an alias or function of the user's shell?)",
                )
            ],
        ),
        (
            "bash -ic 'gcm -m x'",
            [
                (
                    "/w",
                    False,
                    True,
                    None,
                    "gcm is no program on PATH (an alias or function of the user's shell?)",
                )
            ],
        ),
        ("f() { git status; }; f", []),
        ('gh pr create --title "Fix the commit hook"', []),  # a title, not a line to run
        (
            "git -c alias.h='commit --trailer a:b' h -m x",
            [("/w", False, False, "x\n", "git alias 'h'")],
        ),
        ("cat <<EOF\n$(git commit -m x)\nEOF", [("/w", False, False, "x\n", "")]),
        (
            "((((git commit))))",
            [("/w", False, True, None, "the shell could not parse the line (unbalanced quotes?)")],
        ),
        # each limit the walk gives up at is a commit in doubt, never nothing found
        ("eval " * 20 + "git commit -m x", [in_doubt("nested more than 16 levels deep")]),
        (
            "export BASH_ENV=./c.sh; bash -c true",
            [in_doubt("BASH_ENV is set: the shell runs it later")],
        ),
        ("PATH=./bin:$PATH; deploy", [in_doubt("PATH is changed, so deploy may be any program")]),
        ("true; " * 70_000 + "ls", [in_doubt("the line is too large to read (200,000+ nodes)")]),
    ],
)
def test_commits_in_doubt_count(
    command: str, expected: list[tuple[str, bool, bool, str | None, str]]
) -> None:
    found = commits(command, CWD, Lookup())
    assert [(c.cwd, c.amend, c.stages, c.message, c.doubt) for c in found] == expected


def test_the_analysis_is_linear_in_the_line() -> None:
    """A 4 MiB quoted message and a line nested 10,000 subshells deep are read in one pass
    (the shlex reader this replaced built a token character by character)."""
    (commit,) = commits("git commit -m '" + "x" * (4 * 1024 * 1024) + "'", CWD)
    assert commit.message is not None and len(commit.message) == 4 * 1024 * 1024 + 1
    # "( (" is 10,000 subshells; "((" would be arithmetic, which does not parse
    (commit,) = commits("( " * 10_000 + "git commit -m x" + " )" * 10_000, CWD)
    assert (commit.cwd, commit.message, commit.doubt) == (CWD, "x\n", "")


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


@pytest.mark.parametrize(
    ("line", "inherited", "where"),
    [
        ("CDPATH=/p cd sub && git commit -m x", {}, "/p/sub"),
        ("export CDPATH=/nowhere:/p; cd sub && git commit -m x", {}, "/p/sub"),
        ("cd sub && git commit -m x", {"CDPATH": "/p"}, "/p/sub"),
        ("cd sub && git commit -m x", {"CDPATH": ":/p"}, "/w/sub"),  # "" is the folder itself
        ("CDPATH=/nowhere cd sub && git commit -m x", {}, "/w/sub"),  # found nowhere: as is
        ("CDPATH=/p cd ./sub && git commit -m x", {}, "/w/sub"),  # ./ is never searched
        ("CDPATH=/p cd /w/sub && git commit -m x", {}, "/w/sub"),
        ("CDPATH=$P cd sub && git commit -m x", {}, None),  # only the shell knows
    ],
)
def test_cd_searches_cdpath_as_bash_does(
    line: str, inherited: dict[str, str], where: str | None
) -> None:
    (commit,) = commits(line, CWD, Lookup(), inherited)
    assert (commit.cwd if commit.cwd_known else None) == where


@pytest.mark.parametrize(
    ("command", "index", "work_tree", "unknown"),
    [
        ("git commit -m x", None, None, ""),
        ("GIT_INDEX_FILE=i git commit", "i", None, ""),
        ("export GIT_INDEX_FILE=/i; cd sub && git commit", "/i", None, ""),
        ("GIT_INDEX_FILE=/i sh -c 'git commit'", "/i", None, ""),
        ("env GIT_INDEX_FILE=/i git commit", "/i", None, ""),
        ("GIT_INDEX_FILE=/i gcm -m x", "/i", None, ""),  # in doubt, where it would commit
        ('GIT_INDEX_FILE="$T" git commit', None, None, INDEX_UNKNOWN),
        ("git --work-tree=t commit -a", None, "/w/t", ""),
        ("git --work-tree t -C sub commit -a", None, "/w/sub/t", ""),  # after -C, as git
        ("GIT_WORK_TREE=/t git commit -a", None, "/t", ""),
        ("git --work-tree=$D commit -a", None, None, TREE_UNKNOWN),
        ("GIT_DIR=/r/.git git commit -a", None, "/w", ""),  # the directory git runs in
        ("cd /r && GIT_DIR=.git git commit -a", None, None, ""),
        ("git --git-dir=/r/.git --work-tree=/t commit -a", None, "/t", ""),
        ("git --work-tree=/t ci -a", None, "/t", ""),  # git hands its alias the work tree
        ("git --work-tree=/t cia", None, "/t", ""),  # and a `!` alias too
        ("GIT_DIR=/r/.git git ci -a", None, "/w", ""),
        ("read GIT_INDEX_FILE; export GIT_INDEX_FILE; git commit", None, None, INDEX_UNKNOWN),
    ],
)
def test_another_index_or_work_tree_is_named(
    command: str, index: str | None, work_tree: str | None, unknown: str
) -> None:
    (commit, *_) = commits(command, CWD, Lookup())
    assert (commit.place.index, commit.place.work_tree, commit.place.unknown) == (
        index,
        work_tree,
        unknown,
    )


@pytest.mark.parametrize(
    ("command", "values", "settings", "env", "unknown"),
    [
        ("git commit -m x", None, (), (), ""),
        ("git commit -m x --trailer 'A: b' --trailer=C=d", ("A: b", "C=d"), (), (), ""),
        ("git -c trailer.x.key=X commit --trailer x:1", ("x:1",), ("trailer.x.key=X",), (), ""),
        (
            "GIT_CONFIG_COUNT=1 git commit --trailer a:1",
            ("a:1",),
            (),
            (("GIT_CONFIG_COUNT", "1"),),
            "",
        ),
        ('git commit --trailer "$T" --trailer a:1', ("a:1",), (), (), "built by the shell"),
        ("git --config-env=trailer.x.key=V commit --trailer x:1", ("x:1",), (), (), "builds"),
        (
            'git -c trailer.x.key=X -c "a.b=it\'s" ci --trailer x:1',
            ("x:1",),
            (),
            (("GIT_CONFIG_PARAMETERS", "'trailer.x.key'='X' 'a.b'='it'\\''s'"),),
            "",
        ),
    ],
)
def test_trailers_are_read_with_their_configuration(
    command: str,
    values: tuple[str, ...] | None,
    settings: tuple[str, ...],
    env: tuple[tuple[str, str], ...],
    unknown: str,
) -> None:
    (commit,) = commits(command, CWD, Lookup())
    if values is None:
        assert commit.trailers is None
        return
    assert commit.trailers is not None
    assert (commit.trailers.values, commit.trailers.settings, commit.trailers.env) == (
        values,
        settings,
        env,
    )
    assert unknown in commit.trailers.unknown and bool(unknown) == bool(commit.trailers.unknown)
    assert commit.message is None or commit.message == "x\n"
