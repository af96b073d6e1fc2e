"""The one way fidelity starts git: ``git args`` hardened against the user's setup, with a
timeout, and its failure as a `GitError`. Every other module of `fidelity.git` runs git
through `attempt` and `git` here.

Every call drops inherited ``GIT_*`` variables (a hook or an IDE may have set GIT_DIR or
GIT_INDEX_FILE), disables hooks, pagers, external diff drivers and fsmonitor, and uses
``--no-optional-locks`` so that read-only commands never refresh the user's index file.
``--no-replace-objects``: a ``git replace`` ref (a ``--graft``) could swap a commit for
another under the same id, landing a commit that never landed or checking out another tree
for a side; fidelity judges the objects as committed.
GitPython is not used to spawn here because its ``Git.execute`` always starts from
``os.environ`` and cannot drop inherited variables.
"""

from __future__ import annotations

import os
from pathlib import Path

from fidelity import proc
from fidelity.errors import UntrustedError

GIT_TIMEOUT_S = 300.0


_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "diff.external=",
    "advice.detachedHead=false",
    "core.pager=cat",
)


_HARDENING = (
    *(arg for setting in _CONFIG for arg in ("-c", setting)),
    "--no-pager",
    "--no-optional-locks",
    "--no-replace-objects",
)


class GitError(UntrustedError):
    """A git command failed where the run cannot go on without it."""


def clean_env() -> dict[str, str]:
    env = proc.child_env()
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def attempt(
    cwd: Path | str, *args: str, stdin: bytes | None = None, index: Path | None = None
) -> proc.ProcResult:
    """``git args`` hardened, in a clean environment; with index, reading and writing that
    index file instead of the repository's own (never the user's)."""
    env = clean_env()
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return proc.run(
        ["git", *_HARDENING, *args], cwd=cwd, env=env, timeout_s=GIT_TIMEOUT_S, stdin=stdin
    )


def answer(result: proc.ProcResult) -> str | None:
    """The stripped output of a query that succeeded, None when it did not."""
    return result.stdout.decode().strip() if result.status is proc.ProcStatus.OK else None


def reason(result: proc.ProcResult, what: str) -> str:
    """'' when git succeeded, else its own words (or what failed)."""
    if result.status is proc.ProcStatus.OK:
        return ""
    return result.stderr.decode(errors="replace").strip() or result.error or f"{what} failed"


def git(
    cwd: Path | str,
    *args: str,
    check: bool = True,
    stdin: bytes | None = None,
    index: Path | None = None,
) -> bytes:
    """Run ``git args`` in cwd and return stdout; raise GitError when check and it fails.
    index: a temporary index file to use instead of the repository's (see `attempt`)."""
    result = attempt(cwd, *args, stdin=stdin, index=index)
    if result.status is proc.ProcStatus.NOT_FOUND:
        if not os.path.isdir(cwd):  # the same error as a missing git, from the child's chdir
            raise GitError(f"cannot run git {' '.join(args[:2])} in {cwd}: the folder is gone")
        raise GitError("git was not found. Is it installed and on PATH?")
    if check and result.status is not proc.ProcStatus.OK:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {msg}")
    return result.stdout


def succeeds(cwd: Path | str, *args: str) -> bool:
    return attempt(cwd, *args).status is proc.ProcStatus.OK
