"""What a side's cases changed in their own worktree after setup: HEAD, the index and
tracked files, read before the first case and after the last (`runner`)."""

from __future__ import annotations

from pathlib import Path

from fidelity.git import worktrees
from fidelity.git.command import GitError
from fidelity.matrix.run import repo_state

DAMAGED = "damaged"  # the key of a worktree git could not read after the cases


def tree_state(wt: Path, now: worktrees.Status | None = None) -> dict[str, str]:
    """HEAD, the staged entries and every changed tracked file (status, size, mtime) of a
    side's worktree; untracked files are a case's own business (logs, caches). `now`: the
    worktree's status read (its index refreshed) since anything last ran in it, else read
    here."""
    if now is None:
        try:
            worktrees.refresh_index(wt)
            now = worktrees.status(wt, untracked=False)  # HEAD, the index and the files at once
        except GitError:  # a case removed the folder, or its .git: the run still judges
            gone = "its folder is gone" if not wt.is_dir() else "its .git is gone or rewritten"
            return {"HEAD": "(unreadable)", "index": "", DAMAGED: gone}
    state = {
        "HEAD": (now.head or "(no commit)")[:12],
        "index": repo_state.digest(now.staged),  # what differs from HEAD (compared too)
    }
    for code, path in now.entries:
        if code != "??":
            state[f"file {path}"] = f"{code.strip()} {repo_state.stat_of(wt, path)}"
    return state


def side_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What the cases changed in their worktree after setup: HEAD moved, the index, tracked
    files. Any of it means the evidence may not be what the side's commit produces."""
    if DAMAGED in after:
        return [f"the worktree itself: {after[DAMAGED]}, so git could not read it after the cases"]
    found = []
    if before["HEAD"] != after["HEAD"]:
        found.append(f"HEAD moved from {before['HEAD']} to {after['HEAD']}")
    if before["index"] != after["index"]:
        found.append("the index's staged entries changed")
    files = sorted(
        k.removeprefix("file ")
        for k in before.keys() | after.keys()
        if k.startswith("file ") and before.get(k) != after.get(k)
    )
    if files:
        more = " ..." if len(files) > 5 else ""
        found.append(f"tracked files changed: {', '.join(files[:5])}{more}")
    return found
