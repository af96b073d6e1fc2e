"""`fidelity demo`: build the demo repository and run every gate on it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    demo = sub.add_parser(
        "demo", help="build a small simulator repository and gate a refactor and a fix on it"
    )
    demo.add_argument(
        "--dir", type=Path, metavar="DIR", help="where to build it (default: a temp dir)"
    )
    demo.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help="where to write the HTML report of the fix gate (default: DIR/.fidelity/"
        "demo-report.html with --dir, else a new fidelity-demo-*.html in the temp folder)",
    )
    demo.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace, console: Console) -> int:
    from fidelity.demo import show

    return show.main(console, args.dir, args.html, quiet=args.quiet)
