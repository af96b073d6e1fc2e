"""`fidelity install-hooks`: plain git hooks that real `git commit`s run, never written over
a foreign hook, and the record merge driver in the repository's config."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import Repo, run_cli

from fidelity.cli.main import main
from fidelity.errors import UsageError
from fidelity.preflight.hooks import HOOKS, MARKER

PYPROJECT = """\
[tool.fidelity.docs]
paths = ["README.md"]

[tool.fidelity.trailers]
required = { "Assisted-by" = ".+" }
"""
GOOD, BAD = "# Demo\n\nSee [a](a.txt).\n", "# Demo\n\nSee [a](gone.txt).\n"
MESSAGE = "Change\n\nAssisted-by: a test\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit({"pyproject.toml": PYPROJECT, "README.md": GOOD, "a.txt": "a\n"}, MESSAGE)
    return r


def real_commit(repo: Repo, *args: str, message: str = MESSAGE) -> subprocess.CompletedProcess[str]:
    """`git commit` as a user runs it: hooks on (the helpers turn them off)."""
    return subprocess.run(
        ["git", "commit", "-q", "-F", "-", *args],
        cwd=repo.path,
        env=repo.env(),
        input=message,
        capture_output=True,
        text=True,
        timeout=120,
    )


def install(repo: Repo) -> tuple[int, str]:
    return run_cli(["install-hooks", "--repo", str(repo.path)])


def test_hooks_and_driver_are_written_then_left_unchanged(repo: Repo) -> None:
    code, out = install(repo)
    assert code == 0, out
    hooks = repo.path / ".git" / "hooks"
    assert "preflight --staged" in (hooks / "pre-commit").read_text()
    assert 'trailers --message-file "$1"' in (hooks / "commit-msg").read_text()
    assert (hooks / "pre-commit").stat().st_mode & 0o111
    driver = repo.git("config", "--local", "--get", "merge.fidelity-records.driver")
    assert "-m fidelity merge-records %O %A %B %P" in driver and "git merge-file" in driver
    assert "written" in out and "assign it in .gitattributes" in out
    code, out = install(repo)
    assert code == 0 and out.count("unchanged") == 6, out


def test_a_staged_defect_stops_a_real_commit_and_a_clean_one_lands(repo: Repo) -> None:
    install(repo)
    head = repo.git("rev-parse", "HEAD")
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    done = real_commit(repo)
    assert done.returncode != 0 and "FD401" in done.stdout + done.stderr
    assert repo.git("rev-parse", "HEAD") == head
    repo.write({"README.md": GOOD + "\nMore.\n"})
    repo.git("add", "-A")
    done = real_commit(repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.git("rev-parse", "HEAD") != head


@pytest.mark.parametrize("args", [("-a",), ("README.md",)])
def test_the_hook_judges_the_index_git_hands_it(repo: Repo, args: tuple[str, ...]) -> None:
    """`commit -a` and `commit PATH` record a temporary index (GIT_INDEX_FILE), not the
    one on disk: the defect they pick up from the work tree is judged."""
    install(repo)
    repo.write({"README.md": BAD})  # not staged: only the commit's own index holds it
    done = real_commit(repo, *args)
    assert done.returncode != 0 and "FD401" in done.stdout + done.stderr


def test_the_commit_msg_hook_judges_trailers(repo: Repo) -> None:
    install(repo)
    repo.write({"a.txt": "b\n"})
    repo.git("add", "-A")
    done = real_commit(repo, message="Change\n\nNo trailer.\n")
    assert done.returncode != 0 and "FD801" in done.stdout + done.stderr
    assert real_commit(repo).returncode == 0


def test_a_foreign_hook_is_never_overwritten(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = repo.path / ".git" / "hooks"
    foreign = "#!/bin/sh\necho mine\n"
    (hooks / "pre-commit").write_text(foreign)
    code = main(["install-hooks", "--repo", str(repo.path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "not fidelity's and are never overwritten" in err and "pre-commit" in err
    assert (hooks / "pre-commit").read_text() == foreign
    assert not (hooks / "commit-msg").exists(), "nothing at all is written"
    config = (repo.path / ".git" / "config").read_text()
    assert "fidelity-records" not in config


def test_a_foreign_merge_driver_is_never_overwritten(repo: Repo) -> None:
    repo.git("config", "merge.fidelity-records.driver", "my-own-driver %O %A %B")
    assert main(["install-hooks", "--repo", str(repo.path)]) == 2
    assert repo.git("config", "--get", "merge.fidelity-records.driver") == "my-own-driver %O %A %B"
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()


def test_without_trailer_rules_no_commit_msg_hook(make_repo) -> None:
    r = make_repo("plain")
    r.commit({"pyproject.toml": '[tool.fidelity.docs]\npaths = ["README.md"]\n'}, "x")
    code, out = install(r)
    assert code == 0 and "skipped" in out and "no [tool.fidelity.trailers]" in out
    assert not (r.path / ".git" / "hooks" / "commit-msg").exists()


def agent_call(script: Path, command: str, cwd: Path) -> tuple[int, str]:
    event = json.dumps({"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)})
    done = subprocess.run(
        [str(script)], input=event, capture_output=True, text=True, timeout=120, cwd=cwd
    )
    return done.returncode, done.stderr


def test_the_agent_hook_is_installed_kept_idempotent_and_removed(repo: Repo) -> None:
    settings = repo.path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    other = {"matcher": "Edit", "hooks": [{"type": "command", "command": "my-linter"}]}
    settings.write_text(json.dumps({"model": "x", "hooks": {"PreToolUse": [other]}}))
    code, out = run_cli(["install-hooks", "--agent", "--repo", str(repo.path)])
    assert code == 0, out
    data = json.loads(settings.read_text())
    assert data["model"] == "x" and data["hooks"]["PreToolUse"][0] == other, "kept as it was"
    (entry,) = [g for g in data["hooks"]["PreToolUse"] if g["matcher"] == "Bash"]
    script = Path(entry["hooks"][0]["command"])
    assert script.is_file() and script.stat().st_mode & 0o111
    repo.write({"README.md": BAD})
    repo.git("add", "-A")
    code, err = agent_call(script, "git commit -m 'x\n\nAssisted-by: a'", repo.path)
    assert code == 2 and "FD401" in err
    assert agent_call(script, "ls", repo.path) == (0, "")

    code, out = run_cli(["install-hooks", "--agent", "--repo", str(repo.path)])
    assert code == 0 and json.loads(settings.read_text()) == data, "rerun adds nothing"

    code, out = run_cli(["install-hooks", "--uninstall", "--repo", str(repo.path)])
    assert code == 0, out
    assert json.loads(settings.read_text()) == {"model": "x", "hooks": {"PreToolUse": [other]}}
    assert not script.exists()
    hooks = repo.path / ".git" / "hooks"
    assert not any((hooks / n).exists() for n in HOOKS)
    assert "fidelity-records" not in (repo.path / ".git" / "config").read_text()
    assert real_commit(repo).returncode == 0, "no hook left to run"


def test_the_agent_script_blocks_when_fidelity_is_gone(repo: Repo, tmp_path: Path) -> None:
    from fidelity.preflight.hooks import agent_script

    script = tmp_path / "hook"
    script.write_text(agent_script("/nonexistent/python"))
    script.chmod(0o755)
    code, err = agent_call(script, "git commit -m x", repo.path)
    assert code == 2 and "could not run" in err
    assert agent_call(script, "ls -la", repo.path) == (0, "")
    spelled = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}}).replace(
        "ls", "\\u0067it \\u0063ommit"
    )  # JSON escapes hide the words from a text search
    done = subprocess.run([str(script)], input=spelled, capture_output=True, text=True)
    assert done.returncode == 2, spelled


def test_a_settings_file_that_is_not_json_is_never_rewritten(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = repo.path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    code = main(["install-hooks", "--agent", "--repo", str(repo.path)])
    assert code == 2 and "not readable as JSON" in capsys.readouterr().err
    assert settings.read_text() == "{ not json"
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists(), "nothing written"


def test_uninstall_leaves_a_foreign_hook_and_names_it(repo: Repo) -> None:
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "commit-msg").write_text("#!/bin/sh\necho mine\n")
    code, out = run_cli(["install-hooks", "--uninstall", "--repo", str(repo.path)])
    assert code == 0 and "not fidelity's; left" in out
    assert (hooks / "commit-msg").read_text() == "#!/bin/sh\necho mine\n"


def test_a_managed_hook_the_user_edited_is_never_overwritten_nor_removed(repo: Repo) -> None:
    """Rerunning install-hooks replaced an edit to a hook it had written ("updated"), and
    --uninstall deleted it: the edit was lost both ways."""
    assert install(repo)[0] == 0
    hook = repo.path / ".git" / "hooks" / "pre-push"
    edited = hook.read_text() + "echo my own check\n"
    hook.write_text(edited)
    with pytest.raises(UsageError, match="edited since fidelity wrote them"):
        install(repo)
    assert hook.read_text() == edited
    code, out = run_cli(["install-hooks", "--uninstall", "--repo", str(repo.path)])
    assert code == 0 and "edited since written; left" in out, out
    assert hook.read_text() == edited
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()  # the unedited: gone
    hook.unlink()  # the user moves the edit away: installed again
    assert install(repo)[0] == 0 and hook.read_text() != edited


def test_nothing_is_installed_where_no_gate_is_configured(make_repo) -> None:
    """The hooks stopped every commit there (preflight exits 3 when it judges nothing),
    and install-hooks said nothing of it."""
    bare: Repo = make_repo("bare")
    bare.commit({"a.txt": "a\n"}, "a")
    with pytest.raises(UsageError, match="no gate is configured in this repository"):
        run_cli(["install-hooks", "--repo", str(bare.path)])
    assert not list((bare.path / ".git" / "hooks").glob("pre-commit"))
    assert real_commit(bare, "--allow-empty").returncode == 0  # commits go on as before


def test_pre_merge_commit_stops_a_clean_merge_that_duplicates_a_key(make_repo) -> None:
    """git merges on its own when the text merge is clean (no driver configured here): both
    sides added key g at different places. The pre-merge-commit hook's rows gate stops it."""
    r = make_repo("merging")
    head = "| row | v |\n|---|---|\n"
    rows = "".join(f"| {k} | {i} |\n" for i, k in enumerate("abcdef"))
    pyproject = '[[tool.fidelity.records]]\npath = "r.md"\nkey = "row"\n'
    r.commit({"pyproject.toml": pyproject, "r.md": head + rows}, MESSAGE)
    r.git("checkout", "-q", "-b", "side")
    r.commit({"r.md": head + "| g | 8 |\n" + rows}, MESSAGE)
    r.git("checkout", "-q", "main")
    r.commit({"r.md": head + rows + "| g | 7 |\n"}, MESSAGE)
    assert run_cli(["install-hooks", "--repo", str(r.path)])[0] == 0
    r.git("config", "--unset", "merge.fidelity-records.driver")
    before = r.git("rev-parse", "HEAD")
    done = subprocess.run(
        ["git", "merge", "--no-edit", "side"],
        cwd=r.path,
        env=r.env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0, done.stdout + done.stderr
    assert "'g'" in done.stdout + done.stderr and "is on 2 rows" in done.stdout + done.stderr
    assert r.git("rev-parse", "HEAD") == before


@pytest.mark.parametrize("name", ["pre-push", "post-rewrite"])
def test_a_foreign_push_or_rewrite_hook_is_never_overwritten_nor_removed(
    repo: Repo, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    foreign = "#!/bin/sh\necho mine\n"
    (hooks / name).write_text(foreign)
    assert main(["install-hooks", "--repo", str(repo.path)]) == 2
    assert name in capsys.readouterr().err
    assert (hooks / name).read_text() == foreign
    assert not (hooks / "pre-commit").exists(), "nothing at all is written"
    (hooks / name).unlink()
    code, out = install(repo)
    assert code == 0 and f"written   {name}" in out, out
    assert MARKER in (hooks / name).read_text()
    (hooks / "pre-commit").write_text(foreign)  # uninstall leaves a foreign one, removes ours
    code, out = run_cli(["install-hooks", "--uninstall", "--repo", str(repo.path)])
    assert code == 0 and not (hooks / name).exists(), out
    assert (hooks / "pre-commit").read_text() == foreign


def test_a_plain_hook_whose_interpreter_is_gone_stops_the_commit(tmp_path: Path) -> None:
    """A hook that cannot judge must not pass every commit (red with the hook exiting 0
    when its interpreter is gone: only the agent's script and the merge driver had tests)."""
    from fidelity.preflight.hooks import scripts

    repo = Repo(tmp_path / "repo")
    repo.commit(
        {"pyproject.toml": '[tool.fidelity.docs]\npaths = ["README.md"]\n', "README.md": "# x\n"}
    )
    script = scripts(repo.path, "/nonexistent/python")["pre-commit"]
    assert script is not None
    hook = tmp_path / "pre-commit"
    hook.write_text(script)
    hook.chmod(0o755)
    done = subprocess.run([str(hook)], cwd=repo.path, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "is gone" in done.stderr, done.stderr
