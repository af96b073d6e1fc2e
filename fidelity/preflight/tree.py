"""The content being judged, and how it differs from the commit it would sit on.

With `staged`, that content is the index: a file whose work-tree bytes are not what the
index holds (an unstaged edit, or a file the index does not have) is read from its staged
blob, so an unstaged fix cannot hide a staged defect. A gate that needs a folder (the
Markdown checkers resolve links on disk) gets the work tree itself when it holds exactly
the staged files, else a scratch copy of the index, written only then. Not guaranteed:
files that `.gitignore` ignores are not in the index but stay visible in the work tree, so
a link to an ignored file resolves there.

Without `staged`, the work tree is judged as it is, untracked files included.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fidelity.git import objects, stage


@dataclass(frozen=True, slots=True)
class Changes:
    """The paths a change adds, modifies or deletes (repository-relative, POSIX)."""

    changed: frozenset[str]  # added, modified or type-changed
    deleted: frozenset[str]
    everything: bool = False  # --all: every gate treats every input as changed

    def touched(self, path: str) -> bool:
        return self.everything or path in self.changed or path in self.deleted

    def __bool__(self) -> bool:
        return self.everything or bool(self.changed or self.deleted)

    @property
    def paths(self) -> frozenset[str]:
        return self.changed | self.deleted


class Tree:
    """Reads files of the judged content; see the module docstring for what that is."""

    def __init__(
        self, repo: Path, staged: bool, index: Path | None, scratch: Path, label: str = ""
    ) -> None:
        self.repo = repo
        self.staged = staged
        self.index = index
        self._label = label
        self._scratch = scratch
        files = stage.staged_files(repo, index) if staged else {}
        self._entries: dict[str, str] = {path: blob for path, (_, blob) in files.items()}
        self._links = frozenset(path for path, (mode, _) in files.items() if mode == "120000")
        self._unstaged = stage.unstaged_paths(repo, index) if staged else frozenset()
        self._blobs: dict[str, bytes] = {}
        self._folder: Path | None = repo if not self._unstaged else None

    @property
    def label(self) -> str:
        return self._label or ("the index" if self.staged else "the work tree")

    def _inside(self, path: str) -> Path | None:
        target = (self.repo / path).resolve()
        return target if target.is_relative_to(self.repo.resolve()) else None

    def read(self, path: str) -> bytes | None:
        """The bytes of a repository-relative path in the judged content, or None."""
        if self.staged:
            if path not in self._entries:
                return None
            if path in self._unstaged:
                return self._blob(path)
        target = self._inside(path)
        if target is None or not target.is_file():
            return None
        return target.read_bytes()

    def _blob(self, path: str) -> bytes:
        if path not in self._blobs:
            wanted = [p for p in self._unstaged if p in self._entries and p not in self._blobs]
            blobs = objects.cat_blobs(self.repo, [self._entries[p] for p in wanted])
            self._blobs.update(zip(wanted, blobs, strict=True))
        return self._blobs[path]

    def is_link(self, path: str) -> bool:
        """Whether path is a symbolic link in the judged content (retargeting one can break
        every Markdown link that goes through it)."""
        if self.staged:
            return path in self._links
        target = self.repo / path
        return target.is_symlink()

    def exists(self, path: str) -> bool:
        if self.staged:
            return path in self._entries
        target = self._inside(path)
        return target is not None and target.exists()

    def folder(self) -> Path:
        """A directory holding the judged content: the work tree, or a copy of the index."""
        if self._folder is None:
            dest = self._scratch / "index"
            dest.mkdir()
            stage.checkout_index(self.repo, dest, self.index)
            self._folder = dest
        return self._folder


def given(repo: Path, paths: Sequence[str]) -> Changes:
    """The change a caller names file by file (pre-commit's `--all-files`, `--files`):
    paths that exist are changed, the others deleted."""
    names = [p.replace(os.sep, "/").removeprefix("./") for p in paths]
    gone = frozenset(n for n in names if not (repo / n).exists() and not (repo / n).is_symlink())
    return Changes(frozenset(names) - gone, gone)


def changes(repo: Path, tree: Tree, base: str | None, everything: bool) -> Changes:
    """What the judged content changes against base (default HEAD; the empty tree when the
    repository has no commit yet)."""
    against = base or objects.resolve(repo, "HEAD") or stage.EMPTY_TREE
    if tree.staged:
        pairs = stage.staged_changes(repo, against, tree.index)
    else:
        pairs = stage.worktree_changes(repo, against)
    deleted = frozenset(p for status, p in pairs if status == "D")
    changed = frozenset(p for status, p in pairs if status != "D")
    return Changes(changed, deleted, everything)


@contextmanager
def judged(
    repo: Path, staged: bool, index: Path | None, commit: str | None = None, label: str = ""
) -> Iterator[Tree]:
    """A Tree whose scratch space is removed on the way out, also after an error. With
    commit, the content is that commit's tree, staged into a scratch index of its own."""
    with tempfile.TemporaryDirectory(prefix="fidelity-preflight-") as scratch:
        if commit is None:
            yield Tree(repo, staged, index, Path(scratch), label)
            return
        own = Path(scratch, "commit.index")
        stage.read_tree(repo, commit, own)
        yield Tree(repo, True, own, Path(scratch), f"commit {commit[:12]}")
