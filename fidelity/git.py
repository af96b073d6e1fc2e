"""The one module that talks to git, hardened against the user's setup.

Every call drops inherited ``GIT_*`` variables (a hook or an IDE may have set GIT_DIR or
GIT_INDEX_FILE), disables hooks, pagers, external diff drivers and fsmonitor, and uses
``--no-optional-locks`` so that read-only commands never refresh the user's index file.
GitPython is not used to spawn here because its ``Git.execute`` always starts from
``os.environ`` and cannot drop inherited variables.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fidelity import proc
from fidelity.errors import UntrustedError, UsageError

GIT_TIMEOUT_S = 300.0
_HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "diff.external=",
    "-c", "advice.detachedHead=false",
    "-c", "core.pager=cat",
    "--no-pager",
    "--no-optional-locks",
)  # fmt: skip


class GitError(UntrustedError):
    """A git command failed where the run cannot go on without it."""


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def git(cwd: Path | str, *args: str, check: bool = True, stdin: bytes | None = None) -> bytes:
    """Run ``git args`` in cwd and return stdout; raise GitError when check and it fails."""
    result = proc.run(
        ["git", *_HARDENING, *args],
        cwd=cwd,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
        stdin=stdin,
    )
    if result.status is proc.ProcStatus.NOT_FOUND:
        raise GitError("git was not found. Is it installed and on PATH?")
    if check and result.status is not proc.ProcStatus.OK:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {msg}")
    return result.stdout


def _ok(cwd: Path | str, *args: str) -> bool:
    result = proc.run(
        ["git", *_HARDENING, *args], cwd=cwd, env=clean_env(), timeout_s=GIT_TIMEOUT_S
    )
    return result.status is proc.ProcStatus.OK


def toplevel(path: Path | str) -> Path:
    """The top of the work tree that holds path; UsageError outside a repository."""
    try:
        out = git(path, "rev-parse", "--show-toplevel")
    except GitError as exc:
        raise UsageError(
            f"{path} is not inside a git repository. Run fidelity from your repository's "
            "work tree, or pass --repo."
        ) from exc
    return Path(out.decode().strip())


def rev_parse(repo: Path, rev: str) -> str:
    """The full commit sha for rev; UsageError naming the revision when it is unknown."""
    if rev.startswith("-"):
        raise UsageError(f"revision {rev!r} looks like an option; name a commit or branch")
    out = proc.run(
        ["git", *_HARDENING, "rev-parse", "--verify", "--quiet", "--end-of-options",
         f"{rev}^{{commit}}"],
        cwd=repo, env=clean_env(), timeout_s=GIT_TIMEOUT_S,
    )  # fmt: skip
    if out.status is not proc.ProcStatus.OK:
        raise UsageError(
            f"unknown revision {rev!r} in {repo}. Check the name with `git log --oneline`, "
            "or fetch it first."
        )
    return out.stdout.decode().strip()


def show_file(repo: Path, sha: str, path: str) -> bytes | None:
    """The bytes of path at commit sha, or None when the commit has no such file."""
    if not _ok(repo, "cat-file", "-e", f"{sha}:{path}"):
        return None
    return git(repo, "cat-file", "blob", f"{sha}:{path}")


def blob_id(repo: Path, sha: str, path: str) -> str | None:
    """The git blob id of path at sha, or None when absent."""
    result = proc.run(
        ["git", *_HARDENING, "rev-parse", "--verify", "--quiet", f"{sha}:{path}"],
        cwd=repo, env=clean_env(), timeout_s=GIT_TIMEOUT_S,
    )  # fmt: skip
    return result.stdout.decode().strip() if result.status is proc.ProcStatus.OK else None


def hash_object(data: bytes) -> str:
    """The blob id git would give these bytes (without writing them)."""
    return git(".", "hash-object", "--stdin", stdin=data).decode().strip()


def dirty_paths(worktree: Path | str, paths: Sequence[str] = ()) -> list[str]:
    """Modified, staged, deleted or untracked paths (ignored files excluded), sorted."""
    out = git(
        worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all",
        "--ignore-submodules=none", "--", *paths,
    )  # fmt: skip
    entries = out.split(b"\0")
    found: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        code, name = entry[:2], entry[3:].decode(errors="surrogateescape")
        found.append(name)
        if code[:1] in (b"R", b"C"):
            i += 1  # the rename source follows as its own NUL-terminated field
    return sorted(found)


def worktree_add(repo: Path, dest: Path, sha: str) -> None:
    git(repo, "worktree", "add", "--detach", str(dest), sha)


def worktree_remove(repo: Path, dest: Path) -> bool:
    """Remove the worktree and prune its record; True when nothing is left behind."""
    removed = _ok(repo, "worktree", "remove", "--force", "--force", str(dest))
    _ok(repo, "worktree", "prune")
    return removed and not dest.exists()


def worktree_list(repo: Path) -> list[Path]:
    out = git(repo, "worktree", "list", "--porcelain", "-z")
    return [
        Path(field[len(b"worktree ") :].decode())
        for field in out.split(b"\0")
        if field.startswith(b"worktree ")
    ]
