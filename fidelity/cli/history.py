"""`fidelity stale|landed|trailers`: parse, call the history command, render its report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    _register_stale(sub)
    _register_landed(sub)
    _register_trailers(sub)


def _register_stale(sub: Any) -> None:
    p = sub.add_parser(
        "stale",
        help="which record rows were measured on unlanded commits or have gone stale?",
        description="Checks [[tool.fidelity.records]] (or the RECORD files named, inside the "
        "repository). A row's commit has landed when it is an ancestor of the ref or a commit "
        "there carries its patch (squash or cherry-pick), as `fidelity landed` says. Exit 0 "
        "when every row is fresh, 1 when a row is stale, unlanded, reverted, unknown or has no "
        "commit, 2 for bad config or a record outside the repository, 3 when there is no row "
        "to check or the clone is shallow.",
    )
    p.add_argument("records", nargs="*", metavar="RECORD", help="default: every configured one")
    p.add_argument("--ref", default="HEAD", help="the reference branch (default HEAD)")
    p.add_argument(
        "--stale-after", type=options.count, help="override the configured threshold (>= 0)"
    )
    p.add_argument("--watch", action="append", metavar="PATH", help="override watched paths")
    p.add_argument("--key", help="override the key column's header")
    p.add_argument("--commit-column", help="override the commit column's header")
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 instead of 3 when the records hold no rows yet (says so)",
    )
    options.reports(p)
    options.repo(p)
    p.set_defaults(handler=_stale)


def _stale(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.git import worktrees
    from fidelity.history import stale

    options.check_writable(args.json, args.markdown)
    overrides = {
        "key": args.key,
        "commit_column": args.commit_column,
        "watch": tuple(args.watch) if args.watch else None,
        "stale_after": args.stale_after,
    }
    repo = worktrees.toplevel(args.repo)
    report = stale.check_configured(repo, args.ref, args.records, overrides)
    title = f"stale rows against {args.ref}"
    summary, code = report.summary(), None
    if args.allow_empty and not report.checks:
        summary = (
            f"nothing to check: no rows in {', '.join(report.records)}; exit 0 only because "
            "--allow-empty was given"
        )
        code = 0
    code = emit(
        console, title, report, summary, json_path=args.json, markdown_path=args.markdown, code=code
    )
    from fidelity.cli import annotate  # at use: dataclasses, not at start-up

    annotate.emit(console, args.json, annotate.stale(report, code))
    return code


def _register_landed(sub: Any) -> None:
    p = sub.add_parser(
        "landed",
        help="did the commits and symbols a change builds on land on the ref?",
        description="A commit holds when it landed on the ref (an ancestor, or its patch "
        "carried by a commit there: cherry-pick or squash) and was not reverted since. A "
        "symbol holds when the ref's tree contains it as a whole identifier. Exit 0 when every "
        "claim holds, 1 when one does not, 2 for an unknown revision, 3 in a shallow clone.",
    )
    p.add_argument("--ref", default="HEAD", help="the branch the claims are about (default HEAD)")
    p.add_argument("--commit", action="append", default=[], metavar="SHA", help="repeatable")
    p.add_argument(
        "--symbol",
        action="append",
        default=[],
        metavar="NAME",
        help="an identifier, matched as a whole name (repeatable)",
    )
    options.reports(p)
    options.repo(p)
    p.set_defaults(handler=_landed)


def _landed(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.git import worktrees
    from fidelity.history import landed

    options.check_writable(args.json, args.markdown)
    report = landed.check(worktrees.toplevel(args.repo), args.ref, args.commit, args.symbol)
    title = f"landed on {args.ref}"
    code = emit(
        console, title, report, report.summary(), json_path=args.json, markdown_path=args.markdown
    )
    from fidelity.cli import annotate  # at use: dataclasses, not at start-up

    annotate.emit(console, args.json, annotate.summary("landed", report, report.summary()))
    return code


def _register_trailers(sub: Any) -> None:
    p = sub.add_parser(
        "trailers",
        help="check commit trailers ([tool.fidelity.trailers]) on a message file or a range",
        description='As a commit-msg hook: `fidelity trailers --message-file "$1"`. In CI: '
        "`fidelity trailers --range origin/main..HEAD`. Exit 0 when every message keeps "
        "the rules, 1 on a finding, 2 for bad config or revisions, 3 for an empty range.",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--range", metavar="A..B", help="every non-merge commit in A..B")
    which.add_argument(
        "--message-file", type=Path, metavar="F", help="a commit message being written"
    )
    options.reports(p)
    options.repo(p)
    p.set_defaults(handler=_trailers)


def _trailers(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.plain import PlainConsole
    from fidelity.cli.report import emit, print_lines
    from fidelity.git import worktrees
    from fidelity.history import trailers

    options.check_writable(args.json, args.markdown)
    report = trailers.check(worktrees.toplevel(args.repo), args.message_file, args.range)
    if not options.to_stdout(args.json):
        print_lines(console, [finding.render() for finding in report.findings])
    quiet = isinstance(console, PlainConsole)  # each finding once: the table would repeat it
    title, summary = "commit trailers", report.summary()
    code = emit(
        console,
        title,
        report,
        summary,
        json_path=args.json,
        markdown_path=args.markdown,
        show=not quiet,
    )
    if quiet and not options.to_stdout(args.json):
        print_lines(console, _unflagged(title, report, summary))
    from fidelity.cli import annotate  # at use: dataclasses, not at start-up

    annotate.emit(console, args.json, annotate.trailers(report, args.message_file))
    return code


def _unflagged(title: str, report: Any, summary: str) -> list[str]:
    """Under -q, after the located findings: the messages that broke no rule as a table
    (its finding rows left out), then the summary."""
    from fidelity.cli.report import Listing, plain_lines

    columns, rows = report.table()
    ok = [row for row in rows if row[2] == "ok"]
    return plain_lines(title, Listing(columns, ok), summary) if ok else [summary]
