"""`fidelity report RUN_DIR --html FILE`, and the --html page of run, compare, verify, merge
and controls run. matplotlib and the page code load only here, only when a page is asked."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity import blas
from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="write the report of a run directory (matrix or controls) as an HTML page",
        description="One self-contained HTML page for a `fidelity run` directory (judged "
        "again as `fidelity compare` judges it: the same exit code) or a `fidelity controls "
        "run` directory (its report.json: controls x tests). The page loads nothing from "
        "anywhere when opened; filter and sort work without a server.",
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    report.add_argument(
        "--html", type=Path, metavar="PATH", required=True, help="the page to write ('-': stdout)"
    )
    report.set_defaults(handler=_report)


def said(console: Console, path: Path | None) -> None:
    """Where the page is, once the verdict has been said (nothing for none or stdout)."""
    if path is None or options.to_stdout(path):
        return
    size = path.stat().st_size
    console.print(f"HTML report: {path} ({size // 1024} KiB)", markup=False, highlight=False)


def _report(args: argparse.Namespace, console: Console) -> int:
    blas.load_numpy()  # the page's figures: numpy, with one BLAS thread
    from fidelity.htmlreport import source

    options.check_writable(
        args.html, evidence=[args.run_dir] if source.is_run(args.run_dir) else []
    )
    made = source.make(args.run_dir)
    options.write(args.html, made.html)
    if not options.to_stdout(args.html):
        style = {0: "bold green", 1: "bold yellow"}.get(made.exit_code, "bold red")
        console.print(made.verdict, style=style, markup=False, highlight=False)
    said(console, args.html)
    return made.exit_code


def run_page(path: Path | None, outcome: Any) -> None:
    """Write the page of a matrix outcome at path (nothing when None)."""
    if path is not None:
        blas.load_numpy()
        from fidelity.htmlreport import runpage

        options.write(path, runpage.page(outcome))


def controls_page(path: Path | None, report: Mapping[str, Any]) -> None:
    """Write the page of a controls report (its JSON) at path (nothing when None)."""
    if path is not None:
        from fidelity.htmlreport import controlspage

        options.write(path, controlspage.page(report))
