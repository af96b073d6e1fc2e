"""What a run must leave as it found it in the user's repository, and what changed.

A worktree shares the user's `.git`: a case that runs `git config`, `git branch -f`, writes
a hook or edits the user's checkout by absolute path changes the user's repository, not
its own sandbox. fidelity cannot stop a case from writing where its user can; it can notice
afterwards, and name what changed: HEAD, the index's staged entries, the work tree's
changed and untracked files (by status, size and modification time), refs, config, hooks
and `.git/info`. Ignored files (build outputs, virtual environments) are not watched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity import workdir
from fidelity.git import gitdir, worktrees


@dataclass(frozen=True, slots=True)
class RepoState:
    head: str
    index: str  # sha256 of the staged entries
    files: Mapping[str, str]  # changed or untracked path -> status, size, mtime
    refs: Mapping[str, str]
    admin: Mapping[str, str]  # config, hooks/*, info/* -> sha256
    common: Path | None = None  # the repository's git folder: a second snapshot reuses it


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stat_of(root: Path, path: str) -> str:
    """size, modification time and mode of root/path, without following a link."""
    try:
        st = (root / path).lstat()
    except OSError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_mode:o}"


def _admin_files(common: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    candidates = [common / "config", common / "config.worktree"]
    for folder in ("hooks", "info"):
        if (common / folder).is_dir():
            candidates += sorted(p for p in (common / folder).iterdir() if p.is_file())
    for path in candidates:
        try:
            found[path.relative_to(common).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
        except OSError:
            continue
    return found


def snapshot(repo: Path, before: RepoState | None = None) -> RepoState:
    """The state of the user's checkout and repository, cheaply (no file is hashed).
    fidelity's own `.fidelity/` is left out: ignored by the `.gitignore` fidelity writes
    in it, but visible for a moment while another fidelity process in the repository
    (a shard, a `gc`) makes it, which must not read as this run changing the checkout.
    Taken again after a run (`before`: the first), it reuses the first's git folder."""
    own = workdir.ROOT + "/"
    common = before.common if before is not None and before.common else gitdir.common_dir(repo)
    now = worktrees.status(repo)  # HEAD, its branch, the index and the files: one process
    entries = [(c, p) for c, p in now.entries if not p.startswith(own)]
    return RepoState(
        head=now.head_state(),
        index=digest(now.staged),  # what differs from HEAD: with HEAD, the whole index
        files={path: f"{code}:{stat_of(repo, path)}" for code, path in entries},
        refs=gitdir.refs(repo),
        admin=_admin_files(common),
        common=common,
    )


def _named(kind: str, before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    added = sorted(after.keys() - before.keys())
    gone = sorted(before.keys() - after.keys())
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    if kind == "file":  # a tracked file is listed once it differs: its status says how
        code = {k: after[k].partition(":")[0] for k in added}
        new = [k for k in added if code[k] == "??" or code[k].startswith("A")]
        gone = sorted(gone + [k for k in added if k not in new and "D" in code[k]])
        changed = sorted(changed + [k for k in added if k not in new and "D" not in code[k]])
        added = new
    parts = [
        f"{kind} {what}: {', '.join(names[:5])}" + (" ..." if len(names) > 5 else "")
        for what, names in (("added", added), ("removed", gone), ("changed", changed))
        if names
    ]
    return parts


def changes(before: RepoState, after: RepoState, own: Path | None = None) -> list[str]:
    """Every item that differs, named; empty when the run left the repository as it was.
    `own` is a folder of the checkout fidelity itself wrote (an --out inside it)."""
    if own is not None:
        prefix = own.as_posix().rstrip("/") + "/"
        after = replace(
            after, files={k: v for k, v in after.files.items() if not (k + "/").startswith(prefix)}
        )
    found = []
    if before.head != after.head:
        found.append(f"HEAD moved from {before.head} to {after.head}")
    if before.index != after.index:
        found.append("the index's staged entries changed")
    found += _named("file", before.files, after.files)
    found += _named("ref", before.refs, after.refs)
    found += _named("repository file", before.admin, after.admin)
    return found
