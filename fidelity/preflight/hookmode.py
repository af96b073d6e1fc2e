"""What a hook of the pre-commit framework is asked to judge.

pre-commit runs a hook in one of three modes and passes the mode only indirectly: a range
(`--from-ref A --to-ref B`, and pre-push) is named in PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF;
at commit time the files it passes are the staged ones (deletions left out) and it has set
unstaged changes aside; under `--all-files` or `--files` they are files of the work tree.
So: a range when one is named; a pushed branch's whole last commit when pre-push names no
range (a first push: pre-commit then passes every file of the work tree, which is not what
is pushed); the index when a merge waits for its commit (MERGE_HEAD, or at pre-merge-commit
the GITHEAD_* variables of a merge git makes on its own) or every file passed is staged;
else the work tree, with the files passed as the change. A hook run that pre-commit split
into several calls (tens of thousands of files) judges each share.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from fidelity.git import gitdir, objects, stage
from fidelity.preflight.merges import automatic_heads
from fidelity.preflight.run import Request


def pre_commit_request(
    repo: Path, files: Sequence[str], environ: Mapping[str, str], message: Path | None = None
) -> Request:
    start, end = environ.get("PRE_COMMIT_FROM_REF"), environ.get("PRE_COMMIT_TO_REF")
    if start and end:
        return Request(repo, span=(start, end), message=message)
    pushed = environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if pushed:
        return Request(repo, commit=pushed, everything=True, message=message)
    name = environ.get("GIT_INDEX_FILE")
    index = Path(os.getcwd(), name) if name else None
    staged = {path for _, path in stage.staged_changes(repo, _head(repo), index)}
    if gitdir.merge_heads(repo) or set(_relative(repo, files)) <= staged:
        automatic = automatic_heads(environ)  # pre-merge-commit: git merging on its own
        return Request(repo, staged=True, index=index, message=message, automatic=automatic)
    return Request(repo, files=tuple(_relative(repo, files)), message=message)


def _head(repo: Path) -> str:
    return objects.resolve(repo, "HEAD") or stage.EMPTY_TREE


def _relative(repo: Path, files: Sequence[str]) -> list[str]:
    """pre-commit passes paths relative to the repository's top, where it runs hooks."""
    return [Path(f).as_posix().removeprefix("./") for f in files]
