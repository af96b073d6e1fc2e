"""What git's pre-push hook is asked to judge: each ref it is about to update on the remote,
as the range `preflight --from-ref/--to-ref` judges in CI.

git names the remote in the hook's first argument and writes one line per ref on stdin:
`<local ref> <local sha> <remote ref> <remote sha>`. A ref the remote already has (its sha
known here) is judged from that sha; a new branch (zeros), or one whose remote sha this
clone has never seen, from the parent of its first commit that no remote-tracking branch of
the remote holds (as the pre-commit framework chooses); a history the remote holds nothing
of is judged as its last commit's whole tree. A deleted ref, a ref the remote already has at
that commit, and a tag of a tree or blob bring nothing to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fidelity.errors import UsageError
from fidelity.git import log, objects
from fidelity.preflight.run import Request

ZERO = re.compile(r"0{40}|0{64}")


@dataclass(frozen=True, slots=True)
class Pushed:
    """One ref a push updates, and what is judged for it."""

    label: str  # `refs/heads/x -> refs/heads/x`
    request: Request


def _lines(text: str) -> list[tuple[str, str, str, str]]:
    found = []
    for line in text.splitlines():
        parts = line.rsplit(maxsplit=3)
        if not parts:
            continue
        if len(parts) != 4:
            raise UsageError(
                f"--pre-push reads git's pre-push lines on stdin (`<local ref> <local sha> "
                f"<remote ref> <remote sha>`), not {line!r}; it is meant to run as the hook"
            )
        found.append((parts[0], parts[1], parts[2], parts[3]))
    return found


def _start(repo: Path, remote: str, local: str, remote_sha: str) -> str | None:
    """Where the pushed range starts; None: the remote holds none of it."""
    if not ZERO.fullmatch(remote_sha) and objects.resolve(repo, remote_sha) is not None:
        return remote_sha
    new = log.unpushed(repo, local, remote)
    parents = log.parents(repo, new[0]) if new else [local]
    return parents[0] if parents else None


def requests(repo: Path, remote: str, text: str) -> list[Pushed]:
    """What to judge for each ref of the push git describes in `text`."""
    found = []
    for local_ref, local, remote_ref, remote_sha in _lines(text):
        if ZERO.fullmatch(local) or local == remote_sha or objects.resolve(repo, local) is None:
            continue  # a deletion, nothing new, or a tag of something that is not a commit
        label = f"{local_ref} -> {remote_ref}"
        start = _start(repo, remote, local, remote_sha)
        if start is None:
            found.append(Pushed(label, Request(repo, commit=local, everything=True)))
        elif start != local:
            found.append(Pushed(label, Request(repo, span=(start, local))))
    return found
