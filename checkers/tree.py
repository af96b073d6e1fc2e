"""`check-docs` over a tree: find the root and its configuration, the pages, then check."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checkers import discover
from checkers.check import Result, check_pages
from checkers.config import load
from checkers.errors import NothingToCheck


def check_tree(
    paths: Sequence[str], cwd: Path, root: Path | None = None, update_ratchets: bool = False
) -> Result:
    """The pages named (or configured) under root; NothingToCheck when there are none."""
    root = (root or discover.find_root(cwd)).resolve()
    config = load(root)
    pages = discover.pages(root, cwd, paths, config.paths)
    if not pages:
        named = ", ".join(paths) if paths else ", ".join(config.paths)
        raise NothingToCheck(
            f"nothing to check: no Markdown files among {named} under {root}; "
            "pass PATHS or set [tool.fidelity.docs] paths"
        )
    return check_pages(root, pages, config, update_ratchets)
