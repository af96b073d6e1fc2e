"""Which files to check, where the repository root is, and how to name them.

Folders are searched for ``*.md`` and ``*.markdown``, skipping hidden folders, what the
``exclude`` globs match, and what ``ignored`` says (the command line passes git's ignore
rules). Files named explicitly are always checked. Nothing outside the root is checked:
a named path outside it is a usage error; symlinks are not followed into folders, and a
file that is a symlink to outside the root is reported when it is read, never opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from checkers.check import Page
from checkers.config import ConfigError

SUFFIXES = (".md", ".markdown")
Excluded = Callable[[str], bool]


def find_root(start: Path) -> Path:
    """Nearest ancestor holding ``.git``, else ``pyproject.toml``, else ``start`` itself."""
    start = Path(os.path.abspath(start))
    for marker in (".git", "pyproject.toml"):
        for folder in (start, *start.parents):
            if (folder / marker).exists():
                return folder
    return start


def _name(path: str, base: str) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _markdown_under(folder: str, root: str, excluded: Excluded) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        base = _name(dirpath, root)
        prefix = "" if base == "." else base + "/"
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and not excluded(prefix + d) and not excluded(prefix + d + "/")
        )
        found += [
            os.path.join(dirpath, f)
            for f in sorted(filenames)
            if f.lower().endswith(SUFFIXES) and not excluded(prefix + f)
        ]
    return found


def _named(raw: str, cwd: Path, root: str) -> str:
    path = os.path.abspath(cwd / raw)
    if not _inside(path, root):
        raise ConfigError(
            f"{raw}: outside the repository root {root}; check-docs reads only inside it "
            "(pass --root to check another repository)"
        )
    if not os.path.lexists(path):
        raise ConfigError(f"{raw}: no such file or directory")
    return path


def pages(
    root: Path,
    cwd: Path,
    paths: Sequence[str],
    default_globs: Sequence[str],
    excluded: Excluded = lambda rel: False,
) -> tuple[Page, ...]:
    """Pages for the given paths (files, or folders searched for Markdown), else the globs."""
    top = os.path.abspath(root)
    files: list[str] = []
    if paths:
        for raw in paths:
            path = _named(raw, cwd, top)
            files += _markdown_under(path, top, excluded) if os.path.isdir(path) else [path]
    else:
        for pattern in default_globs:
            matches = sorted(str(p) for p in Path(top).glob(pattern) if not p.is_dir())
            files += [p for p in matches if not excluded(_name(p, top))]
    here = os.path.abspath(cwd)
    return tuple(Page(_name(p, top), _name(p, here)) for p in dict.fromkeys(files))
