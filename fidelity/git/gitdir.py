"""The repository's own directory, shared by its worktrees: where it is, its refs, config
and hooks, git's aliases, and the files git keeps while a merge or a cherry-pick waits for
its commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fidelity import proc
from fidelity.git.command import GIT_TIMEOUT_S, GitError, answer, attempt, clean_env, git


def common_dir(repo: Path | str) -> Path:
    """The repository's shared .git directory (config, hooks, refs), absolute."""
    out = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(out.decode().strip())


def refs(repo: Path | str) -> dict[str, str]:
    """Every ref and the object it names."""
    out = git(repo, "for-each-ref", "--format=%(objectname) %(refname)")
    pairs = (line.split(" ", 1) for line in out.decode(errors="replace").splitlines() if line)
    return {name: sha for sha, name in pairs}


def state_files(repo: Path, names: Sequence[str]) -> dict[str, str]:
    """The text of each file git keeps while an operation waits for its commit (MERGE_HEAD,
    CHERRY_PICK_HEAD, REVERT_HEAD, SQUASH_MSG), '' for one that is not there; one git call
    finds where all of them live (a linked worktree keeps its own)."""
    args = [arg for name in names for arg in ("--git-path", name)]
    where = (answer(attempt(repo, "rev-parse", "--path-format=absolute", *args)) or "").split("\n")
    texts = {}
    for name, path in zip(names, where, strict=False):
        try:
            texts[name] = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            texts[name] = ""
    return {name: texts.get(name, "") for name in names}


def merge_heads(repo: Path) -> list[str]:
    """The commits being merged into HEAD while a merge waits for its commit (MERGE_HEAD),
    or [] when no merge is in progress."""
    text = state_files(repo, ["MERGE_HEAD"])["MERGE_HEAD"]
    return [line.strip() for line in text.splitlines() if line.strip()]


def hooks_dir(repo: Path) -> Path:
    """Where git looks for this repository's hooks: core.hooksPath when the user set one
    (our own hardening turns hooks off, so it is left out of this one query), else the
    common directory's hooks/."""
    result = proc.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "--no-pager",
            "--no-optional-locks",
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "hooks",
        ],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    if result.status is not proc.ProcStatus.OK:
        raise GitError(f"git rev-parse --git-path hooks failed in {repo}")
    return Path(result.stdout.decode().strip())


def config_local(repo: Path, key: str) -> str | None:
    """The value of key in the repository's own config file, or None when it is unset."""
    result = attempt(repo, "config", "--local", "--get", key)
    return result.stdout.decode().rstrip("\n") if result.status is proc.ProcStatus.OK else None


def aliases(cwd: Path) -> dict[str, str]:
    """git's aliases as a command run in cwd sees them (system, global and the repository's
    config): lower-case name -> value; {} when there are none."""
    env = clean_env()
    env.pop("GIT_CONFIG_NOSYSTEM", None)  # a system-wide alias applies to the user's commit
    result = proc.run(
        ["git", "--no-pager", "config", "--null", "--get-regexp", r"^alias\."],
        cwd=cwd,
        env=env,
        timeout_s=GIT_TIMEOUT_S,
    )
    if result.status is not proc.ProcStatus.OK:
        return {}
    found = {}
    for entry in result.stdout.split(b"\0"):
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        if key.lower().startswith("alias."):
            found[key[6:].lower()] = value
    return found


def set_config_local(repo: Path, key: str, value: str) -> None:
    """Write key = value into the repository's own config file."""
    git(repo, "config", "--local", key, value)


def unset_config_section(repo: Path, section: str) -> None:
    """Remove a whole section (`merge.fidelity-records`) from the repository's config."""
    git(repo, "config", "--local", "--remove-section", section)
