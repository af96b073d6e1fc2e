"""`fidelity controls run|suggest|from-fix|validate|list|negative` and `fidelity failset
record|diff`: parsing only. Every machine-readable report is written before anything is
rendered to the terminal, and user data is never printed as markup."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import html, options, stale_worktrees
from fidelity.markdown import fit, inline
from fidelity.text import counted

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
        description="Exit 0 when every control met its expectation (or --in-diff found "
        "nothing to judge: a skip), 1 otherwise, 2 for a bad table (an edit that does not "
        "apply, an expected test that does not exist) or revision, 3 when the unmodified tree "
        "does not pass or the no-op control did not survive.",
    )
    actions = p.add_subparsers(dest="controls_command", metavar="ACTION", required=True)
    run = _action(
        actions,
        "run",
        help="run the controls in clean worktrees (one per worker, checked clean between controls)",
    )
    _table_args(run)
    _tree_args(run)
    options.jobs(run, os.cpu_count() or 1, "controls at once (default: one per CPU)")
    run.add_argument("--only", action="append", default=[], metavar="ID", help="repeatable")
    run.add_argument(
        "--in-diff",
        metavar="BASE",
        help="only controls whose files, expected tests or table entry the change since BASE "
        "touches; a change that touches none is a skip (exit 0, said in the report)",
    )
    run.add_argument(
        "--full",
        action="store_true",
        help="run every test for every control, each in a fresh interpreter (default: only "
        "the tests that ran the edited code, in a warm pytest where that is sound)",
    )
    run.add_argument(
        "--no-swap",
        dest="swap",
        action="store_false",
        help="run the unmodified tree cold and import the edited tree afresh for every "
        "control (default: trace the unmodified tree in a fork of a pytest that imported and "
        "collected it, and where a control's edit lands only in function bodies that ran "
        "inside tests alone, swap the new code into another fork of it)",
    )
    run.add_argument(
        "--fresh",
        action="store_true",
        help="trace the unmodified tree again even when a kept run of the same tree, command "
        "and installed packages passed (default: read that run's trace; the no-op control "
        "still runs every test now); use it after changing what your tests read from the "
        "environment",
    )
    options.reports(run, junit="control")
    options.html(run, "report (controls x tests: which test caught which control, and how)")
    run.set_defaults(handler=_run)
    _register_authoring(actions)
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


def _tree_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rev", default="HEAD", help="the tree under test (default HEAD)")
    p.add_argument(
        "--with-uncommitted",
        action="store_true",
        help="include the work tree's uncommitted changes (the index is not touched)",
    )


def _register_authoring(actions: Any) -> None:
    suggest = _action(
        actions,
        "suggest",
        help="run one edit and print the failing set it gets as a ready [[control]] entry",
        description="Runs the unmodified tree, then the edit (a control of the table by ID, "
        "or --file/--find/--replace), and prints a TOML entry expecting exactly the tests "
        "that failed (a residue entry when none did) on standard output. Exit 0 with an "
        "entry, 1 when the edit gave no usable failing set, 3 when the unmodified tree fails.",
    )
    _table_args(suggest)
    _tree_args(suggest)
    suggest.add_argument("control_id", nargs="?", metavar="ID", help="a control of the table")
    suggest.add_argument("--file", help="an edit of your own: the file")
    suggest.add_argument("--find", help="text that occurs exactly once in --file")
    suggest.add_argument("--replace", help="what replaces it")
    suggest.add_argument("--id", dest="new_id", default="suggested", help="the new entry's id")
    suggest.add_argument("--why", default="TODO: the defect this edit stands for")
    suggest.add_argument("--full", action="store_true", help="run every test, cold")
    suggest.set_defaults(handler=_suggest)
    fix = _action(
        actions,
        "from-fix",
        help="propose one control per source hunk of a fix (the hunk reverted)",
        description="Prints one [[control]] entry per hunk the fix changed outside test "
        "files, each reverting that hunk. FIX runs in a worktree with each hunk reverted; "
        "the entry expects the tests that failed there, the fix's own first (ids collected "
        "at FIX that BASE lacks, and tests whose lines the fix changed), and is then run "
        "once as written. Exit 0 when every proposal held, 1 when one did not (or the fix "
        "changed no source), 3 when FIX itself does not pass.",
    )
    _table_args(fix)
    fix.add_argument("range", metavar="BASE..FIX")
    fix.set_defaults(handler=_from_fix)
    check = _action(
        actions,
        "validate",
        help="check every anchor and expected test id without running the suite",
        description="Exit 0 when every edit applies and every caught_by names a collected "
        "test (pytest --collect-only), 2 listing each problem, 3 when the tests cannot be "
        "collected.",
    )
    _table_args(check)
    _tree_args(check)
    options.reports(check)
    check.set_defaults(handler=_validate)


def _err(quiet: bool) -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, no_color=quiet, soft_wrap=True)


def _suggest(args: argparse.Namespace, console: Console) -> int:
    from fidelity.controls import authoring, gate
    from fidelity.controls.table import Control, Edit
    from fidelity.errors import UsageError
    from fidelity.git import worktrees

    repo = worktrees.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls, missing_ok=args.control_id is None)
    if args.control_id:
        control = gate.pick(table, [args.control_id])[0]
    elif args.file and args.find is not None and args.replace is not None:
        edit = Edit(args.file, find=args.find, replace=args.replace)
        control = Control(args.new_id, args.why, (edit,), table.command, table.timeout_s)
    else:
        raise UsageError("name a control ID of the table, or give --file, --find and --replace")
    found = authoring.suggest(
        repo, table, control, args.rev, with_uncommitted=args.with_uncommitted, full=args.full
    )
    if found.entry:
        console.print(found.entry, markup=False, highlight=False, end="", soft_wrap=True)
    _err(args.quiet).print(found.summary(), markup=False)
    return found.exit_code()


def _from_fix(args: argparse.Namespace, console: Console) -> int:
    from fidelity.controls import fromfix, gate
    from fidelity.git import worktrees

    repo = worktrees.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls, missing_ok=True)
    found = fromfix.from_fix(repo, table, args.range)
    text = found.text()
    if text:
        console.print(text, markup=False, highlight=False, end="", soft_wrap=True)
    _err(args.quiet).print(found.summary(), markup=False)
    return found.exit_code()


def _validate(args: argparse.Namespace, console: Console) -> int:
    from fidelity.controls import authoring, gate
    from fidelity.git import worktrees

    options.check_writable(args.json, args.markdown)
    repo = worktrees.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls)
    found = authoring.validate(repo, table, args.rev, with_uncommitted=args.with_uncommitted)
    data = {
        "table": found.table,
        "rev": found.rev,
        "controls": found.controls,
        "problems": list(found.problems),
        "collected": found.collected,
        "unchecked": found.unchecked or None,
        "summary": found.summary(),
        "exit_code": found.exit_code(),
    }
    options.write(args.json, json.dumps(data, indent=2) + "\n")
    lines = [f"- {inline(p)}" for p in found.problems]
    text = "\n".join(["### control table", "", inline(found.summary()), "", *lines]) + "\n"
    options.write_markdown(args.markdown, lambda limit: fit(text, limit))
    if not options.to_stdout(args.json):
        for problem in found.problems:
            console.print(problem, markup=False, highlight=False, soft_wrap=True)
        console.print(found.summary(), markup=False, highlight=False, soft_wrap=True)
    return found.exit_code()


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
    from fidelity import report_junit
    from fidelity.cli.progress import shown
    from fidelity.controls import gate, render
    from fidelity.git import worktrees

    options.check_writable(args.json, args.markdown, args.junit, args.html)
    repo = worktrees.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls)
    taken = options.to_stdout(args.json)
    with shown(console, args.quiet, "controls run", "controls", stdout_taken=taken) as advance:
        result = gate.run(
            repo,
            table,
            args.rev,
            with_uncommitted=args.with_uncommitted,
            jobs=args.jobs,
            only=args.only,
            in_diff=args.in_diff,
            full=args.full,
            fresh=args.fresh,
            swap=args.swap,
            progress=advance,
        )
    if args.json:
        options.write(args.json, json.dumps(render.to_json(result), indent=2) + "\n")
    if args.markdown:
        text = render.to_markdown(result)
        options.write_markdown(args.markdown, lambda limit: fit(text, limit))
    if args.junit:
        options.save(args.junit, report_junit.to_xml("fidelity controls", render.to_junit(result)))
    html.controls_page(args.html, render.to_json(result))
    if not options.to_stdout(args.json):
        render.report(console, result, quiet=args.quiet)
        html.said(console, args.html)
    return result.exit_code()


def _list(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli import report
    from fidelity.controls import gate
    from fidelity.git import worktrees

    table = gate.load(worktrees.toplevel(args.repo), args.controls)
    rows = []
    for c in table.controls:
        expect = f"survives: {c.residue}" if c.survives else f"{c.match}: {', '.join(c.caught_by)}"
        rows.append([c.id, ", ".join(c.files), expect, c.why])
    listing = report.Listing(["id", "files", "expectation", "why"], rows)
    report.render(console, table.source, listing, counted(len(rows), "control"))
    return 0


def _negative(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.controls import gate, negative
    from fidelity.git import worktrees

    options.check_writable(args.json, args.markdown)
    repo = worktrees.toplevel(args.repo)
    stale_worktrees.prune(repo, args.quiet)
    table = gate.load(repo, args.controls, missing_ok=True)
    report = negative.run(repo, table, args.source_from, args.tests_from, args.paths)
    title = (
        f"negative control: tests from {args.tests_from}, {' '.join(args.paths)} from "
        f"{args.source_from}"
    )
    return emit(
        console, title, report, report.summary(), json_path=args.json, markdown_path=args.markdown
    )


def _runs(args: argparse.Namespace) -> list[list[Path]]:
    return [list(args.junit), *[list(r) for r in args.runs]]


def _record(args: argparse.Namespace, console: Console) -> int:
    from fidelity.controls import failset

    record = failset.record(_runs(args), args.test_command, args.repo)
    options.write(args.out, failset.text(record))
    console.print(failset.record_line(record, args.out), markup=False, soft_wrap=True)
    return 0 if record.counts.get("tests") else 3


def _diff(args: argparse.Namespace, console: Console) -> int:
    from fidelity.cli.report import emit
    from fidelity.controls import failset

    options.check_writable(args.json, args.markdown)
    report = failset.diff(failset.load(args.baseline), _runs(args))
    title = f"failing set vs {args.baseline}"
    return emit(
        console, title, report, report.summary(), json_path=args.json, markdown_path=args.markdown
    )
