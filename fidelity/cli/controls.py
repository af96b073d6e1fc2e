"""`fidelity controls run|list|negative` and `fidelity failset record|diff`: parsing only."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import options, stale_worktrees

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    _register_controls(sub)
    _register_failset(sub)


def _action(actions: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A nested action's parser; `-q` works after it too (`fidelity controls run -q`)."""
    p: argparse.ArgumentParser = actions.add_parser(name, **kwargs)
    options.quiet(p)
    return p


def _table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--controls", metavar="FILE", help="control table (default from config)")
    options.repo(p)


def _register_controls(sub: Any) -> None:
    p = sub.add_parser(
        "controls",
        help="mutation controls: every test must be seen to fail for its defect",
        description="Exit 0 when every control met its expectation, 1 otherwise, 2 for a bad "
        "table or revision, 3 when the unmodified tree does not pass (the harness is unsound).",
    )
    actions = p.add_subparsers(dest="controls_command", metavar="ACTION", required=True)
    run = _action(actions, "run", help="run the controls, each in its own clean worktree")
    _table_args(run)
    run.add_argument("--rev", default="HEAD", help="the tree under test (default HEAD)")
    run.add_argument(
        "--with-uncommitted",
        action="store_true",
        help="include the work tree's uncommitted changes (the index is not touched)",
    )
    options.jobs(run, os.cpu_count() or 1, "controls at once (default: one per CPU)")
    run.add_argument("--only", action="append", default=[], metavar="ID", help="repeatable")
    run.add_argument(
        "--in-diff",
        metavar="BASE",
        help="only controls whose files or expected tests the change since BASE touches",
    )
    options.reports(run, junit="control")
    run.set_defaults(handler=_run)
    listing = _action(actions, "list", help="list the controls of a table")
    _table_args(listing)
    listing.set_defaults(handler=_list)
    neg = _action(
        actions,
        "negative",
        help="run the new tests against the pre-fix source: a fix's tests must fail there",
        description="Source paths from OLD, everything else from NEW. Exit 0 when a test the "
        "change touched fails there, 1 when none does, 3 when NEW itself does not pass.",
    )
    _table_args(neg)
    neg.add_argument("--source-from", required=True, metavar="OLD", help="the pre-fix revision")
    neg.add_argument("--tests-from", default="HEAD", metavar="NEW", help="default HEAD")
    neg.add_argument("--paths", nargs="+", required=True, metavar="PATH", help="source paths")
    options.reports(neg)
    neg.set_defaults(handler=_negative)


def _runs_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("junit", nargs="+", type=Path, metavar="JUNIT", help="one run's files")
    p.add_argument(
        "--runs",
        nargs="+",
        action="append",
        type=Path,
        default=[],
        metavar="JUNIT",
        help="the files of another run of the same side (repeatable): flaky tests show",
    )


def _register_failset(sub: Any) -> None:
    p = sub.add_parser(
        "failset",
        help="gate on the set of failing tests, in both directions",
        description="Exit 0 when the failing set equals the baseline's (flaky tests apart), "
        "1 on a new failure, a repaired or vanished failure (re-record the baseline) or a "
        "new collection error, 3 when the reports hold no test.",
    )
    actions = p.add_subparsers(dest="failset_command", metavar="ACTION", required=True)
    record = _action(actions, "record", help="store the failing set of JUnit reports")
    _runs_arg(record)
    record.add_argument("--out", type=Path, default=Path("records/failset.json"))
    record.add_argument(
        "--command", dest="test_command", default="", help="the test command, for provenance"
    )
    options.repo(record)
    record.set_defaults(handler=_record)
    diff = _action(actions, "diff", help="compare JUnit reports with a recorded baseline")
    diff.add_argument("--baseline", required=True, type=Path, metavar="FILE")
    _runs_arg(diff)
    options.reports(diff)
    diff.set_defaults(handler=_diff)


def _run(args: argparse.Namespace, console: Console) -> int:
    from fidelity import git, report_junit
    from fidelity.cli.console import progress
    from fidelity.controls import gate, render

    options.check_writable(args.json, args.markdown, args.junit)
    repo = git.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls)
    with progress(console, args.quiet, "running controls") as advance:
        result = gate.run(
            repo,
            table,
            args.rev,
            with_uncommitted=args.with_uncommitted,
            jobs=args.jobs,
            only=args.only,
            in_diff=args.in_diff,
            progress=advance,
        )
    if args.json:
        options.write(args.json, json.dumps(render.to_json(result), indent=2) + "\n")
    if args.markdown:
        options.write(args.markdown, render.to_markdown(result))
    if args.junit:
        report_junit.write(args.junit, "fidelity controls", render.to_junit(result))
    if not options.to_stdout(args.json):
        render.report(console, result)
    return result.exit_code()


def _list(args: argparse.Namespace, console: Console) -> int:
    from rich import box
    from rich.table import Table

    from fidelity import git
    from fidelity.controls import gate

    table = gate.load(git.toplevel(args.repo), args.controls)
    out = Table(
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        title=f"{table.source} ({len(table.controls)} controls)",
    )
    for column in ("id", "files", "expectation", "why"):
        out.add_column(column, overflow="fold")
    for c in table.controls:
        expect = f"survives: {c.residue}" if c.survives else f"{c.match}: {', '.join(c.caught_by)}"
        out.add_row(c.id, ", ".join(c.files), expect, c.why)
    console.print(out)
    return 0


def _negative(args: argparse.Namespace, console: Console) -> int:
    from fidelity import git
    from fidelity.cli.report import emit
    from fidelity.controls import gate, negative

    options.check_writable(args.json, args.markdown)
    repo = git.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls, missing_ok=True)
    report = negative.run(repo, table, args.source_from, args.tests_from, args.paths)
    title = (
        f"negative control: tests from {args.tests_from}, {' '.join(args.paths)} from "
        f"{args.source_from}"
    )
    return emit(console, title, report, report.summary(), args.json, args.markdown)


def _runs(args: argparse.Namespace) -> list[list[Path]]:
    return [list(args.junit), *[list(r) for r in args.runs]]


def _record(args: argparse.Namespace, console: Console) -> int:
    from fidelity.controls import failset

    record = failset.record(_runs(args), args.test_command, args.repo)
    failset.save(record, args.out)
    console.print(failset.record_line(record, args.out), markup=False, soft_wrap=True)
    return 0 if record.counts.get("tests") else 3


def _diff(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.controls import failset

    options.check_writable(args.json, args.markdown)
    report = failset.diff(failset.load(args.baseline), _runs(args))
    title = f"failing set vs {args.baseline}"
    return emit(console, title, report, report.summary(), args.json, args.markdown)
