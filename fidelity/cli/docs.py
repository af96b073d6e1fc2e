"""`fidelity check-docs [PATHS]`: parse arguments, run the checkers, render.

Exit 0 when every page is clean, 1 on findings, 2 on bad configuration or paths, 3 when
nothing was checked (a gate never passes without having looked at something).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "check-docs",
        help="check Markdown records: caps, fences, links, headings, keyed tables, ratchets",
        description="Check Markdown records against [tool.fidelity.docs]. With no PATHS, "
        "checks the root's README.md, AGENTS.md and records/*.md (or [tool.fidelity.docs] "
        "paths). Findings print as path:line:col: CODE message.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="files or folders")
    parser.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help="write findings as JSON to PATH ('-' for stdout only)",
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
    parser.set_defaults(handler=_check_docs)


def _check_docs(args: argparse.Namespace, console: Console) -> int:
    from checkers import report
    from checkers.tree import check_tree

    options.check_writable(args.json)
    result = check_tree(args.paths, Path.cwd(), args.root, args.update_ratchets)
    options.write(args.json, report.json_text(result))
    if not options.to_stdout(args.json):
        report.render(result, console)
    return 1 if result.findings else 0
