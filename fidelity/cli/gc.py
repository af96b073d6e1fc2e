"""`fidelity gc`: list, and with --apply remove, old runs and kept set-up worktrees."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console

KEEP_RUNS = 10  # the retention rule's defaults (fidelity.matrix.housekeeping.Rule)
KEEP_DAYS = 7.0


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of days >= 0, not {text}")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gc",
        help="list (and with --apply remove) old run directories and kept set-up worktrees",
        description="Lists what fidelity keeps in the repository's .fidelity/ folder, with "
        "its size and why it stays or goes; nothing is removed without --apply (a dry run by "
        "default, like `git clean -n`). What gc removes is only what fidelity's own record "
        "says it made: a run directory holding the .fidelity-made marker fidelity writes "
        "when it makes one, a set-up worktree that git lists as a worktree of this "
        "repository at its place under .fidelity/setups/, locked with fidelity's reason "
        "(`fidelity kept set-up ...`; removed through git only, `git worktree remove`, its "
        "venv with it), and a worktree a killed fidelity run left (its lock names the dead "
        "owner). A link inside .fidelity/ is never followed: it is listed as not fidelity's "
        "and left; .fidelity, runs/ or setups/ may themselves be links (to a bigger disk), "
        "and only fidelity's entries inside go. Folders without the marker, run directories "
        "made before fidelity wrote it included, other repositories' worktrees, your own "
        "worktrees and locks (and set-ups an older fidelity kept unlocked, until a run "
        "reuses one and adopts it) are listed and left, with the command that removes "
        "them. The "
        "rule: a run directory under .fidelity/runs/ "
        f"stays while it is among the newest --keep-runs (default {KEEP_RUNS}) or younger "
        f"than --keep-days (default {KEEP_DAYS:g}), and so does a controls run's under "
        ".fidelity/controls/ (its newest counted apart); an interrupted run (resumable with "
        "`fidelity run --resume`) stays unless --include-interrupted; a set-up worktree kept "
        "by reuse_setup stays while it was used within --keep-days. Never removed: a run "
        "directory or set-up a live fidelity run holds (a run holds its set-ups until it "
        "ends), anything outside .fidelity/ but a killed run's worktree. Exit 0 when it "
        "listed, or removed all it meant to; 1 when something could not be removed (named, "
        "with the command that removes it).",
    )
    p.add_argument(
        "--apply",
        action="store_true",
        help="remove what the listing marks `remove` (without it: a dry run that only lists)",
    )
    p.add_argument(
        "--keep-runs",
        type=options.count,
        default=KEEP_RUNS,
        metavar="N",
        help=f"keep the newest N run directories whatever their age (default {KEEP_RUNS})",
    )
    p.add_argument(
        "--keep-days",
        type=_days,
        default=KEEP_DAYS,
        metavar="D",
        help="keep run directories younger than D days, and set-up worktrees used within D "
        f"days (default {KEEP_DAYS:g}; 0 keeps none for their age)",
    )
    p.add_argument(
        "--include-interrupted",
        action="store_true",
        help="let the rule remove interrupted runs too (a running one is always kept)",
    )
    options.reports(p, "listing")
    options.repo(p)
    p.set_defaults(handler=_gc)


def _gc(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.git import worktrees
    from fidelity.matrix import housekeeping

    options.check_writable(args.json, args.markdown)
    repo = worktrees.toplevel(args.repo)
    rule = housekeeping.Rule(args.keep_runs, args.keep_days, args.include_interrupted)
    items = housekeeping.survey(repo, rule)
    if args.apply:
        items = housekeeping.apply(repo, items)
    report = housekeeping.Report(repo, rule, items, args.apply)
    title = f"fidelity gc{'' if args.apply else ' (dry run)'}: {repo}"
    return emit(
        console,
        title,
        report,
        report.summary(),
        json_path=args.json,
        markdown_path=args.markdown,
    )
