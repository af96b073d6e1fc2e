"""`fidelity run|compare|cases|demo`: argument parsing and rendering only."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from fidelity import config, git
from fidelity.errors import UsageError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    run = sub.add_parser(
        "run",
        help="run the case matrix at two revisions and compare them case by case",
        description="Run every case of the harness's case table at the baseline and the "
        "candidate, each in its own clean detached worktree, and compare the evidence.",
    )
    run.add_argument("--baseline", required=True, metavar="REV", help="the reference revision")
    run.add_argument("--candidate", default="HEAD", metavar="REV", help="default: HEAD")
    _common(run)
    run.add_argument(
        "--harness",
        metavar="REV",
        help="read the case table from this revision (default: the current checkout)",
    )
    run.add_argument(
        "--out", type=Path, metavar="DIR", help="run directory (default .fidelity/runs/...)"
    )
    run.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="cases run at once per side (default 1: they share the side's worktree, so only "
        "raise it when cases write nothing but {out} and {cache})",
    )
    run.add_argument(
        "--expect",
        metavar="FILE",
        help="the predicted move set, read from the harness like the table; the verdict is "
        "HELD only when exactly the predicted cases move",
    )
    _reports(run)
    run.set_defaults(handler=_run)

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
    cases_sub = cases.add_subparsers(dest="cases_command", metavar="ACTION", required=True)
    validate = cases_sub.add_parser("validate", help="check a case table against the schema")
    validate.add_argument("file", nargs="?", type=Path, metavar="FILE")
    validate.add_argument("--repo", type=Path, default=Path("."), help=argparse.SUPPRESS)
    validate.set_defaults(handler=_cases_validate)
    listing = cases_sub.add_parser("list", help="list the cases of a table")
    _common(listing)
    listing.set_defaults(handler=_cases_list)

    demo = sub.add_parser(
        "demo", help="build a small simulator repository and gate a refactor and a fix on it"
    )
    demo.add_argument(
        "--dir", type=Path, metavar="DIR", help="where to build it (default: a temp dir)"
    )
    demo.set_defaults(handler=_demo)


def _reports(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the verdict as JSON")
    parser.add_argument(
        "--markdown", type=Path, metavar="PATH",
        help="write a summary for a PR comment or $GITHUB_STEP_SUMMARY (kept under 1 MiB)",
    )  # fmt: skip
    parser.add_argument(
        "--junit", type=Path, metavar="PATH", help="write JUnit XML, one test per case"
    )
    parser.add_argument("--all", action="store_true", help="list identical cases too")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", metavar="FILE", help="case table (default from [tool.fidelity])")
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository (default: .)")


def _cases_path(args: argparse.Namespace, repo: Path) -> str:
    return str(args.cases or config.setting(repo, "cases", config.DEFAULT_CASES))


@contextmanager
def progress_for(console: Console, quiet: bool) -> Iterator[Callable[..., None] | None]:
    if quiet or not console.is_terminal:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("running cases", total=None)

        def advance(role: str, case_id: str, status: object) -> None:
            bar.update(task, advance=1, description=f"{role}: {case_id} {status}")

        yield advance


def _run(args: argparse.Namespace, console: Console) -> int:
    from fidelity import gate

    repo = git.toplevel(args.repo)
    cases = _cases_path(args, repo)
    with progress_for(console, args.quiet) as progress:
        outcome = gate.run(
            repo, args.baseline, args.candidate, cases, args.harness, args.out, args.jobs,
            progress, args.expect,
        )  # fmt: skip
    return _show(outcome, args, console)


def _show(outcome: Any, args: argparse.Namespace, console: Console) -> int:
    """Render to the terminal and write every report asked for; return the exit code."""
    from fidelity import render, report_junit, report_matrix

    render.outcome(console, outcome, args.all)
    if args.json:
        _write(args.json, json.dumps(report_matrix.json_report(outcome), indent=2) + "\n")
    if args.markdown:
        _write(args.markdown, report_matrix.markdown(outcome))
    if args.junit:
        report_junit.write(args.junit, "fidelity", report_matrix.junit_cases(outcome))
    code: int = outcome.exit_code
    return code


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _compare(args: argparse.Namespace, console: Console) -> int:
    from fidelity import gate

    return _show(gate.recompare(args.run_dir), args, console)


def _verify(args: argparse.Namespace, console: Console) -> int:
    from fidelity import gate

    return _show(gate.verify(args.run_dir, args.expect), args, console)


def _cases_validate(args: argparse.Namespace, console: Console) -> int:
    from fidelity import casetable

    path = args.file
    if path is None:
        repo = git.toplevel(args.repo)
        path = repo / config.setting(repo, "cases", config.DEFAULT_CASES)
    if not path.is_file():
        raise UsageError(f"no case table at {path}")
    matrix = casetable.parse(path.read_bytes(), str(path))
    console.print(f"{path}: valid, {len(matrix.cases)} cases", markup=False, highlight=False)
    return 0


def _cases_list(args: argparse.Namespace, console: Console) -> int:
    from rich import box
    from rich.table import Table

    from fidelity import casetable

    repo = git.toplevel(args.repo)
    path = repo / _cases_path(args, repo)
    if not path.is_file():
        raise UsageError(f"no case table at {path}")
    matrix = casetable.parse(path.read_bytes(), str(path))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=f"{path} ({len(matrix.cases)} cases)")
    for column in ("id", "tags", "outputs", "command"):
        table.add_column(column, overflow="fold")
    for c in matrix.cases:
        argv = c.argv if isinstance(c.argv, str) else " ".join(c.argv)
        table.add_row(c.id, ", ".join(c.tags), ", ".join(c.outputs), argv)
    console.print(table)
    return 0


def _demo(args: argparse.Namespace, console: Console) -> int:
    from fidelity import demo

    return demo.main(console, args.dir, args.quiet)
