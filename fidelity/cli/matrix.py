"""`fidelity run|compare|verify|cases`: argument parsing and rendering only."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import html, options
from fidelity.errors import UsageError
from fidelity.matrix.run import shards
from fidelity.text import counted

if TYPE_CHECKING:
    from rich.console import Console

    from fidelity.matrix.run.request import RunRequest


def register(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run the case matrix at two revisions and compare them case by case",
        description="Run every case of the harness's case table at the baseline and the "
        "candidate, each in its own clean detached worktree, and compare the evidence.",
    )
    run.add_argument(
        "--baseline", metavar="REV", help="the reference revision (required, except with --resume)"
    )
    run.add_argument("--candidate", metavar="REV", help="default: HEAD")
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="finish an interrupted run: only cases without complete evidence run again "
        "(refused if the table or a side's commit changed); in the repository it began in, "
        "from any folder, unless --repo names another. It keeps every option it began with: "
        "it takes --jobs, and --baseline/--candidate naming the same commits, and refuses "
        "(exit 2) the options that say what the run is (--cases, --case, --shard, ...)",
    )
    _table(run)
    run.set_defaults(repo=None)  # --resume: the run's own repository, unless --repo is given
    run.add_argument(
        "--harness",
        metavar="REV",
        help="read the case table from this revision (default: the current checkout)",
    )
    run.add_argument(
        "--out", type=Path, metavar="DIR", help="run directory (default .fidelity/runs/...)"
    )
    run.add_argument(
        "--resume-if-exists",
        action="store_true",
        help="with --out DIR, for a job its scheduler may start again (a requeue, a pod "
        "restart, a re-run): when DIR holds this same run unfinished, resume it; complete, "
        "judge it again; nothing judged, start afresh; another run, refuse (exit 2)",
    )
    options.jobs(
        run,
        2,
        "case processes at once across both sides (default 2: one per side). A side runs at "
        "most half of them at once, since its cases share its worktree; raise it only when "
        "cases write nothing but {out} and {cache}",
    )
    run.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="ID",
        help="run only this case (repeatable): a partial run, said so in the verdict",
    )
    run.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="run only the cases with this tag (repeatable; with --case, either selects)",
    )
    run.add_argument(
        "--shard",
        metavar="K/N|auto",
        help="run shard K of N: a deterministic share of the cases for one CI job "
        "(merge the shards with `fidelity merge`); an empty shard is valid (N may exceed the "
        f"number of cases, up to 2,147,483,647; a larger N is refused). {shards.AUTO_HELP}; "
        "it refuses (exit 2) when none is set, a value is not a whole number, or two disagree",
    )
    run.add_argument(
        "--shard-durations",
        type=Path,
        metavar="RUN_DIR",
        help="balance the shards by the case durations of an earlier run (else by count)",
    )
    run.add_argument(
        "--replay",
        choices=("cold-warm", "twice"),
        help="run every case again on its own side, as if each had `replay` in the table "
        "(a case's own `replay` wins): `cold-warm` runs a case with a `cache_env` once more "
        "with a copy of the cache its first run wrote, `twice` (and `cold-warm` for a case "
        "without a cache) once more from scratch; each side's replay verdict is reported "
        "and a diverging, unused or failing replay fails the gate (exit 1)",
    )
    run.add_argument(
        "--expect",
        metavar="FILE",
        help="the predicted move set, read from the harness like the table; the verdict is "
        "HELD only when exactly the predicted cases move",
    )
    _reports(run)
    run.set_defaults(handler=_run)

    merge = sub.add_parser(
        "merge",
        help="combine the shards of one run into one run directory, and judge it",
        description="Refuses shards of different harness revisions, tables, commits or "
        "predictions. Each shard's output and cache files are hashed again against its "
        "run.json before combining: a file changed, missing or added is a finding naming the "
        "shard (exit 3). A declared case that ran in no shard, or in two, is a finding. "
        "compare, verify and the reports then read the merged run as any run.",
    )
    merge.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    merge.add_argument("--out", type=Path, required=True, metavar="DIR", help="the merged run")
    _reports(merge)
    merge.set_defaults(handler=_merge)

    compare = sub.add_parser(
        "compare", help="re-render the verdict of a run directory, re-checking its evidence"
    )
    compare.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    _reports(compare)
    compare.set_defaults(handler=_compare)

    verify = sub.add_parser(
        "verify",
        help="judge a stored run against its prediction",
        description="Judge a run directory against the prediction recorded before the run, "
        "or against --expect FILE; a prediction that differs from the recorded one, or that "
        "was never recorded, is a provenance finding (exit 3), not a pass.",
    )
    verify.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    verify.add_argument("--expect", type=Path, metavar="FILE", help="the prediction to judge by")
    _reports(verify)
    verify.set_defaults(handler=_verify)

    cases = sub.add_parser("cases", help="validate or list a case table")
    options.quiet(cases)
    actions = cases.add_subparsers(dest="cases_command", metavar="ACTION", required=True)
    validate = actions.add_parser("validate", help="check a case table against the schema")
    validate.add_argument("file", nargs="?", type=Path, metavar="FILE")
    validate.add_argument("--repo", type=Path, default=Path("."), help=argparse.SUPPRESS)
    validate.set_defaults(handler=_cases_validate)
    listing = actions.add_parser("list", help="list the cases of a table")
    listing.add_argument("file", nargs="?", type=Path, metavar="FILE", help="a table anywhere")
    _table(listing)
    listing.set_defaults(handler=_cases_list)


def _reports(parser: argparse.ArgumentParser) -> None:
    options.reports(parser, "verdict", junit="case")
    options.html(parser)
    options.partial(parser)
    parser.add_argument("--all", action="store_true", help="list identical cases too")


def _table(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", metavar="FILE", help="case table (default from [tool.fidelity])")
    options.repo(parser)


def _cases_path(given: str | None, repo: Path) -> str:
    from fidelity import config

    return str(given or config.setting(repo, "cases", config.DEFAULT_CASES))


def _run(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli import stale_worktrees
    from fidelity.cli.progress import shown
    from fidelity.git import worktrees
    from fidelity.matrix import gate
    from fidelity.matrix.run.request import RunHooks

    options.check_writable(args.json, args.markdown, args.junit, args.html)
    _check_run_args(args)
    request = _request(args)
    repo = worktrees.toplevel(args.repo or _began_in(args.resume) or Path("."))
    stale_worktrees.prune(repo, args.quiet)
    taken = options.to_stdout(args.json)
    with shown(console, args.quiet, "run", "case runs", stdout_taken=taken) as advance:
        hooks = RunHooks(progress=advance, warn=_warn_early, note=_note)
        if args.resume is not None:
            outcome = gate.run_resumed(repo, args.resume, request, hooks)
        elif args.resume_if_exists:
            from fidelity.matrix import restart

            outcome = restart.run(repo, request, hooks)
        else:
            outcome = gate.run(repo, request, hooks)
    return _show(outcome, args, console, repo)


def _check_run_args(args: argparse.Namespace) -> None:
    """UsageError for options that do not go together, before anything is read (a resume
    refuses the options it cannot take itself: `RunRequest.check_resumable`)."""
    if args.baseline is None and args.resume is None:
        raise UsageError("name the reference revision: --baseline REV")
    if args.resume_if_exists and (args.out is None or args.resume is not None):
        raise UsageError(
            "--resume-if-exists names no folder of its own: give it with --out DIR (the folder "
            "a restarted job finds again), without --resume"
        )


def _request(args: argparse.Namespace) -> RunRequest:
    """The run the options ask for, `--shard auto` read from the job engine's variables."""
    from fidelity.matrix.run.request import RunRequest, Shard

    return RunRequest(
        args.baseline,
        args.candidate,
        cases=args.cases,
        harness_rev=args.harness,
        expect=args.expect,
        selectors=(*args.case, *(f"tag:{t}" for t in args.tag)),
        shard=Shard.given(args.shard, os.environ),
        durations=_durations(args.shard_durations),
        replay=args.replay,
        partial=args.partial,
        out=args.out,
        jobs=args.jobs,
        ci=options.under_ci(os.environ),
    )


def _began_in(run_dir: Path | None) -> Path | None:
    from fidelity.matrix.run import ledger

    return ledger.began_in(run_dir) if run_dir is not None else None


def _note(text: str) -> None:
    """A line on standard error about what the run does first."""
    sys.stderr.write(f"fidelity: {text}\n")


def _warn_early(findings: Any) -> None:
    """Findings the run is sure to end with, on standard error before any case runs."""
    if not findings:
        return
    from rich.console import Console

    from fidelity.matrix.verdict import words

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(
        "fidelity: this run will end untrusted (exit 3) whatever its cases do; stop it "
        "(Ctrl-C) and fix these first, or let it run to see the evidence:",
        markup=False,
    )
    for finding in findings:
        err.print(f"  {words.finding_line(finding)}", markup=False)


def _show(
    outcome: Any, args: argparse.Namespace, console: Console, root: Path | None = None
) -> int:
    """Write every report asked for, render to the terminal, then annotate under GitHub
    Actions (at the case table under root, default the working directory); the exit code.
    A report that cannot be written is an error (exit 2) once the verdict has been shown."""
    from fidelity.cli import annotate
    from fidelity.cli.console import Lazy, plain_file

    failed = _write_reports(outcome, args)
    if not options.to_stdout(args.json):
        if args.quiet and isinstance(console, Lazy):  # its lines, without making a console
            from fidelity.matrix.verdict import plain

            plain.write(plain_file(console), outcome, args.all)
        else:
            from fidelity.matrix.verdict import render

            render.outcome(console, outcome, args.all, plain=args.quiet)
        if failed is None:
            html.said(console, args.html)
    notes = annotate.outcome(args.command, outcome, root or Path.cwd())
    annotate.emit(console, args.json, notes)
    if failed is not None:
        raise failed
    code: int = outcome.exit_code
    return code


def _write_reports(outcome: Any, args: argparse.Namespace) -> options.ReportError | None:
    """--json, --markdown, --junit, --html in turn; the first that cannot be written stops
    them."""
    if not (args.json or args.markdown or args.junit or args.html):
        return None  # none asked for: the reports' modules are not imported
    from fidelity.matrix import reports
    from fidelity.matrix.run import rundir

    try:
        if args.json:
            report = rundir.plain(reports.json_report(outcome))  # JSON: NaN's sizes as null
            options.write(args.json, json.dumps(report, indent=2) + "\n")
        options.write_markdown(args.markdown, lambda limit: reports.markdown(outcome, limit))
        if args.junit:
            from fidelity import report_junit  # xml.etree: only for a JUnit file

            xml = report_junit.to_xml("fidelity", reports.junit_cases(outcome))
            options.save(args.junit, xml)
        html.run_page(args.html, outcome)
    except options.ReportError as exc:  # the run directory is whole: its reports can be remade
        where = outcome.run_dir
        again = f"; the run is kept whole in {where}: `fidelity compare {where}` writes them again"
        return options.ReportError(exc.path, exc.error, again)
    return None


def _durations(run_dir: Path | None) -> dict[str, float] | None:
    from fidelity.matrix.run import rundir

    return rundir.durations(run_dir) if run_dir is not None else None


def _merge(args: argparse.Namespace, console: Console) -> int:
    from fidelity.matrix import merge

    reports = (args.json, args.markdown, args.junit, args.html)
    options.check_writable(*reports, evidence=[*args.run_dirs, args.out])
    return _show(_judged(args, merge.merge, args.run_dirs, args.out), args, console)


def _compare(args: argparse.Namespace, console: Console) -> int:
    from fidelity.matrix import rejudge

    reports = (args.json, args.markdown, args.junit, args.html)
    options.check_writable(*reports, evidence=[args.run_dir])
    return _show(_judged(args, rejudge.recompare, args.run_dir), args, console)


def _verify(args: argparse.Namespace, console: Console) -> int:
    from fidelity.matrix import rejudge

    reports = (args.json, args.markdown, args.junit, args.html)
    options.check_writable(*reports, evidence=[args.run_dir])
    return _show(_judged(args, rejudge.verify, args.run_dir, args.expect), args, console)


def _judged(args: argparse.Namespace, judge: Any, *given: Any) -> Any:
    """judge(*given)'s outcome, judged under CI's rule for partial runs; when it refuses, the
    reports asked for say so first (a judge that writes no JUnit file when it cannot judge
    leaves CI's test report green)."""
    from fidelity.errors import FidelityError

    try:
        return judge(*given, ci=options.under_ci(os.environ), partial=args.partial)
    except FidelityError as exc:
        from fidelity.cli import refused

        refused.write(args, exc)
        raise


def _cases_validate(args: argparse.Namespace, console: Console) -> int:
    from fidelity.git import worktrees
    from fidelity.matrix.cases import table

    path = args.file
    if path is None:
        repo = worktrees.toplevel(args.repo)
        path = repo / _cases_path(None, repo)
    matrix = table.read(path)
    console.print(
        f"{path}: valid, {counted(len(matrix.cases), 'case')}", markup=False, highlight=False
    )
    return 0


def _cases_list(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli import report
    from fidelity.cli.console import plain_file
    from fidelity.git import worktrees
    from fidelity.matrix.cases import table

    path = args.file
    if path is None:
        repo = worktrees.toplevel(args.repo)
        path = repo / _cases_path(args.cases, repo)
    matrix = table.read(path)
    rows = []
    for c in matrix.cases:
        argv = c.argv if isinstance(c.argv, str) else " ".join(c.argv)
        outputs = ", ".join(
            o.glob + (" (optional)" if o.optional else " (absent)" if o.absent else "")
            for o in c.outputs
        )
        rows.append([c.id, ", ".join(c.tags), outputs, argv])
    # ids, globs and argv are the user's text, never markup (`test_route[/api/users]`)
    listing = report.Listing(["id", "tags", "outputs", "command"], rows)
    if args.quiet:  # what the -q console prints, without making one
        report.write_plain(plain_file(console), str(path), listing, counted(len(rows), "case"))
    else:
        report.render(console, str(path), listing, counted(len(rows), "case"))
    return 0
