"""`fidelity ab`: parse, run or read the measurements, render the verdict."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity import blas
from fidelity.cli import options
from fidelity.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from fidelity.ab.runner import AbReport


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ab",
        help="A/B timing verdict with an interval of at least 95%%: established or inconclusive",
        description="Runs the arms order-alternated (ABBA) after uncounted warm-ups, pairs "
        "adjacent runs, and gives B/A with an exact interval of at least 95% (Hodges-Lehmann "
        "on the order-balanced pairs; its exact level depends on the number of runs, e.g. "
        "96.8% for 10 ABBA runs per arm; past 10,000 pairs of runs a normal approximation "
        "within a stated error gives a lower bound of it, and the verdict says which); or "
        "judges recorded measurements (--from). "
        "`established` when the interval excludes 1. The verdict states the level and its "
        "false-claim rate (100% minus the level, at most 5%): the share of calls on two "
        "identical arms that would establish a difference, at any --reps. With -q it prints "
        "one record per line: each arm, each ratio, the verdict. A --control (shared work, "
        "run after the arm in every slot) "
        "corrects each run for drift. Exit 0 when a difference is established the expected "
        "way, 1 when not, 2 for bad arguments, 3 when a run failed or too few were recorded.",
    )
    p.add_argument("--a", metavar="CMD", help="the baseline arm's command")
    p.add_argument("--b", metavar="CMD", help="the candidate arm's command")
    p.add_argument(
        "--control",
        metavar="CMD",
        help="shared work the change does not touch, timed after the arm in every slot and "
        "divided out of its time (drift correction)",
    )
    p.add_argument(
        "--from", dest="measurements", type=Path, metavar="FILE", help="recorded CSV or JSON"
    )
    p.add_argument(
        "--reps",
        type=int,
        metavar="N",
        help="counted runs per arm (default 10; ABBA needs at least 8 for a 95%% interval)",
    )
    p.add_argument("--warmup", type=int, default=1, help="uncounted runs per arm (default 1)")
    p.add_argument(
        "--order",
        choices=["abba", "abab"],
        default="abba",
        help="abba (default) pairs runs so that run order cancels; abab is judged unpaired",
    )
    p.add_argument(
        "--expect",
        choices=["differ", "faster", "slower"],
        default="differ",
        help="what B should be relative to A (default: any established difference)",
    )
    p.add_argument(
        "--timeout", type=options.seconds, default=600.0, help="seconds per run (default 600)"
    )
    p.add_argument("--cwd-a", type=Path, metavar="DIR", help="run arm A (and its control) here")
    p.add_argument("--cwd-b", type=Path, metavar="DIR", help="run arm B (and its control) here")
    p.add_argument("--shell", action="store_true", help="run the commands under a shell")
    p.add_argument(
        "--without-control",
        action="store_true",
        help="with --from: look at runs measured with a control without it. Exploratory: "
        "an analysis chosen after seeing the runs never establishes a difference (it says "
        "what a fresh run without --control needs)",
    )
    options.reports(p)
    p.set_defaults(handler=_ab)


def _ab(args: argparse.Namespace, console: Console) -> int:
    from rich.console import Console as Terminal

    blas.load_numpy()  # the statistics: numpy, with one BLAS thread
    from fidelity.ab import session
    from fidelity.cli.plain import PlainConsole
    from fidelity.cli.report import emit, print_lines

    err = Terminal(stderr=True, highlight=False)
    options.check_writable(args.json, args.markdown)
    if args.without_control and not args.measurements:
        raise UsageError(
            "--without-control looks at recorded runs (--from FILE); a fresh run is measured "
            "without a control by leaving out --control"
        )
    if args.measurements:
        if args.a or args.b or args.control:
            raise UsageError("give either --from FILE or --a/--b commands, not both")
        report = session.from_file(args.measurements, args.expect, args.without_control)
        title = f"A/B from {args.measurements}"
    else:
        report, title = _run(args, console, err), "A/B timing"
    records = isinstance(console, PlainConsole)  # -q: the records alone, one per line
    code = emit(
        console,
        title,
        report,
        report.summary(),
        json_path=args.json,
        markdown_path=args.markdown,
        show=not records,
    )
    if records and not options.to_stdout(args.json):
        print_lines(console, report.records())
    return code


def _run(args: argparse.Namespace, console: Console, err: Console) -> AbReport:
    blas.load_numpy()
    from fidelity.ab import session
    from fidelity.cli.plain import PlainConsole

    if not (args.a and args.b):
        raise UsageError("name both arms: --a CMD --b CMD (or judge recorded --from FILE)")
    for flag, folder in (("--cwd-a", args.cwd_a), ("--cwd-b", args.cwd_b)):
        if folder is not None and not folder.is_dir():
            raise UsageError(f"{flag} {folder}: no such folder; name the folder the arm runs in")
    plan = session.Plan(
        a=args.a,
        b=args.b,
        control=args.control,
        reps=session.DEFAULT_REPS if args.reps is None else args.reps,
        warmup=args.warmup,
        order=args.order,
        timeout_s=args.timeout,
        expect=args.expect,
        shell=args.shell,
        cwd_a=args.cwd_a,
        cwd_b=args.cwd_b,
    )
    # with the JSON on standard output, or only records under -q, progress goes to stderr
    say = err if options.to_stdout(args.json) or isinstance(console, PlainConsole) else console
    return session.run(plan, lambda line: say.print(line, markup=False, highlight=False))
