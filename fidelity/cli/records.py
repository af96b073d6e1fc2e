"""`fidelity merge-records`: the git merge driver for keyed record tables."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    p = sub.add_parser(
        "merge-records",
        help="git merge driver: merge keyed record tables row by row, by key",
        description="git's merge-driver protocol: `fidelity merge-records %O %A %B %P` writes "
        "the merge of BASE, OURS and THEIRS into OURS and exits 0 when clean, 1 on a conflict "
        "(marked around the row). Configure it with `fidelity install-hooks`, or paste what "
        "`fidelity merge-records --print-driver` prints: "
        '`git config merge.fidelity-records.driver "$(fidelity merge-records '
        "--print-driver)\"`; that line runs this installation's interpreter by its path, so "
        "it works where `fidelity` is not on git's PATH, and falls back to git's own merge "
        "(with conflict markers) when that interpreter is gone. Assign it in .gitattributes: "
        "`records/*.md merge=fidelity-records`. The key column is the one "
        "[[tool.fidelity.records]] names for PATH (or --key).",
    )
    p.add_argument(
        "--print-driver",
        action="store_true",
        help="print the line for `git config merge.fidelity-records.driver` and exit",
    )
    p.add_argument(
        "base", type=Path, nargs="?", metavar="BASE", help="%%O: the merge base's version"
    )
    p.add_argument(
        "ours", type=Path, nargs="?", metavar="OURS", help="%%A: ours; the result is written here"
    )
    p.add_argument("theirs", type=Path, nargs="?", metavar="THEIRS", help="%%B: theirs")
    p.add_argument("path", nargs="?", metavar="PATH", help="%%P: the record's path in the repo")
    p.add_argument("--key", help="the key column's header (default: from the record's entry)")
    p.add_argument(
        "--marker-size",
        type=options.positive_int,
        default=7,
        metavar="N",
        help="conflict marker length (git's %%L)",
    )
    p.set_defaults(handler=_merge_records)


def _merge_records(args: argparse.Namespace, console: Console) -> int:
    import sys

    from fidelity.errors import UsageError
    from fidelity.git import worktrees
    from fidelity.recordmerge import driver

    if args.print_driver:
        sys.stdout.write(driver.git_line(sys.executable) + "\n")
        return 0
    if args.theirs is None:
        raise UsageError(
            "merge-records takes BASE OURS THEIRS [PATH] (git's %O %A %B %P); "
            "`--print-driver` prints the line to configure"
        )
    try:
        repo = worktrees.toplevel(Path.cwd())
    except UsageError:
        repo = Path.cwd()
    outcome = driver.run(
        args.base,
        args.ours,
        args.theirs,
        path=args.path,
        key=args.key,
        marker=args.marker_size,
        repo=repo,
    )
    for note in outcome.notes:
        sys.stderr.write(f"fidelity merge-records: {args.path or args.ours}: {note}\n")
    return 1 if outcome.conflicts else 0
