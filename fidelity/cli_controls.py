"""`fidelity controls run|list|negative` and `fidelity failset record|diff`: parsing only."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from rich.console import Console

from fidelity import git


def _outputs(p: argparse.ArgumentParser, junit: bool = True) -> None:
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")
    p.add_argument("--markdown", type=Path, metavar="PATH", help="also write it as Markdown")
    if junit:
        p.add_argument("--junit", type=Path, metavar="PATH", help="one JUnit case per control")


def _action(actions: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A nested action's parser; `-q` works after it too (`fidelity controls run -q`)."""
    p: argparse.ArgumentParser = actions.add_parser(name, **kwargs)
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="plain output for CI logs")  # fmt: skip
    return p


def _table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--controls", metavar="FILE", help="control table (default from config)")
    p.add_argument("--repo", type=Path, default=Path("."), help="repository (default: .)")


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
    run.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="controls at once")
    run.add_argument("--only", action="append", default=[], metavar="ID", help="repeatable")
    run.add_argument(
        "--in-diff",
        metavar="BASE",
        help="only controls whose files or expected tests the change since BASE touches",
    )
    _outputs(run)
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
    _outputs(neg, junit=False)
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
    record.add_argument("--repo", type=Path, default=Path("."), help="for the revision")
    record.set_defaults(handler=_record)
    diff = _action(actions, "diff", help="compare JUnit reports with a recorded baseline")
    diff.add_argument("--baseline", required=True, type=Path, metavar="FILE")
    _runs_arg(diff)
    _outputs(diff, junit=False)
    diff.set_defaults(handler=_diff)


def register(sub: Any) -> None:
    _register_controls(sub)
    _register_failset(sub)


def _progress(console: Console, quiet: bool) -> Any:
    from fidelity.cli_matrix import progress_for

    return progress_for(console, quiet)


def _write(path: Path | None, text: str) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _run(args: argparse.Namespace, console: Console) -> int:
    from fidelity import controls, controls_render, report_junit
    from fidelity.errors import UsageError

    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    repo = git.toplevel(args.repo)
    table = controls.load(repo, args.controls)
    with _progress(console, args.quiet) as progress:
        result = controls.run(
            repo, table, args.rev, with_uncommitted=args.with_uncommitted, jobs=args.jobs,
            only=args.only, in_diff=args.in_diff, progress=progress,
        )  # fmt: skip
    controls_render.report(console, result)
    _write(args.json, json.dumps(controls_render.to_json(result), indent=2) + "\n")
    _write(args.markdown, controls_render.to_markdown(result))
    if args.junit:
        report_junit.write(args.junit, "fidelity controls", controls_render.to_junit(result))
    return result.exit_code()


def _list(args: argparse.Namespace, console: Console) -> int:
    from rich import box
    from rich.table import Table

    from fidelity import controls

    repo = git.toplevel(args.repo)
    table = controls.load(repo, args.controls)
    out = Table(box=box.SIMPLE_HEAD, pad_edge=False,
                title=f"{table.source} ({len(table.controls)} controls)")  # fmt: skip
    for column in ("id", "files", "expectation", "why"):
        out.add_column(column, overflow="fold")
    for c in table.controls:
        expect = f"survives: {c.residue}" if c.survives else f"{c.match}: {', '.join(c.caught_by)}"
        out.add_row(c.id, ", ".join(c.files), expect, c.why)
    console.print(out)
    return 0


def _negative(args: argparse.Namespace, console: Console) -> int:
    from fidelity import controls, controls_negative
    from fidelity.cli_evidence import emit

    repo = git.toplevel(args.repo)
    table = controls.load(repo, args.controls, missing_ok=True)
    report = controls_negative.run(repo, table, args.source_from, args.tests_from, args.paths)
    title = f"negative control: tests from {args.tests_from}, {' '.join(args.paths)} from " + (
        args.source_from
    )
    return emit(console, args, title, report, report.summary())


def _runs(args: argparse.Namespace) -> list[list[Path]]:
    return [list(args.junit), *[list(r) for r in args.runs]]


def _record(args: argparse.Namespace, console: Console) -> int:
    from fidelity import failset

    record = failset.record(_runs(args), args.test_command, args.repo)
    failset.save(record, args.out)
    console.print(failset.record_line(record, args.out), markup=False, soft_wrap=True)
    return 0 if record.counts.get("tests") else 3


def _diff(args: argparse.Namespace, console: Console) -> int:
    from fidelity import failset
    from fidelity.cli_evidence import emit

    baseline = failset.load(args.baseline)
    report = failset.diff(baseline, _runs(args))
    return emit(console, args, f"failing set vs {args.baseline}", report, report.summary())
