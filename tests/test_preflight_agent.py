"""The coding-agent hook protocol, end to end: a real JSON event on stdin of a real
`fidelity preflight --agent-hook` process (and of scripts/agent-preflight.sh); exit 2 blocks
with reasons on stderr, 0 allows, and a commit is never let through on an error."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support import Repo

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "agent-preflight.sh"
PYPROJECT = """\
[tool.fidelity.docs]
paths = ["README.md"]

[tool.fidelity.trailers]
required = { "Assisted-by" = ".+" }
"""
GOOD, BAD = "# Demo\n\nSee [a](a.txt).\n", "# Demo\n\nSee [a](gone.txt).\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit({"pyproject.toml": PYPROJECT, "README.md": GOOD, "a.txt": "a\n"}, "root")
    return r


def event(command: object, cwd: Path | str, tool: str = "Bash") -> bytes:
    data = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command, "description": "test"},
        "cwd": str(cwd),
    }
    return json.dumps(data).encode()


def hook(
    stdin: bytes, cwd: Path, argv: list[str] | None = None, env: dict[str, str] | None = None
) -> tuple[int, str]:
    argv = argv or [sys.executable, "-m", "fidelity", "preflight", "--agent-hook"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        argv, input=stdin, cwd=cwd, capture_output=True, timeout=120, env={**environ, **(env or {})}
    )
    assert done.stdout == b"", "the hook writes nothing to stdout"
    return done.returncode, done.stderr.decode()


def commit(message: str = "Change\n\nAssisted-by: a test") -> str:
    return f"git commit -m {shlex.quote(message)}"


def test_not_a_commit_is_allowed_without_a_look(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    for command in ("ls -la", "git status && git log --oneline", "echo 'git commit'"):
        assert hook(event(command, repo.path), tmp_path) == (0, "")
    edit = json.dumps({"tool_name": "Edit", "tool_input": {"file_path": "x"}, "cwd": "/"})
    assert hook(edit.encode(), tmp_path) == (0, "")


def test_a_failing_commit_is_blocked_with_reasons_on_stderr(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    code, err = hook(event(commit(), repo.path), tmp_path)
    assert code == 2
    assert "fidelity preflight blocked this commit" in err
    assert "judged the index" in err
    assert "FD401 link target 'gone.txt' does not exist" in err
    assert "1 gate ok, 1 failed" in err  # docs failed; trailers held on the -m message


def test_a_clean_commit_is_allowed(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": GOOD + "\nMore.\n"})
    repo.git("add", "-A")
    assert hook(event(commit(), repo.path), tmp_path)[0] == 0


def test_the_message_in_the_command_is_judged(repo: Repo, tmp_path: Path) -> None:
    repo.write({"a.txt": "b\n"})
    repo.git("add", "-A")
    code, err = hook(event(commit("Change\n\nNo trailer here."), repo.path), tmp_path)
    assert code == 2 and "FD801 missing required trailer" in err
    heredoc = "git commit -m \"$(cat <<'EOF'\nChange\n\nAssisted-by: an agent\nEOF\n)\""
    assert hook(event(heredoc, repo.path), tmp_path)[0] == 0


def test_git_dash_c_and_chains_find_the_repository(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    for command in (
        f"git -C {repo.path} {commit().removeprefix('git ')}",
        f"cd {repo.path} && echo hi; {commit()}",
        f"(cd {repo.path} && {commit()})",
        f"bash -c {shlex.quote(f'cd {repo.path} && {commit()}')}",
    ):
        code, err = hook(event(command, tmp_path), tmp_path)
        assert code == 2, command
        assert "FD401" in err, command


def test_a_chain_that_stages_first_is_judged_on_the_work_tree_too(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write({"README.md": BAD})  # not staged yet: `git add -A` in the line will stage it
    code, err = hook(event(f"git add -A && {commit()}", repo.path), tmp_path)
    assert code == 2 and "judged the work tree" in err and "FD401" in err
    code, err = hook(event(f"git commit -a -m {json.dumps('x')}", repo.path), tmp_path)
    assert code == 2 and "judged the work tree" in err
    # the same line without staging first judges the (clean) index only
    assert hook(event(commit(), repo.path), tmp_path)[0] == 0


def test_amend_is_judged_against_the_parent(repo: Repo, tmp_path: Path) -> None:
    repo.commit({"README.md": BAD}, "broken, committed without hooks")
    assert hook(event(commit(), repo.path), tmp_path)[0] == 0, "nothing staged against HEAD"
    code, err = hook(event(f"git commit --amend -m {json.dumps('x')}", repo.path), tmp_path)
    assert code == 2 and "FD401" in err


@pytest.mark.parametrize(
    ("stdin", "why"),
    [
        (b'{"tool_input": {"command": "git commit -m x"', "not JSON"),
        (b"\xff\xfe not json", "not UTF-8"),
        ('{"tool_name": "Bash", "tool_input": {"command": "ls"}}'.encode("utf-16"), "not UTF-8"),
        (b'[{"tool_name": "Bash", "tool_input": {"command": "git commit -m x"}}]', "JSON list"),
        (b'"git commit -m x"', "JSON str"),
        (b'{"tool_name": "Bash", "tool_input": "git commit -m x"}', "tool_input is a str"),
        (b'{"tool_name": "Bash", "tool_input": {"command": 7}}', "neither a string"),
        (b'{"tool_name": "Bash", "tool_input": {}}', "without tool_input.command"),
        (b'{"tool_input": {"command": "ls"}}', "no tool_name"),
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper"),
        (
            b'{"tool_name": "Bash", "x": '
            + b"[" * 70
            + b"]" * 70
            + b', "tool_input": {"command": "ls"}}',
            "nests deeper",
        ),
        (
            b'{"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_input": {"command": "ls"}}',
            "twice",
        ),
        (b"", "no event"),
        (
            b'{"tool_name": "Bash", "n": ' + b"9" * 4301 + b', "tool_input": {"command": "ls"}}',
            "not JSON this hook can read",
        ),
    ],
)
def test_anything_but_the_documented_event_blocks(stdin: bytes, why: str, tmp_path: Path) -> None:
    got, err = hook(stdin, tmp_path)
    assert got == 2, err
    assert why in err and "blocked" in err
    assert len(err.strip().splitlines()) == 1, "one line"


def test_it_fails_closed_when_the_commit_cannot_be_judged(repo: Repo, tmp_path: Path) -> None:
    repo.write({"pyproject.toml": "[tool.fidelity\n"})  # invalid TOML, staged
    repo.git("add", "-A")
    code, err = hook(event(commit(), repo.path), tmp_path)
    assert code == 2 and "could not judge this commit" in err and "invalid TOML" in err
    (repo.path / ".git" / "index").write_bytes(b"DIRC garbage")  # git itself fails now
    code, err = hook(event(commit(), repo.path), tmp_path)
    assert code == 2 and "could not judge this commit" in err
    code, err = hook(event(f'cd "$REPO" && {commit()}', tmp_path), tmp_path)
    assert code == 2 and "shell variable" in err


def test_a_repository_without_configuration_is_allowed(make_repo, tmp_path: Path) -> None:
    plain = make_repo("plain")
    plain.commit({"a.txt": "a\n"}, "a")
    code, err = hook(event(commit(), plain.path), tmp_path)
    assert code == 0 and "nothing is configured" in err


def test_the_shell_entry_point_fails_closed_without_fidelity(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    bindir = str(Path(sys.executable).parent)
    fidelity = {"FIDELITY": f"{sys.executable} -m fidelity", "PATH": f"{bindir}:/usr/bin:/bin"}
    code, err = hook(event(commit(), repo.path), tmp_path, [str(SCRIPT)], fidelity)
    assert code == 2 and "FD401" in err
    assert hook(event("ls", repo.path), tmp_path, [str(SCRIPT)], fidelity) == (0, "")
    missing = {"FIDELITY": "/nonexistent/fidelity", "PATH": "/usr/bin:/bin"}
    code, err = hook(event(commit(), repo.path), tmp_path, [str(SCRIPT)], missing)
    assert code == 2 and "so it is blocked" in err
    assert hook(event("ls", repo.path), tmp_path, [str(SCRIPT)], missing)[0] == 0


# every spelling of a commit, each against a real failing gate: test_preflight_agent_attempts.py


@pytest.mark.parametrize(
    "command",
    [
        "git stash pop --index && git commit -m x",
        "git checkout 'stash@{0}' -- README.md && git commit -m x",
        "git restore --source='stash@{0}' --staged README.md && git commit -m x",
        "git apply --cached p.diff && git commit -m x",
        "git reset --soft HEAD~2 && git commit -m squash",
    ],
)
def test_a_commit_after_the_index_is_filled_from_elsewhere_is_blocked(
    command: str, repo: Repo, tmp_path: Path
) -> None:
    """What such a commit records exists only after the line runs: it cannot be judged
    beforehand, so the agent is told to run the two steps as two calls."""
    code, err = hook(event(command, repo.path), tmp_path)
    assert code == 2 and "cannot be judged before the line runs" in err, err
    assert "then commit in a call of its own" in err


def test_calls_that_cannot_commit_stay_allowed(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "alias.st", "status")
    repo.write({"README.md": BAD})
    repo.git("add", "README.md")
    for command in (
        "ls -la",
        "git st",
        "git log --grep commit",
        "echo 'git commit'",
        "python -m pytest -q",
        "grep -rn 'git commit' docs",
        "cat <<'EOF' > notes.md\ngit commit -m x\nEOF",
        "PS1='$ '; PROMPT_COMMAND=date; ls",
        "git checkout -b topic && git switch -c other",
    ):
        assert hook(event(command, repo.path), tmp_path) == (0, ""), command


def test_a_two_mib_message_is_judged_whole(repo: Repo, tmp_path: Path) -> None:
    repo.write({"a.txt": "b\n"})
    repo.git("add", "-A")
    message = "Change\n\n" + "x" * (2 * 1024 * 1024) + "\n\nAssisted-by: an agent"
    assert hook(event(commit(message), repo.path), tmp_path)[0] == 0
    code, err = hook(event(commit(message.replace("Assisted-by", "Assisted")), repo.path), tmp_path)
    assert code == 2 and "FD801" in err


def test_no_event_on_a_terminal_is_a_usage_error_at_once(tmp_path: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fidelity", "preflight", "--agent-hook"],
            stdin=follower,
            capture_output=True,
            timeout=60,
            cwd=tmp_path,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2
    assert b"reads a coding agent's pre-tool-use event" in done.stderr


def test_the_decision_can_be_answered_as_json(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    argv = [sys.executable, "-m", "fidelity", "preflight", "--agent-hook", "--json-decision"]
    done = subprocess.run(argv, input=event(commit(), repo.path), capture_output=True, timeout=120)
    assert done.returncode == 2, "the exit code blocks on its own"
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "FD401" in answer["permissionDecisionReason"]
    done = subprocess.run(argv, input=event("ls", repo.path), capture_output=True, timeout=120)
    assert done.returncode == 0
    assert "permissionDecision" not in json.loads(done.stdout)["hookSpecificOutput"]


def test_a_gate_that_cannot_judge_blocks_too(tmp_path: Path) -> None:
    """Exit 3 (untrusted: here `stale` in a shallow clone, which cannot see a row's
    history) is not a pass: the agent's commit is blocked and told why."""
    origin = Repo(tmp_path / "origin")
    records = '[[tool.fidelity.records]]\npath = "bench.md"\nkey = "row"\n'
    records += 'commit_column = "commit"\nwatch = ["sim.py"]\n'
    origin.commit({"pyproject.toml": records, "sim.py": "x = 1\n"}, "root")
    sha = origin.git("rev-parse", "HEAD")
    table = f"# Bench\n\n| row | commit |\n|---|---|\n| one | {sha} |\n"
    origin.commit({"bench.md": table, "sim.py": "x = 2\n"}, "measured")
    clone = tmp_path / "clone"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", "clone", "-q", "--depth", "1", f"file://{origin.path}", str(clone)]
    subprocess.run(argv, check=True, env=env)
    (clone / "bench.md").write_text(table + f"| two | {sha} |\n")
    subprocess.run(["git", "add", "bench.md"], cwd=clone, check=True, env=env)
    code, err = hook(event("git commit -m 'two'", clone), tmp_path)
    assert code == 2, err
    assert "blocked this commit" in err and "shallow" in err


@pytest.mark.parametrize(
    ("line", "env"),
    [
        ("CDPATH={parent} cd repo && {commit}", {}),
        ("export CDPATH={parent}; cd repo && {commit}", {}),
        ("cd repo && {commit}", {"CDPATH": "{parent}"}),
        ("pushd repo && {commit}", {"CDPATH": ":{parent}"}),
    ],
)
def test_a_cd_that_finds_the_repository_through_cdpath_is_judged_there(
    repo: Repo, tmp_path: Path, line: str, env: dict[str, str]
) -> None:
    """bash's `cd repo` searches CDPATH first: the hook judged `<cwd>/repo`, which is no
    repository, and let the commit through (exit 0)."""
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    parent = str(repo.path.parent)
    command = line.format(parent=parent, commit=commit())
    given = {k: v.format(parent=parent) for k, v in env.items()}
    code, err = hook(event(command, elsewhere), tmp_path, env=given)
    assert code == 2 and "FD401" in err, err


def test_text_the_json_escapes_as_a_lone_surrogate_blocks_in_one_line(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON but no UTF-8 text: it ended in a traceback."""
    raw = b'{"tool_name":"Bash","tool_input":{"command":"ls \\ud800"},"cwd":"/tmp"}'
    code, err = hook(raw, tmp_path)
    assert code == 2 and "Traceback" not in err and "not UTF-8" in err, err
    assert len(err.strip().splitlines()) <= 2, err
