"""The harness checkout: the harness revision's files, once per run, read by both sides.

Source at two revisions, harness at one. A case's driver script, its helpers and fixtures
belong to the harness (the revision the table is read from), not to either side: a script
added today must drive a commit of last year. When a table names `{harness}`, the
harness revision's tree (or, for a table read from the checkout, the checkout's files as
they are, uncommitted ones included) is written once into a fresh folder outside the
repository, made read-only, and both sides' cases read it there. After the cases ran the
folder is checked against what was written: anything a case added, changed or removed in
it is a finding (`harness-changed`), since the two sides may then have read different
harnesses. Bytecode counts too: cases run with PYTHONDONTWRITEBYTECODE (`runner.side_env`),
so a `.pyc` in a `__pycache__` folder there was put there, and Python would run it in place
of the committed module beside it whenever its header matches that module's size and time.
A committed link that leads out of the folder is refused before anything runs (`links_out`):
a case could write through it into a file both sides read, and nothing here would show it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fidelity.git import export, stage

_WRITE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def tree(repo: Path, sha: str, from_checkout: bool) -> str:
    """The harness's tree: the commit's, or the checkout's files as they are (written to
    the object store through a scratch index; the user's index is only read)."""
    if not from_checkout:
        return export.tree_of(repo, sha)
    with tempfile.TemporaryDirectory(prefix="fidelity-index-") as scratch:
        return stage.worktree_tree(repo, Path(scratch))


HOPS = 40  # links followed in one path before the kernel gives up (ELOOP)


def escapes(link: str, links: Mapping[str, str]) -> bool:
    """Whether a link of the tree leads out of its top, resolved as the kernel resolves it:
    component by component, through the tree's other links. (Lexically `b -> a/../x` stays
    inside, but not after `a -> .`.) A loop counts as leading out: nothing vouches for it."""
    target = links[link]
    where, todo, hops = link.split("/")[:-1], target.split("/")[::-1], 0
    if target.startswith("/"):
        return True
    while todo:
        part = todo.pop()
        if part == "..":
            if not where:
                return True
            where.pop()
        elif part not in ("", "."):
            where.append(part)
            further = links.get("/".join(where))
            if further is not None:
                hops += 1
                if hops > HOPS or further.startswith("/"):
                    return True
                where.pop()
                todo += further.split("/")[::-1]
    return False


def links_out(repo: Path, tree_id: str, paths: Sequence[str]) -> list[str]:
    """`path -> target` of each link of the harness tree (its `paths`, or all of it) that
    leads out of the folder it is written to."""
    found = export.links(repo, tree_id, paths)
    return [f"{link} -> {found[link]}" for link in sorted(found) if escapes(link, found)]


@dataclass(slots=True)
class Checkout:
    """The harness folder of one run; `changed` is filled in when the run is done with it."""

    path: Path
    files: int
    changed: list[str] = field(default_factory=list)


def _chmod_tree(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            path.chmod(mode | stat.S_IWUSR if writable else mode & ~_WRITE)
    mode = root.stat().st_mode
    root.chmod(mode | stat.S_IWUSR if writable else mode & ~_WRITE)


def _remove(base: Path) -> None:
    with contextlib.suppress(OSError):
        _chmod_tree(base, writable=True)
    shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def checked_out(repo: Path, tree_id: str, paths: Sequence[str]) -> Iterator[Checkout]:
    """The harness tree (its `paths`, or all of it) in a fresh read-only folder, removed
    afterwards, also on error and Ctrl-C."""
    base = Path(tempfile.mkdtemp(prefix="fidelity-harness-"))
    index, folder = base / "index", base / "harness"
    folder.mkdir()
    try:
        checkout = Checkout(folder, export.export(repo, tree_id, folder, index, paths))
        _chmod_tree(folder, writable=False)
        export.refresh(repo, folder, index)
        yield checkout
        checkout.changed = export.changed_in(repo, folder, index)
    finally:
        _remove(base)
