"""Cases that tamper: with their own worktree, with the user's repository, with processes
that outlive them, and with links out of their output folders. Each is a finding (exit 3)
that names what happened; the nearest well-behaved case is not.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from support import Repo, snapshot

from fidelity.git.command import GitError, git
from fidelity.matrix import gate, rejudge
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome


def shell_case(script: str, outputs: str = '["r.txt"]', env: str = "") -> str:
    return (
        f'[[case]]\nid = "t"\nargv = {json.dumps(script)}\nshell = true\noutputs = {outputs}\n'
        f"timeout_s = 30\n{env}\n"
    )


def judged(repo: Repo, table: str, files: dict[str, str] | None = None) -> Outcome:
    repo.commit({"cases/matrix.toml": table, "src/code.py": "x = 1\n", **(files or {})})
    return gate.run(repo.path, RunRequest("HEAD", "HEAD"))


def findings(outcome: Outcome, code: Code) -> list[str]:
    return [f.message for f in outcome.findings if f.code is code]


WRITE = "printf x > {out}/r.txt"


@pytest.mark.parametrize(
    ("script", "said"),
    [
        (f"git checkout -q --detach HEAD~1 && {WRITE}", "HEAD moved from"),
        (f"echo 'x = 2' > src/code.py && {WRITE}", "tracked files changed: src/code.py"),
        (f"echo y > new.txt && git add new.txt && {WRITE}", "the index's staged entries changed"),
        # a damaged worktree: the run judged nothing and said only git's error, or "git was
        # not found" for a folder that was gone
        (f"{WRITE} && rm -rf .git", "the worktree itself: its .git is gone or rewritten"),
        (f"{WRITE} && echo 'gitdir: /nowhere' > .git", "its .git is gone or rewritten"),
        (f'{WRITE} && cd .. && rm -rf "$OLDPWD"', "the worktree itself: its folder is gone"),
    ],
)
def test_a_case_that_changes_its_own_worktree_is_a_finding(
    make_repo, script: str, said: str
) -> None:
    repo: Repo = make_repo("user")
    repo.commit({"first.txt": "1"})
    outcome = judged(repo, shell_case(script))
    messages = findings(outcome, Code.SIDE_CHANGED)
    assert len(messages) == 2 and said in messages[0], outcome.findings
    assert outcome.exit_code == 3
    assert [str(r.verdict) for r in outcome.comparison.cases] == ["identical"]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_untracked_files_in_the_worktree_are_the_cases_own_business(make_repo) -> None:
    repo: Repo = make_repo("user")
    outcome = judged(repo, shell_case(f"echo log > run.log && mkdir -p build && {WRITE}"))
    assert outcome.findings == () and outcome.exit_code == 0


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("git config --local tamper.key yes", "repository file changed: config"),
        ("git branch -f stolen HEAD", "ref added: refs/heads/stolen"),
        (
            'printf "#!/bin/sh\\n" > "$(git rev-parse --git-common-dir)/hooks/pre-commit"',
            "repository file added: hooks/pre-commit",
        ),
        ('echo edited >> "$USER_CHECKOUT/notes.txt"', "file added: notes.txt"),
        # a tracked file, edited or deleted, was called "added" (it was not listed before)
        ('echo edited >> "$USER_CHECKOUT/first.txt"', "file changed: first.txt"),
        ('rm "$USER_CHECKOUT/first.txt"', "file removed: first.txt"),
    ],
)
def test_a_case_that_changes_the_users_repository_is_a_finding(
    make_repo, script: str, said: str
) -> None:
    repo: Repo = make_repo("user")
    repo.commit({"first.txt": "1\n"})
    env = f"env = {{ USER_CHECKOUT = {json.dumps(str(repo.path))} }}"
    outcome = judged(repo, shell_case(f"{script} && {WRITE}", env=env))
    messages = findings(outcome, Code.CHECKOUT_CHANGED)
    assert len(messages) == 1 and said in messages[0], outcome.findings
    assert outcome.exit_code == 3
    again = rejudge.recompare(outcome.run_dir)  # the finding is evidence: it is judged again
    assert findings(again, Code.CHECKOUT_CHANGED) == messages


def test_a_run_that_touches_nothing_leaves_the_users_repository_as_it_was(make_repo) -> None:
    repo: Repo = make_repo("user")
    repo.commit({"cases/matrix.toml": shell_case("git status --short > /dev/null && " + WRITE)})
    (repo.path / "wip.txt").write_text("uncommitted")
    before = snapshot(repo.path)
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert findings(outcome, Code.CHECKOUT_CHANGED) == []
    assert snapshot(repo.path) == before


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
    return ") Z " in stat


@pytest.mark.parametrize(
    "spawn",
    [
        "sleep 30 & echo $! > {out}/../pid",  # stays in the case's group
        "setsid sh -c 'echo $$ > {out}/../pid; exec sleep 30' & sleep 0.3",  # leaves the group
    ],
)
def test_processes_a_case_leaves_behind_are_killed_and_a_finding(make_repo, spawn: str) -> None:
    repo: Repo = make_repo("user")
    outcome = judged(repo, shell_case(f"{spawn}; {WRITE}"))
    messages = findings(outcome, Code.LEFTOVER_PROCESS)
    assert len(messages) == 2 and "sleep" in messages[0], outcome.findings
    for role in ("baseline", "candidate"):
        pid = int((outcome.run_dir / role / "cases" / "t" / "pid").read_text())
        deadline = time.monotonic() + 5
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(pid), f"{role}: pid {pid} still running after the run"
    assert outcome.exit_code == 3


def test_a_case_that_waits_for_its_children_leaves_nothing(make_repo) -> None:
    repo: Repo = make_repo("user")
    outcome = judged(repo, shell_case(f"sleep 0.2 & wait; {WRITE}"))
    assert findings(outcome, Code.LEFTOVER_PROCESS) == [] and outcome.exit_code == 0


def test_linked_outputs_and_caches_are_never_followed(make_repo, tmp_path: Path) -> None:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "r.txt").write_text("outside bytes")
    (secret / "m.csv").write_text("a\n1\n")
    script = (
        f"ln -s {secret}/r.txt {{out}}/r.txt && ln -s {secret} {{out}}/dir && "
        f"ln -s {secret} $CACHE/linked"
    )
    table = shell_case(script, outputs='["r.txt", "dir/m.csv"]') + 'cache_env = "CACHE"\n'
    repo = make_repo("user")
    repo.commit({"cases/matrix.toml": table, "src/code.py": "x = 1\n"})
    before = snapshot(repo.path)
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    messages = findings(outcome, Code.LINKED_EVIDENCE)
    assert len(messages) == 2 and "out/r.txt -> " in messages[0] and "cache/linked" in messages[0]
    case = outcome.candidate.cases["t"]
    assert case.outputs == {} and case.cache == {}, "no link was followed"
    assert set(case.missing_outputs) == {"r.txt", "dir/m.csv"}
    assert outcome.exit_code == 3
    # what the links pointed at, and the user's checkout, are as they were
    assert sorted(p.name for p in secret.iterdir()) == ["m.csv", "r.txt"]
    assert (secret / "r.txt").read_text() == "outside bytes"
    assert snapshot(repo.path) == before


def test_real_files_in_nested_folders_are_evidence(make_repo) -> None:
    script = "mkdir -p {out}/2026-11-30T10-00/a && printf 1 > {out}/2026-11-30T10-00/a/m.csv"
    outcome = judged(make_repo("user"), shell_case(script, outputs='["*/a/m.csv", "**/*.csv"]'))
    assert outcome.findings == () and outcome.exit_code == 0
    assert list(outcome.candidate.cases["t"].outputs) == ["2026-11-30T10-00/a/m.csv"]


@pytest.mark.parametrize(
    ("script", "keys", "folder"),
    [  # the cache named by `cache_env`, by `{cache}`, and the output folder
        (
            "rm -rf $CACHE && ln -s {elsewhere} $CACHE && printf c > $CACHE/c.bin && " + WRITE,
            'cache_env = "CACHE"',
            "cache",
        ),
        (
            "rm -rf {cache} && ln -s {elsewhere} {cache} && printf c > {cache}/c.bin && " + WRITE,
            "",
            "cache",
        ),
        (
            "printf c > $CACHE/c.bin && rm -rf {out} && ln -s {elsewhere} {out} && " + WRITE,
            'cache_env = "CACHE"',
            "out",
        ),
    ],
)
def test_a_folder_of_the_case_replaced_by_a_link_is_a_finding(
    make_repo, tmp_path: Path, script: str, keys: str, folder: str
) -> None:
    """What went through the link was never kept: not an empty cache or a missing output."""
    elsewhere = tmp_path / "elsewhere"
    outputs = '[{ glob = "r.txt", optional = true }]' if folder == "out" else '["r.txt"]'
    made = f"mkdir -p {elsewhere}/$$ && " + script.replace("{elsewhere}", f"{elsewhere}/$$")
    table = shell_case(made, outputs=outputs)
    outcome = judged(make_repo("user"), table.replace("timeout_s = 30", f"timeout_s = 30\n{keys}"))
    messages = [f.message for f in outcome.findings if f.code == "folder-replaced"]
    assert len(messages) == 2, outcome.findings
    assert f"{{{folder}}} was replaced by a link to {elsewhere}/" in messages[0]
    assert outcome.exit_code == 3
    again = rejudge.recompare(outcome.run_dir)
    assert [f.message for f in again.findings if f.code == "folder-replaced"] == messages


def test_a_case_that_edits_an_already_changed_file_of_the_users_is_a_finding(make_repo) -> None:
    """The user's first.txt is changed before the run; a case appends to it. Red with
    "file changed" left out of what the checkout is compared by: the other tamper tests
    only touch clean files, which show as added."""
    repo: Repo = make_repo("user")
    repo.commit({"first.txt": "1\n"})
    env = f"env = {{ USER_CHECKOUT = {json.dumps(str(repo.path))} }}"
    table = shell_case(f'echo edited >> "$USER_CHECKOUT/first.txt" && {WRITE}', env=env)
    repo.commit({"cases/matrix.toml": table, "src/code.py": "x = 1\n"})
    (repo.path / "first.txt").write_text("1\nwork in progress\n")  # dirty before the run
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    messages = findings(outcome, Code.CHECKOUT_CHANGED)
    assert len(messages) == 1 and "file changed: first.txt" in messages[0], outcome.findings
    assert outcome.exit_code == 3


def test_git_in_a_folder_that_is_gone_says_so_not_that_git_is_missing(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        git(tmp_path / "gone", "status")
    assert str(info.value) == f"cannot run git status in {tmp_path / 'gone'}: the folder is gone"


def test_a_case_that_rewrites_another_cases_output_makes_the_run_untrusted(make_repo) -> None:
    """`compare` of the run directory said evidence-altered; the run itself judged the
    rewritten bytes as c1's and said only "moved" (exit 1)."""
    first = shell_case(WRITE).replace('id = "t"', 'id = "c1"')
    second = shell_case("printf y > {out}/../../c1/out/r.txt && " + WRITE)
    outcome = judged(make_repo("user"), first + second.replace('id = "t"', 'id = "c2"'))
    messages = findings(outcome, Code.EVIDENCE_ALTERED)
    assert len(messages) == 2 and messages[0].startswith("out/r.txt changed: "), messages
    assert {f.case_id for f in outcome.findings if f.code is Code.EVIDENCE_ALTERED} == {"c1"}
    assert outcome.exit_code == 3
    assert rejudge.recompare(outcome.run_dir).exit_code == 3  # as compare says afterwards


def test_an_output_rewritten_just_after_it_was_hashed_is_still_seen(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window between hashing a case's output and stamping it: another case writing
    there then went unseen, as the stamp was taken of the rewritten file. The rewrite is
    made at that moment here, as a second case could make it; the stamp is now the one the
    hash's own open file had."""
    from fidelity.matrix.cases import files, outputs

    hashed = files.sha256_file

    def hash_then_rewrite(path: Path, *stamps: dict) -> str:
        digest = hashed(path, *stamps)
        if path.name == "r.txt" and path.parent.parent.name == "t":
            path.write_text("yy")  # another size: seen whatever the clock's tick
        return digest

    monkeypatch.setattr(outputs, "sha256_file", hash_then_rewrite)
    outcome = judged(make_repo("user"), shell_case(WRITE))
    assert findings(outcome, Code.EVIDENCE_ALTERED), outcome.findings
    assert outcome.exit_code == 3
