"""The index, as a commit would record it: staged and unstaged paths against a commit, the
files it stages, scratch index files (never the user's) and the unreferenced commits built
from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fidelity.git.command import git


def index_listing(repo: Path | str) -> bytes:
    """What the index stages (mode, blob, stage, path), not its stat cache."""
    return git(repo, "ls-files", "--stage", "-z")


_TEMP_IDENTITY = ("-c", "user.name=fidelity", "-c", "user.email=fidelity@fidelity.invalid")


def _commit_tree(repo: Path, tree: str, parent: str, message: str) -> str:
    """An unreferenced commit (garbage once unused) so a worktree can check the tree out."""
    out = git(repo, *_TEMP_IDENTITY, "commit-tree", tree, "-p", parent, "-m", message)
    return out.decode().strip()


def index_file(repo: Path) -> Path:
    """The repository's own index file (a linked worktree has its own)."""
    return Path(repo, git(repo, "rev-parse", "--git-path", "index").decode().strip())


def copy_index(repo: Path, source: Path | None, dest: Path) -> None:
    """dest holds what the index file source (default: the repository's own) holds; a
    source that does not exist is an empty index, as git starts one. Only read."""
    source = source or index_file(repo)
    if source.is_file():
        dest.write_bytes(source.read_bytes())


def stage_from(repo: Path, work_tree: Path, index: Path, untracked: bool = False) -> None:
    """Stage into the scratch index what `git commit -a` takes from work_tree: every
    tracked file as it is there, deleted when it is gone (with untracked, new files too:
    `git add -A`). Blobs go into the object store, unreferenced, as `git add` leaves them."""
    everything = "-A" if untracked else "-u"
    git(repo, f"--work-tree={work_tree}", "add", everything, "--", ":/", index=index)


def worktree_tree(repo: Path, scratch: Path) -> str:
    """The tree of the work tree as it is (tracked and untracked, not ignored), written to
    the object store through a copy of the index under scratch: the user's index file is
    only read, never written."""
    index = scratch / "index"
    copy_index(repo, None, index)
    git(repo, "add", "-A", "--", ":/", index=index)
    return git(repo, "write-tree", index=index).decode().strip()


def snapshot_uncommitted(repo: Path, parent: str, scratch: Path) -> str:
    """A commit of the work tree as it is (tracked and untracked, not ignored), on parent."""
    tree = worktree_tree(repo, scratch)
    return _commit_tree(repo, tree, parent, "fidelity: uncommitted changes")


def under(path: bytes, prefixes: Sequence[str]) -> bool:
    """Whether a git path is one of prefixes or inside one of them."""
    name = path.decode(errors="surrogateescape")
    return any(name == p or name.startswith(p + "/") for p in prefixes)


def overlay_commit(repo: Path, base: str, overlay: str, paths: Sequence[str], scratch: Path) -> str:
    """A commit of base's tree with everything under paths taken from overlay instead."""
    prefixes = [p.strip("/") for p in paths]
    entries = []
    for sha, keep_inside in ((base, False), (overlay, True)):
        out = git(repo, "ls-tree", "-r", "-z", "--full-tree", sha)
        for entry in out.split(b"\0"):
            if entry and under(entry.partition(b"\t")[2], prefixes) is keep_inside:
                entries.append(entry + b"\0")
    index = scratch / "overlay-index"
    git(repo, "update-index", "-z", "--index-info", stdin=b"".join(entries), index=index)
    tree = git(repo, "write-tree", index=index).decode().strip()
    return _commit_tree(repo, tree, base, f"fidelity: {', '.join(prefixes)} from {overlay[:12]}")


# the empty tree's id (`git hash-object -t tree /dev/null`): the base of a root commit
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _name_status(out: bytes) -> list[tuple[str, str]]:
    fields = out.split(b"\0")
    found = []
    for status, name in zip(fields[0::2], fields[1::2], strict=False):
        if status and name:
            found.append((status.decode()[:1], name.decode(errors="surrogateescape")))
    return found


def _untracked(repo: Path, index: Path | None = None) -> list[str]:
    args = ("ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", ":/")
    out = git(repo, *args, index=index)
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


def staged_changes(repo: Path, base: str, index: Path | None = None) -> list[tuple[str, str]]:
    """(A|M|D|T, path) for every path the index changes against base (a commit or tree)."""
    out = git(
        repo,
        "diff",
        "--cached",
        "--name-status",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        base,
        "--",
        index=index,
    )
    return _name_status(out)


def worktree_changes(repo: Path, base: str) -> list[tuple[str, str]]:
    """(A|M|D|T, path) for every path the work tree changes against base, untracked as A."""
    out = git(repo, "diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", base, "--")
    return _name_status(out) + [("A", p) for p in _untracked(repo)]


def unstaged_paths(repo: Path, index: Path | None = None) -> frozenset[str]:
    """Paths whose work-tree file is not what the index holds: modified, deleted, untracked."""
    out = git(repo, "diff", "--name-only", "-z", "--no-ext-diff", "--", index=index)
    tracked = {p.decode(errors="surrogateescape") for p in out.split(b"\0") if p}
    return frozenset(tracked | set(_untracked(repo, index)))


def staged_files(repo: Path, index: Path | None = None) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) for every file the index stages (stage 0; submodules left
    out); mode 120000 is a symbolic link."""
    listing = git(repo, "ls-files", "--stage", "-z", "--full-name", "--", ":/", index=index)
    entries = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[2] == b"0" and parts[0] != b"160000":
            entries[name.decode(errors="surrogateescape")] = (parts[0].decode(), parts[1].decode())
    return entries


def index_entries(repo: Path, index: Path | None = None) -> dict[str, str]:
    """path -> blob id for every file the index stages (stage 0; submodules left out)."""
    return {path: blob for path, (_, blob) in staged_files(repo, index).items()}


def read_tree(repo: Path, sha: str, index: Path) -> None:
    """Write commit sha's tree into the index file `index` (a scratch one, never the
    user's), so the tree can be judged as a staged content."""
    git(repo, "read-tree", f"{sha}^{{tree}}", index=index)


def checkout_index(repo: Path, dest: Path, index: Path | None = None) -> None:
    """Write every staged file under dest (which must exist); the index is only read."""
    git(repo, "checkout-index", "--all", "--force", f"--prefix={dest}/", index=index)
