"""Which files to check, where the repository root is, and how to name them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from checkers.check import Page
from checkers.config import ConfigError

SUFFIXES = (".md", ".markdown")


def find_root(start: Path) -> Path:
    """Nearest ancestor holding ``.git``, else ``pyproject.toml``, else ``start`` itself."""
    start = start.resolve()
    for marker in (".git", "pyproject.toml"):
        for folder in (start, *start.parents):
            if (folder / marker).exists():
                return folder
    return start


def _name(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, base)).as_posix()


def _page(path: Path, root: Path, cwd: Path) -> Page:
    path = path.resolve()
    return Page(_name(path, root), _name(path, cwd))


def _markdown_under(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [Path(dirpath, f) for f in sorted(filenames) if f.lower().endswith(SUFFIXES)]
    return found


def pages(
    root: Path, cwd: Path, paths: Sequence[str], default_globs: Sequence[str]
) -> tuple[Page, ...]:
    """Pages for the given paths (files, or folders searched for Markdown), else the globs."""
    files: list[Path] = []
    if paths:
        for raw in paths:
            path = cwd / raw
            if path.is_dir():
                files += _markdown_under(path)
            elif path.is_file():
                files.append(path)
            else:
                raise ConfigError(f"{raw}: no such file or directory")
    else:
        for pattern in default_globs:
            files += sorted(p for p in root.glob(pattern) if p.is_file())
    unique = dict.fromkeys(p.resolve() for p in files)
    return tuple(_page(p, root, cwd.resolve()) for p in unique)
