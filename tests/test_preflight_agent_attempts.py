"""Every spelling of a commit that an adversarial reading found, as one table: each row a
command line handed to a real `fidelity preflight --agent-hook` process, in a real
repository where a real gate fails on what that line would commit (a README link to a file
that does not exist, FD401, or a forbidden trailer, FD803), and the decision asserted.

`where` says where the failing content is, so that only the line's own reading can find it:

- `index`: staged in the repository's index (the plain case);
- `elsewhere`: only in another index file (`other.index`, also as `.git/other.index`) or
  another work tree (`other-tree/`); the repository's own index and work tree are clean;
- `message`: the content is clean (an `a.txt` change is staged) and the line adds a
  `Do-Not-Merge` trailer, which `[tool.fidelity.trailers]` forbids;
- `tree`: in the repository's work tree only, unstaged (for lines that must judge elsewhere);
- `clean`: nowhere.

A row expecting 0 is a clean commit that must stay allowed. The rows marked `lands` are run
for real too (with `--no-verify`, past git's own hooks): each moves HEAD, so each was a
commit the hook let through before it read that spelling.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support import Repo

PYPROJECT = """\
[tool.fidelity.docs]
paths = ["README.md"]

[tool.fidelity.trailers]
required = { "Assisted-by" = ".+" }
forbidden = ["Do-Not-Merge"]
"""
GOOD, BAD = "# Demo\n\nSee [a](a.txt).\n", "# Demo\n\nSee [a](gone.txt).\n"
OK = shlex.quote("Change\n\nAssisted-by: an agent")
BASHRC = """\
alias gcm='git commit --no-verify'
gcmf() { git commit --no-verify -m "$1"; }
"""

# (command, where, expected exit code, a line of the hook's stderr that must be there)
BLOCKED_BEFORE = [
    "git commit\\\n  -m x",  # a line continuation
    "git ci -m x",  # an alias in the repository's git config
    "git cia",  # a shell alias: `!git commit -a -m x`
    "git $(echo commit) -m x",  # command substitution
    "git `echo commit` -m x",
    "eval 'git commit -m x'",
    'eval "$LINE"',  # a line only the shell knows
    "sh -c 'git commit -m x'",
    'bash -lc "git commit -m x"',
    "env A=1 git commit -m x",
    "env -S 'git commit -m x'",
    "sudo -u me git commit -m x",
    "timeout 60 git commit -m x",
    "nohup git commit -m x",
    "command git commit -m x",
    "\\git commit -m x",
    "/usr/bin/git commit -m x",
    "g'i't co\"mm\"it -m x",
    "$'git' commit -m x",
    "$GIT commit -m x",
    "git {commit,} -m x",
    "f() { git commit -m x; }; f",
    "if true; then git commit -m x; fi",
    "x=$(git commit -m x)",
    "echo 'git commit -m x' | sh",
    "bash <<'EOF'\ngit commit -m x\nEOF",
    "sh commit.sh",  # a script file the line runs
    "./commit.sh",
    "git -c alias.save=commit save -m x",
    "find . -maxdepth 0 -exec git commit -m x \\;",
    "git commit -m 'unbalanced",
    # found by an adversarial review; each committed the staged defect before
    "mkdir -p sub && cd sub && git commit -m x",
    "cd /nonexistent-dir; git commit -m x",
    "false && cd /; git commit -m x",
    "f() { cd /; }; git commit -m x",
    "git --work-tree=/tmp commit -m x",
    "GIT_WORK_TREE=/tmp git commit -m x",
    "echo commit -m x | xargs git",
    "V=commit git --config-env=alias.ci=V ci -m x",
    "GIT_CONFIG_GLOBAL=/tmp/aliases git save -m x",
    "git stash && git reset --hard 'stash@{0}'",
    "git fast-import < stream.txt",
    "/usr/lib/git-core/git-commit -m x",
    "x='$(git commit -m x >&2)'; echo \"${x@P}\"",
    "PS4='$(git commit -m x >&2)'; set -x; true",
    "shopt -s expand_aliases\nalias g=git\ng commit -m x",
    "git -c core.editor='git commit -m x;true' tag -a t",
    "x=$'\\x67\\x69\\x74'; $x $'\\x63ommit' -m y",
    "echo Z2l0IGNvbW1pdCAtbSB4 | base64 -d | sh",
    "sh < commit.sh",
    "cat commit.sh | bash",
    "PATH=.:$PATH commit.sh",
]
ROWS: list[tuple[str, str, int, str]] = [(c, "index", 2, "FD401") for c in BLOCKED_BEFORE]

# issue 35: another index, another work tree, --trailer, an alias from the user's rc file
HOLES: list[tuple[str, str, int, str]] = [
    (f"GIT_INDEX_FILE={{tmp}}/other.index git commit --no-verify -m {OK}", "elsewhere", 2, "FD401"),
    (f"GIT_INDEX_FILE=.git/other.index git commit --no-verify -m {OK}", "elsewhere", 2, "FD401"),
    # relative to the top of the work tree, as git reads it, not to the directory git runs in
    (
        f"cd sub && GIT_INDEX_FILE=.git/other.index git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        f"export GIT_INDEX_FILE={{tmp}}/other.index; git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        f"export GIT_INDEX_FILE=.git/other.index && git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        "GIT_INDEX_FILE={tmp}/other.index bash -c 'git commit --no-verify -F msg.txt'",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        f"env GIT_INDEX_FILE={{tmp}}/other.index git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (f"git --work-tree={{tmp}}/other-tree commit -a --no-verify -m {OK}", "elsewhere", 2, "FD401"),
    (f"git --work-tree {{tmp}}/other-tree commit -a --no-verify -m {OK}", "elsewhere", 2, "FD401"),
    (
        f"GIT_WORK_TREE={{tmp}}/other-tree git commit -a --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        f"export GIT_WORK_TREE={{tmp}}/other-tree; git commit --no-verify -am {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    # a git directory named without a work tree: the directory git runs in is the work tree
    (
        f"cd {{tmp}}/other-tree && GIT_DIR={{repo}}/.git git commit -a --no-verify -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    (
        f"cd {{tmp}} && git --git-dir={{repo}}/.git --work-tree=other-tree commit -a --no-verify"
        f" -m {OK}",
        "elsewhere",
        2,
        "FD401",
    ),
    # through a git alias (`ci` = commit): git hands the alias the work tree and -c settings
    (f"git --work-tree={{tmp}}/other-tree ci -a --no-verify -m {OK}", "elsewhere", 2, "FD401"),
    (
        f"read GIT_INDEX_FILE <<< {{tmp}}/other.index; export GIT_INDEX_FILE; git commit -m {OK}",
        "elsewhere",
        2,
        "names it with a shell variable",
    ),
    (
        f"git --work-tree={{tmp}}/other-tree add -u && git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "cannot be judged before the line runs",
    ),
    (
        f"GIT_INDEX_FILE=$HOME/i git commit --no-verify -m {OK}",
        "elsewhere",
        2,
        "names it with a shell variable",
    ),
    (
        f"git --work-tree=$D commit -a --no-verify -m {OK}",
        "elsewhere",
        2,
        "names it with a shell variable",
    ),
    # a repository without a work tree of its own (a bare one, as dotfiles set-ups use)
    (
        f"git --git-dir={{tmp}}/bare.git --work-tree={{tmp}}/other-tree commit -a --no-verify"
        f" -m {OK}",
        "elsewhere",
        2,
        "no repository with a work tree of its own",
    ),
    (f"git commit --no-verify -m {OK} --trailer 'Do-Not-Merge: yes'", "message", 2, "FD803"),
    (f"git commit --no-verify -m {OK} --trailer=Do-Not-Merge=yes", "message", 2, "FD803"),
    # a key alias given with -c, and one in the repository's config (`dnm`), prefix-matched
    (
        f"git -c trailer.hold.key=Do-Not-Merge commit --no-verify -m {OK} --trailer 'hold: yes'",
        "message",
        2,
        "FD803",
    ),
    (f"git commit --no-verify -m {OK} --trailer 'dnm: yes'", "message", 2, "FD803"),
    (
        f"git -c trailer.hold.key=Do-Not-Merge ci --no-verify -m {OK} --trailer 'hold: yes'",
        "message",
        2,
        "FD803",
    ),
    (f"git commit --no-verify -m {OK} --trailer 'Do-Not: yes'", "message", 2, "FD803"),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=trailer.hold.key GIT_CONFIG_VALUE_0=Do-Not-Merge "
        f"git commit --no-verify -m {OK} --trailer 'hold: yes'",
        "message",
        2,
        "FD803",
    ),
    (
        'git -c alias.hold="commit --trailer Do-Not-Merge:yes" hold --no-verify -m ' + OK,
        "message",
        2,
        "FD803",
    ),
    (
        "git commit --no-verify -F msg.txt --trailer 'Do-Not-Merge: yes'",
        "message",
        2,
        "FD803",
    ),
    # no message the hook can see: the trailers are judged on their own
    ("GIT_EDITOR=true git commit --no-verify --trailer 'Do-Not-Merge: yes'", "message", 2, "FD803"),
    (
        "git commit --amend --no-edit --no-verify --trailer 'Do-Not-Merge: yes'",
        "message",
        2,
        "FD803",
    ),
    # an alias or function from the user's start-up files (the hook does not read them)
    ("bash -ic 'gcm -m x'", "index", 2, "FD401"),
    ("bash -i -c 'gcmf x'", "index", 2, "FD401"),
    ("zsh -ic 'gcm -m x'", "index", 2, "FD401"),
    ("gcm -m x", "index", 2, "FD401"),  # an agent that sources a snapshot of the user's shell
]
# what must stay allowed: the named index or work tree is clean while the own one is not
CLEAN: list[tuple[str, str, int, str]] = [
    (f"GIT_INDEX_FILE={{tmp}}/good.index git commit -m {OK}", "index", 0, ""),
    (f"git --work-tree={{tmp}}/good-tree commit -a -m {OK}", "tree", 0, ""),
    ("git commit -m Change --trailer 'Assisted-by: an agent'", "message", 0, ""),
    (f"git commit -m {OK} --trailer 'Reviewed-by: a person'", "message", 0, ""),
    ("git commit --amend --no-edit --trailer 'Reviewed-by: a person'", "message", 0, ""),
    (f'git commit -m {OK} --trailer "$T"', "message", 0, ""),  # as -m "$MSG": not judged
    ("bash -ic 'ls -la'", "clean", 0, ""),
    ("gcm -m x", "clean", 0, ""),
]
# the rows that really land a failing commit when run (bash here: no zsh on every machine)
LANDS = [row for row in HOLES if not any(w in row[0] for w in ("zsh", "$", "bare.git", "read"))]


def _index_with(repo: Repo, index: Path, readme: str) -> None:
    """An index file other than the repository's, holding HEAD with README set to readme."""
    env = {**repo.env(), "GIT_INDEX_FILE": str(index)}
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        input=readme,
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for args in (
        ["read-tree", "HEAD"],
        ["update-index", "--cacheinfo", f"100644,{blob},README.md"],
    ):
        subprocess.run(["git", *args], cwd=repo.path, env=env, check=True)


def world(tmp_path: Path, where: str) -> Repo:
    """The repository and everything around it that the rows name."""
    repo = Repo(tmp_path / "repo")
    files = {"pyproject.toml": PYPROJECT, "README.md": GOOD, "a.txt": "a\n", "sub/k.txt": "k\n"}
    repo.commit(files, "root\n\nAssisted-by: a test")
    repo.git("config", "alias.ci", "commit")
    repo.git("config", "alias.cia", "!git commit -a -m x")
    repo.git("config", "trailer.dnm.key", "Do-Not-Merge")
    script = "#!/bin/sh\ngit commit -m 'from a script'\n"
    (repo.path / "commit.sh").write_text(script)
    (tmp_path / "commit.sh").write_text(script)
    (repo.path / "msg.txt").write_text("Change\n\nAssisted-by: an agent\n")
    for name, readme in (("other", BAD), ("good", GOOD)):
        _index_with(repo, tmp_path / f"{name}.index", readme)
        tree = tmp_path / f"{name}-tree"
        (tree / "sub").mkdir(parents=True)
        for path, text in {**files, "README.md": readme}.items():
            (tree / path).write_text(text)
    _index_with(repo, repo.path / ".git" / "other.index", BAD)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(tmp_path / "bare.git")],
        env=repo.env(),
        check=True,
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(BASHRC)
    if where == "index":
        repo.write({"README.md": BAD})
        repo.git("add", "README.md")
    elif where == "tree":
        repo.write({"README.md": BAD})
    elif where == "message":
        repo.write({"a.txt": "b\n"})
        repo.git("add", "a.txt")
    return repo


def _line(command: str, repo: Repo, tmp_path: Path) -> str:
    return command.replace("{tmp}", str(tmp_path)).replace("{repo}", str(repo.path))


def _env(tmp_path: Path, repo: Repo) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**environ, **repo.env(), "HOME": str(tmp_path / "home")}


def hook(
    command: str, repo: Repo, tmp_path: Path, env: dict[str, str] | None = None
) -> tuple[int, str]:
    import json

    event = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(repo.path)}
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "preflight", "--agent-hook"],
        input=json.dumps(event).encode(),
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        env={**_env(tmp_path, repo), **(env or {})},
    )
    return done.returncode, done.stderr.decode()


def _id(row: tuple[str, str, int, str]) -> str:
    """`where: command`, the message written OK and blanks folded: a readable test id."""
    return f"{row[1]}: " + " ".join(row[0].replace(OK, "OK").split())


@pytest.mark.parametrize(
    ("command", "where", "code", "says"), ROWS + HOLES + CLEAN, ids=map(_id, ROWS + HOLES + CLEAN)
)
def test_every_attempt_is_judged(
    command: str, where: str, code: int, says: str, tmp_path: Path
) -> None:
    repo = world(tmp_path, where)
    got, err = hook(_line(command, repo, tmp_path), repo, tmp_path)
    assert got == code, err
    assert says in err, err


@pytest.mark.parametrize(("command", "where", "code", "says"), LANDS, ids=map(_id, LANDS))
def test_each_hole_lands_a_commit_when_run(
    command: str, where: str, code: int, says: str, tmp_path: Path
) -> None:
    """The rows are real: run as the agent would run them, each one commits what the hook
    refuses (the README's broken link, or the forbidden trailer)."""
    repo = world(tmp_path, where)
    before = repo.git("rev-parse", "HEAD")
    line = _line(command, repo, tmp_path)
    env = {**_env(tmp_path, repo), "GIT_EDITOR": "true"}
    # as Claude Code runs a command: after a snapshot of the user's aliases and functions
    snapshot = 'shopt -s expand_aliases; . "$HOME/.bashrc"; eval "$1"'
    argv = ["bash", "-c", snapshot, "bash", line]
    subprocess.run(argv, cwd=repo.path, env=env, capture_output=True, timeout=60, check=False)
    assert repo.git("rev-parse", "HEAD") != before, line
    if where == "message":
        assert "Do-Not-Merge" in repo.git("log", "-1", "--format=%B"), line
    else:
        assert "gone.txt" in repo.git("show", "HEAD:README.md"), line


def test_what_the_agents_shell_inherits_is_judged_too(tmp_path: Path) -> None:
    """An agent started with GIT_INDEX_FILE (or a trailer key alias in GIT_CONFIG_*) set
    hands it to every command it runs: the hook reads the same variables."""
    repo = world(tmp_path, "elsewhere")
    line = f"git commit --no-verify -m {OK}"
    assert hook(line, repo, tmp_path) == (0, "")
    code, err = hook(line, repo, tmp_path, {"GIT_INDEX_FILE": str(tmp_path / "other.index")})
    assert code == 2 and "FD401" in err, err
    repo = world(tmp_path / "m", "message")
    line += " --trailer 'hold: yes'"
    assert hook(line, repo, tmp_path)[0] == 0
    alias = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "trailer.hold.key"}
    alias["GIT_CONFIG_VALUE_0"] = "Do-Not-Merge"
    code, err = hook(line, repo, tmp_path, alias)
    assert code == 2 and "FD803" in err, err
