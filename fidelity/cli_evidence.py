"""`fidelity stale|landed|trailers|ab`: parse arguments, call the command, render its report.

Every report offers `table() -> (columns, rows)`, `to_json()` and `exit_code()`; this module
turns those into a rich table, a JSON file and a Markdown file, and holds no logic besides.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.table import Table


class Report(Protocol):
    def table(self) -> tuple[list[str], list[list[str]]]: ...

    def to_json(self) -> dict[str, Any]: ...

    def exit_code(self) -> int: ...


def render(console: Console, title: str, report: Report, summary: str) -> None:
    """The report as a rich table followed by its one-line summary."""
    columns, rows = report.table()
    if rows:
        table = Table(title=title, title_justify="left")
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:
        console.print(f"{title}: no rows", markup=False)
    console.print(summary, markup=False, soft_wrap=True)


def markdown(title: str, report: Report, summary: str) -> str:
    """The report as a GitHub-flavoured Markdown section (fits a PR comment)."""
    columns, rows = report.table()
    esc = [[cell.replace("|", "\\|").replace("\n", " ") for cell in row] for row in rows]
    lines = [f"### {title}", "", summary, ""]
    if rows:
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(row) + " |" for row in esc]
    return "\n".join(lines) + "\n"


def emit(
    console: Console, args: argparse.Namespace, title: str, report: Report, summary: str
) -> int:
    """Render to the terminal and to any --json/--markdown paths; return the exit code."""
    render(console, title, report, summary)
    code = report.exit_code()
    if args.json:
        data = {**report.to_json(), "summary": summary, "exit_code": code}
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(title, report, summary))
    return code


def _outputs(parser: argparse.ArgumentParser, repo: bool = True) -> None:
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON")
    parser.add_argument("--markdown", metavar="PATH", help="also write the report as Markdown")
    if repo:
        parser.add_argument("--repo", metavar="DIR", default=".", help="the repository")


def _repo(args: argparse.Namespace) -> Path:
    from fidelity import git

    return git.toplevel(args.repo)


# --- landed ---


def _landed(args: argparse.Namespace, console: Console) -> int:
    from fidelity import landed
    from fidelity.errors import UsageError

    if not args.commit and not args.symbol:
        raise UsageError("nothing to check: name at least one --commit SHA or --symbol NAME")
    report = landed.check(_repo(args), args.ref, args.commit, args.symbol)
    return emit(console, args, f"landed on {args.ref}", report, report.summary())


def _register_landed(sub: Any) -> None:
    p = sub.add_parser(
        "landed",
        help="did the commits and symbols a change builds on land on the ref?",
        description="Exit 0 when every claim holds, 1 when one does not, 2 for an unknown "
        "revision.",
    )
    p.add_argument("--ref", default="HEAD", help="the branch the claims are about (default HEAD)")
    p.add_argument("--commit", action="append", default=[], metavar="SHA", help="repeatable")
    p.add_argument("--symbol", action="append", default=[], metavar="NAME", help="repeatable")
    _outputs(p)
    p.set_defaults(handler=_landed)


# --- trailers ---


def _trailers(args: argparse.Namespace, console: Console) -> int:
    from checkers import trailers
    from fidelity import config
    from fidelity.errors import UsageError

    repo = _repo(args)
    section = config.load(repo).get("trailers")
    if not isinstance(section, dict):
        raise UsageError(
            f"{repo / 'pyproject.toml'}: no [tool.fidelity.trailers] table; configure "
            "`required`, `forbidden`, `verify` or a size limit before checking trailers"
        )
    rules = trailers.rules_from_config(section, str(repo / "pyproject.toml"))
    if rules.empty:
        raise UsageError("[tool.fidelity.trailers] sets no rule: nothing to check")
    if args.message_file:
        report = trailers.check_file(repo, Path(args.message_file), rules)
    else:
        report = trailers.check_range(repo, args.range, rules)
    for finding in report.findings:
        console.print(finding.render(), markup=False, soft_wrap=True)
    return emit(console, args, "commit trailers", report, report.summary())


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
    which.add_argument("--message-file", metavar="F", help="a commit message being written")
    _outputs(p)
    p.set_defaults(handler=_trailers)


# --- ab ---


def _command(text: str | None, cwd: str | None, shell: bool) -> Any:
    import shlex

    from fidelity.ab_runner import Command
    from fidelity.errors import UsageError

    if text is None:
        return None
    try:
        argv: tuple[str, ...] | str = text if shell else tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(
            f"cannot split command {text!r}: {exc}; quote it, or pass --shell"
        ) from None
    if not argv:
        raise UsageError("an empty command cannot be timed")
    return Command(argv, Path(cwd) if cwd else None)


def _ab(args: argparse.Namespace, console: Console) -> int:
    from fidelity import ab_runner
    from fidelity.ab_verdict import Arm, Expect
    from fidelity.errors import UsageError

    expect = Expect(args.expect)
    if args.measurements:
        if args.a or args.b or args.control:
            raise UsageError("give either --from FILE or --a/--b commands, not both")
        reps = ab_runner.load(Path(args.measurements))
        report = ab_runner.judged(reps, "", expect=expect, order="recorded")
        return emit(console, args, f"A/B from {args.measurements}", report, report.summary())
    if not (args.a and args.b):
        raise UsageError("name both arms: --a CMD --b CMD (or judge recorded --from FILE)")
    if args.reps < ab_runner.MIN_REPS or args.warmup < 0:
        raise UsageError(f"--reps must be at least {ab_runner.MIN_REPS}, --warmup at least 0")
    arms = {Arm.A: _command(args.a, args.cwd_a, args.shell),
            Arm.B: _command(args.b, args.cwd_b, args.shell)}  # fmt: skip
    control = None
    if args.control:
        control = {Arm.A: _command(args.control, args.cwd_a, args.shell),
                   Arm.B: _command(args.control, args.cwd_b, args.shell)}  # fmt: skip
    order = ab_runner.Order(args.order)
    plan = ab_runner.schedule(args.reps, args.warmup, order)
    console.print(f"{len(plan)} runs, {args.warmup} warm-up(s) per arm, {order.upper()} order")
    reps, failure = ab_runner.measure(arms, control, plan, args.timeout)
    shown = {"a": arms[Arm.A].show(), "b": arms[Arm.B].show()}
    if control:
        shown["control"] = control[Arm.A].show()
    report = ab_runner.judged(reps, failure, expect=expect, order=str(order), commands=shown)
    return emit(console, args, "A/B timing", report, report.summary())


def _register_ab(sub: Any) -> None:
    p = sub.add_parser(
        "ab",
        help="A/B timing verdict: established, not-separable or inconclusive",
        description="Runs the arms order-alternated with uncounted warm-ups and judges the "
        "min-max bands; or judges recorded measurements (--from). Exit 0 when the difference "
        "is established (the expected way), 1 when not, 3 when a run failed or too few "
        "repetitions were recorded.",
    )
    p.add_argument("--a", metavar="CMD", help="the baseline arm's command")
    p.add_argument("--b", metavar="CMD", help="the candidate arm's command")
    p.add_argument("--control", metavar="CMD", help="shared work the change does not touch")
    p.add_argument("--from", dest="measurements", metavar="FILE", help="recorded CSV or JSON")
    p.add_argument("--reps", type=int, default=5, help="counted repetitions per arm (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="uncounted runs per arm (default 1)")
    p.add_argument("--order", choices=["abba", "abab"], default="abba")
    p.add_argument(
        "--expect",
        choices=["differ", "faster", "slower"],
        default="differ",
        help="what B should be relative to A (default: any established difference)",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    p.add_argument("--cwd-a", metavar="DIR", help="run arm A (and its control) here")
    p.add_argument("--cwd-b", metavar="DIR", help="run arm B (and its control) here")
    p.add_argument("--shell", action="store_true", help="run the commands under a shell")
    _outputs(p, repo=False)
    p.set_defaults(handler=_ab)


# --- stale ---


def _relpath(repo: Path, record: str) -> str:
    from fidelity.errors import UsageError

    root = repo.resolve()
    path = Path(record).resolve()  # relative to the working directory when inside the repo
    if not path.is_relative_to(root) and not Path(record).is_absolute():
        path = (root / record).resolve()  # else relative to --repo
    if not path.is_relative_to(root):
        raise UsageError(f"record {record} is outside the repository {repo}")
    return path.relative_to(root).as_posix()


def _stale(args: argparse.Namespace, console: Console) -> int:
    from fidelity import config, stale

    repo = _repo(args)
    section = config.load(repo).get("records", [])
    configured = stale.specs_from_config(section, str(repo / "pyproject.toml"))
    overrides = {
        "key": args.key,
        "commit_column": args.commit_column,
        "watch": tuple(args.watch) if args.watch else None,
        "stale_after": args.stale_after,
    }
    wanted = [_relpath(repo, r) for r in args.records]
    report = stale.check(repo, args.ref, stale.select(configured, wanted, overrides))
    title = f"stale rows against {args.ref}"
    if args.allow_empty and not report.checks:
        note = f"nothing to check: no rows in {', '.join(report.records)}; exit 0 only because "
        emit(console, args, title, report, note + "--allow-empty was given")
        return 0
    return emit(console, args, title, report, report.summary())


def _register_stale(sub: Any) -> None:
    p = sub.add_parser(
        "stale",
        help="which record rows were measured on unlanded commits or have gone stale?",
        description="Checks [[tool.fidelity.records]] (or the RECORD files named). Exit 0 when "
        "every row is fresh, 1 when a row is stale, unlanded, unknown or has no commit, 2 for "
        "bad config, 3 when there is no row to check or the clone is shallow.",
    )
    p.add_argument("records", nargs="*", metavar="RECORD", help="default: every configured one")
    p.add_argument("--ref", default="HEAD", help="the reference branch (default HEAD)")
    p.add_argument("--stale-after", type=int, help="override the configured threshold")
    p.add_argument("--watch", action="append", metavar="PATH", help="override watched paths")
    p.add_argument("--key", help="override the key column's header")
    p.add_argument("--commit-column", help="override the commit column's header")
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 instead of 3 when the records hold no rows yet (says so)",
    )
    _outputs(p)
    p.set_defaults(handler=_stale)


def register(sub: Any) -> None:
    _register_stale(sub)
    _register_landed(sub)
    _register_trailers(sub)
    _register_ab(sub)
