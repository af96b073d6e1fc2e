"""Work trees: the top of the one that holds a path, what is changed or untracked in it and
where its HEAD is; the detached, locked worktrees fidelity adds, lists, resets and removes
(the lifecycle that always removes them is `fidelity.worktree`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fidelity import proc
from fidelity.errors import UsageError
from fidelity.git.command import GitError, attempt, git, succeeds


def toplevel(path: Path | str) -> Path:
    """The top of the work tree that holds path; UsageError outside a repository."""
    try:
        out = git(path, "rev-parse", "--show-toplevel")
    except GitError as exc:
        raise UsageError(
            f"{path} is not inside a git repository. Run fidelity from your repository's "
            "work tree, or pass --repo."
        ) from exc
    return Path(utf8_path(out.strip()))


def utf8_path(raw: bytes) -> str:
    """A path git printed, as text; UsageError naming the folder when it is not UTF-8 (run
    records, reports and logs name the repository, and JSON holds only Unicode)."""
    try:
        return raw.decode()
    except UnicodeDecodeError:
        bad = next(part for part in raw.split(b"/") if not _is_utf8(part))
        shown, name = (b.decode("utf-8", "backslashreplace") for b in (raw, bad))
        raise UsageError(
            f"{shown}: the folder name '{name}' is not valid UTF-8, and fidelity's records "
            "name the repository's path; rename the folder, or clone the repository into a "
            "folder whose path is UTF-8"
        ) from None


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode()
    except UnicodeDecodeError:
        return False
    return True


def dirty_paths(worktree: Path | str, paths: Sequence[str] = ()) -> list[str]:
    """Modified, staged, deleted or untracked paths (ignored files excluded), sorted."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=none",
        "--",
        *paths,
    )
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


def status_entries(worktree: Path | str, untracked: bool = True) -> list[tuple[str, str]]:
    """(two-letter status, path) for every changed path; untracked too unless told not."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        f"--untracked-files={'all' if untracked else 'no'}",
        "--ignore-submodules=none",
    )
    entries = out.split(b"\0")
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        found.append((entry[:2].decode(), entry[3:].decode(errors="surrogateescape")))
        if entry[:1] in (b"R", b"C"):
            i += 1
    return found


@dataclass(frozen=True, slots=True)
class Status:
    """One `git status --porcelain=v2 --branch`: HEAD, its branch, every changed path, and
    what the index holds that HEAD does not. One git process where HEAD, its branch, the
    changed paths and the index's staged entries took four."""

    head: str  # HEAD's commit, "" before the first
    branch: str  # `refs/heads/NAME`, "" when HEAD is detached
    entries: tuple[tuple[str, str], ...]  # (two-letter code as v1 writes it, path)
    staged: bytes  # each entry whose index differs from HEAD's (an intent to add too)

    def head_state(self) -> str:
        """As `head_state` says it: `<sha> refs/heads/main`, or its placeholders."""
        return f"{self.head or '(no commit)'} {self.branch or '(detached)'}"


def status(worktree: Path | str, untracked: bool = True) -> Status:
    """HEAD, its branch and every changed path (untracked too unless told not), from one
    `git status --porcelain=v2 --branch -z`."""
    out = git(
        worktree,
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        f"--untracked-files={'all' if untracked else 'no'}",
        "--ignore-submodules=none",
    )
    fields = iter(out.split(b"\0"))
    head, branch = "", ""
    entries: list[tuple[str, str]] = []
    staged: list[bytes] = []
    for field in fields:
        if field.startswith(b"# branch.oid "):
            oid = field.removeprefix(b"# branch.oid ").decode()
            head = "" if oid == "(initial)" else oid
        elif field.startswith(b"# branch.head "):
            name = field.removeprefix(b"# branch.head ").decode(errors="surrogateescape")
            branch = "" if name == "(detached)" else f"refs/heads/{name}"
        elif field[:2] in (b"1 ", b"2 ", b"u "):
            _changed(field, entries, staged)
            if field[:1] == b"2":
                staged.append(next(fields, b""))  # the rename's source, its own field
        elif field[:2] == b"? ":
            entries.append(("??", field[2:].decode(errors="surrogateescape")))
    return Status(head, branch, tuple(entries), b"\0".join(staged))


_PATH_AT = {b"1": 8, b"2": 9, b"u": 10}  # fields before the path, by kind of entry


def _changed(field: bytes, entries: list[tuple[str, str]], staged: list[bytes]) -> None:
    """A tracked entry of porcelain v2 into entries (with v1's code) and, when its index
    differs from HEAD's (or holds only an intent to add), its index side into staged."""
    parts = field.split(b" ", _PATH_AT[field[:1]])
    code = parts[1].decode()
    entries.append((code.replace(".", " "), parts[-1].decode(errors="surrogateescape")))
    if field[:1] == b"u":  # every stage's mode and object
        staged.append(b" ".join([*parts[:6], *parts[7:]]))
    elif code[0] != "." or code[1] == "A":  # the index's mode and object
        staged.append(b" ".join([parts[0], parts[1][:1], parts[4], parts[7], *parts[8:]]))


def head_state(repo: Path | str) -> str:
    """HEAD's commit and, when on a branch, the branch: `<sha> refs/heads/main`."""
    sha = git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).decode().strip()
    branch = git(repo, "symbolic-ref", "--quiet", "HEAD", check=False).decode().strip()
    return f"{sha or '(no commit)'} {branch or '(detached)'}"


def head_sha(repo: Path | str) -> str:
    """HEAD's commit, or "" when there is none (one git process; `head_state` is two)."""
    return git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).decode().strip()


def refresh_index(worktree: Path) -> None:
    """Re-hash every file of one of our own worktrees, so that status trusts no stat cache."""
    git(worktree, "update-index", "-q", "--really-refresh", check=False)


def _add(repo: Path, dest: Path, *args: str) -> None:
    """`git worktree add`, again when it lost a race (`raced`). Never retried when the
    destination was left."""
    for wait in (*_BACKOFF, None):
        try:
            git(repo, "worktree", "add", *args)
            return
        except GitError as exc:
            if wait is None or not raced(str(exc)) or dest.exists():
                raise
            time.sleep(wait)


_BACKOFF = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)  # s; fidelity's own commands are serialised
_RACES = ("failed to read", "Invalid path")  # (fidelity.worktree), so this is for others'


def raced(said: str) -> bool:
    """Whether a worktree command died on another process's worktree command: git reads
    every worktree's record first, and one being written or removed that moment fails to
    read ("failed to read .git/worktrees/X/commondir", "Invalid path
    '.git/worktrees/X'"). Both sides of a run, shards of one repository, a `gc`, or the
    user's own git can be adding or removing worktrees at once."""
    return "worktrees/" in said and any(race in said for race in _RACES)


def _listing(repo: Path) -> bytes:
    """`git worktree list --porcelain -z`, again when it lost a race (`raced`)."""
    for wait in (*_BACKOFF, None):
        try:
            return git(repo, "worktree", "list", "--porcelain", "-z")
        except GitError as exc:
            if wait is None or not raced(str(exc)):
                raise
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def worktree_remove(repo: Path, dest: Path) -> bool:
    """Remove the worktree and prune its record (again when it lost a race); True when
    nothing is left behind."""
    for wait in (*_BACKOFF, None):
        result = attempt(repo, "worktree", "remove", "--force", "--force", str(dest))
        if result.status is proc.ProcStatus.OK:
            return not dest.exists()
        if wait is None or not raced(result.stderr.decode(errors="replace")):
            break
        time.sleep(wait)
    succeeds(repo, "worktree", "prune")  # git removes the record with the folder
    return False


def worktree_add_locked(repo: Path, dest: Path, sha: str, reason: str) -> None:
    """Add a detached worktree locked with reason, so that `git worktree prune` (ours or
    another process's) keeps it, and a later run can read who made it."""
    _add(repo, dest, "--detach", "--lock", "--reason", reason, str(dest), sha)


def worktree_lock(repo: Path, dest: Path, reason: str) -> bool:
    """Lock a worktree with reason; True when git agreed (False when already locked)."""
    return succeeds(repo, "worktree", "lock", "--reason", reason, str(dest))


def worktree_unlock(repo: Path, dest: Path) -> bool:
    """Unlock a worktree (so that prune may drop its record); True when git agreed."""
    return succeeds(repo, "worktree", "unlock", str(dest))


@dataclass(frozen=True, slots=True)
class WorktreeEntry:
    """One record of `git worktree list --porcelain`; `locked` is the reason, None if unlocked."""

    path: Path
    head: str = ""
    locked: str | None = None
    prunable: bool = False


def worktree_entries(repo: Path) -> list[WorktreeEntry]:
    """Every worktree git knows of, the main one first, with lock reasons and HEADs."""
    out = _listing(repo)
    entries: list[WorktreeEntry] = []
    fields: dict[str, str] = {}
    for raw in [*out.split(b"\0"), b""]:
        if raw:
            key, _, value = raw.decode(errors="surrogateescape").partition(" ")
            fields[key] = value
            continue
        if "worktree" in fields:
            entries.append(
                WorktreeEntry(
                    Path(fields["worktree"]),
                    fields.get("HEAD", ""),
                    fields.get("locked"),
                    "prunable" in fields,
                )
            )
        fields = {}
    return entries


def ignored_paths(root: Path) -> list[str] | None:
    """Untracked paths git ignores under root (folders end in ``/``), relative to root;
    None when root is not inside a git work tree."""
    result = attempt(
        root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    if result.status is not proc.ProcStatus.OK:
        return None
    return [p.decode("utf-8", errors="surrogateescape") for p in result.stdout.split(b"\0") if p]


def leftovers(worktree: Path) -> list[str]:
    """What a run left in one of our own worktrees: changed tracked files, untracked and
    ignored files; `__pycache__` folders aside (their staleness is handled by mtimes)."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--ignore-submodules=none",
    )
    found = []
    for entry in out.split(b"\0"):
        name = entry[3:].decode(errors="surrogateescape")
        if len(entry) > 3 and entry[:1] in b"MADRCU?! " and "__pycache__" not in name.split("/"):
            found.append(entry[:2].decode() + " " + name)
    return found


def reset_worktree(worktree: Path, left: Sequence[str]) -> bool:
    """Put one of our own worktrees back to its commit, given its `leftovers`: tracked files
    reset only when one changed, untracked and ignored files (`__pycache__` aside) removed
    only when there are any. True when a tracked file had changed."""
    changed = any(not entry.startswith(("??", "!!")) for entry in left)
    if changed:
        git(worktree, "reset", "-q", "--hard")
    if changed or any(entry.startswith(("??", "!!")) for entry in left):
        git(worktree, "clean", "-f", "-f", "-d", "-x", "-q", "-e", "__pycache__")
    return changed
