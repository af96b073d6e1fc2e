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
    assert "1 gates ok, 1 failed" in err  # docs failed; trailers held on the -m message


def test_a_clean_commit_is_allowed(repo: Repo, tmp_path: Path) -> None:
    repo.write({"README.md": GOOD + "\nMore.\n"})
    repo.git("add", "-A")
    assert hook(event(commit(), repo.path), tmp_path)[0] == 0


def test_the_message_in_the_command_is_judged(repo: Repo, tmp_path: Path) -> None:
    repo.write({"a.txt": "b\n"})
    repo.git("add", "-A")
    code, err = hook(event(commit("Change\n\nNo trailer here."), repo.path), tmp_path)
    assert code == 2 and "FD701 missing required trailer" in err
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
    ("stdin", "code"),
    [(b'{"tool_input": {"command": "git commit -m x"', 2), (b"\xff\xfe not json", 0)],
)
def test_an_unreadable_event_blocks_only_when_it_may_be_a_commit(
    stdin: bytes, code: int, tmp_path: Path
) -> None:
    got, err = hook(stdin, tmp_path)
    assert got == code
    assert ("unreadable hook event" in err) == (code == 2)


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


def test_a_repository_without_configuration_is_allowed(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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
