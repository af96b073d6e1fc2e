"""`fidelity check-docs [PATHS]`: parse arguments, run the checkers, render, exit.

Exit 0 when every page is clean, 1 on findings, 2 on bad configuration or paths, 3 when
nothing was checked (a gate never passes without having looked at something).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from checkers import discover, report
from checkers.check import check_pages
from checkers.config import ConfigError
from checkers.config import load as load_config


def run(
    paths: Sequence[str],
    console: Console,
    cwd: Path,
    root: Path | None = None,
    json_path: str | None = None,
    update_ratchets: bool = False,
) -> int:
    """Check pages and render; ``json_path`` ``-`` writes JSON to stdout instead of text."""
    from fidelity.errors import UntrustedError, UsageError  # checkers import without fidelity

    root = (root or discover.find_root(cwd)).resolve()
    try:
        config = load_config(root)
        pages = discover.pages(root, cwd, paths, config.paths)
        if not pages:
            raise UntrustedError(
                "nothing to check: no Markdown files among "
                + (", ".join(paths) if paths else ", ".join(config.paths))
                + f" under {root}; pass PATHS or set [tool.fidelity.docs] paths"
            )
        result = check_pages(root, pages, config, update_ratchets)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if json_path == "-":
        sys.stdout.write(report.json_text(result))
    else:
        if json_path:
            Path(json_path).write_text(report.json_text(result), encoding="utf-8")
        report.render(result, console)
    return 1 if result.findings else 0


def _handler(args: argparse.Namespace, console: Console) -> int:
    return run(
        paths=args.paths,
        console=console,
        cwd=Path.cwd(),
        root=args.root,
        json_path=args.json,
        update_ratchets=args.update_ratchets,
    )


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "check-docs",
        help="check Markdown records: caps, fences, links, headings, keyed tables, ratchets",
        description="Check Markdown records against [tool.fidelity.docs]. With no PATHS, "
        "checks the root's README.md, AGENTS.md and records/*.md (or [tool.fidelity.docs] "
        "paths). Findings print as path:line:col: CODE message.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="files or folders")
    parser.add_argument(
        "--json", metavar="PATH", help="write findings as JSON to PATH ('-' for stdout only)"
    )
    parser.add_argument(
        "--root",
        type=Path,
        help="repository root holding pyproject.toml and the ratchets (default: nearest "
        "ancestor with .git)",
    )
    parser.add_argument(
        "--update-ratchets",
        action="store_true",
        help="lower ratchets in records/ratchets.json to the current counts (never raises)",
    )
    parser.set_defaults(handler=_handler)
