"""Controls reports through an injected Console, and as JSON, Markdown and JUnit.

An unsound harness or a leaking no-op is printed first and alone, so that it is never read
as a pass. Every control shows its full failing subset; caught-differently shows both sets.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fidelity.controls.verdict import ControlResult, Report, Verdict, identical_subsets
from fidelity.report_junit import JUnitCase

STYLE = {
    Verdict.CAUGHT: "green",
    Verdict.RESIDUE_HELD: "green",
    Verdict.CAUGHT_DIFFERENTLY: "yellow",
    Verdict.SURVIVED: "red",
    Verdict.RESIDUE_CLOSED: "red",
    Verdict.UNVIABLE: "red",
    Verdict.TIMEOUT: "red",
    Verdict.CRASHED: "red",
}


def _tests(ids: tuple[str, ...]) -> str:
    return "\n".join(ids) if ids else "-"


def detail(r: ControlResult) -> str:
    if r.verdict is Verdict.CAUGHT_DIFFERENTLY:
        return f"expected ({r.match}):\n{_tests(r.expected)}"
    return r.detail


def trust_problem(report: Report) -> str:
    """Why the report cannot be trusted, or ''."""
    b = report.baseline
    if not report.selected:
        return "no control selected: nothing was judged"
    if not report.sound:
        why = "; ".join(x for x in (b.detail.strip(), ", ".join(sorted(b.failing))) if x)
        return f"the unmodified tree does not pass ({b.status}: {why})"
    if report.noop is not None and report.leaks:
        n = report.noop
        return (
            f"the no-op control did not survive ({n.verdict}: {', '.join(n.failing) or n.detail})"
        )
    return ""


def summary(report: Report) -> str:
    code = report.exit_code()
    problem = trust_problem(report)
    if code == 3:
        return f"UNTRUSTED: {problem} (exit 3)"
    counts = ", ".join(f"{n} {v}" for v, n in sorted(report.by_verdict().items()))
    if code == 0:
        return f"HOLDS: all {len(report.results)} controls met their expectation: {counts} (exit 0)"
    missed = sum(1 for r in report.results if not r.met)
    return f"MISSED: {missed} of {len(report.results)} controls did not: {counts} (exit 1)"


def table(report: Report) -> Table:
    out = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    out.add_column("control", overflow="fold", ratio=2)
    out.add_column("verdict", no_wrap=True)
    out.add_column("failing subset", overflow="fold", ratio=4)
    out.add_column("detail", overflow="fold", ratio=3)
    for r in report.results:
        out.add_row(r.id, Text(str(r.verdict), STYLE[r.verdict]), _tests(r.failing), detail(r))
    return out


def report(console: Console, result: Report) -> None:
    console.print(
        f"controls at {result.sha[:10]} ({result.rev}); table {result.table}",
        markup=False,
        highlight=False,
    )
    problem = trust_problem(result)
    if problem and result.results:  # above the table, so it is never read as a pass
        console.print(Text(f"The evidence cannot be trusted: {problem}", "bold red"))
    if result.results:
        console.print(table(result))
    if result.noop is not None:
        b, n = result.baseline, result.noop
        console.print(
            f"unmodified tree: {b.status}, {len(b.tests)} tests in {b.duration_s:.2f} s; "
            f"no-op control: {'survived' if n.verdict is Verdict.RESIDUE_HELD else n.verdict}",
            markup=False,
            highlight=False,
        )
    for group in identical_subsets(result.results):
        console.print(
            Text(
                f"! identical failing subsets, they do not discriminate: {', '.join(group)}",
                "yellow",
            )
        )
    style = {0: "bold green", 1: "bold red"}.get(result.exit_code(), "bold red")
    console.print(Text(summary(result), style))


def to_json(result: Report) -> dict[str, Any]:
    return {
        "rev": result.rev,
        "sha": result.sha,
        "table": result.table,
        "baseline": {
            **asdict(result.baseline),
            "failing": sorted(result.baseline.failing),
            "tests": len(result.baseline.tests),
        },
        "noop": asdict(result.noop) if result.noop else None,
        "controls": [asdict(r) for r in result.results],
        "identical_subsets": [list(g) for g in identical_subsets(result.results)],
        "summary": summary(result),
        "exit_code": result.exit_code(),
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def to_markdown(result: Report) -> str:
    lines = ["### mutation controls", "", summary(result), ""]
    if result.results:
        lines += ["| control | verdict | failing subset | detail |", "|---|---|---|---|"]
        lines += [
            f"| {_cell(r.id)} | {r.verdict} | {_cell(_tests(r.failing))} | {_cell(detail(r))} |"
            for r in result.results
        ]
    for group in identical_subsets(result.results):
        lines += ["", f"Identical failing subsets (not discriminating): {', '.join(group)}"]
    return "\n".join(lines) + "\n"


def to_junit(result: Report) -> list[JUnitCase]:
    """One test case per control; an untrusted run is one erroring case, never a pass."""
    problem = trust_problem(result)
    cases = [JUnitCase("harness", "fidelity.controls", error=problem)] if problem else []
    for r in result.results:
        why = f"{r.verdict}: {detail(r)}\nfailing: {', '.join(r.failing) or '-'}"
        broken = r.verdict in (Verdict.UNVIABLE, Verdict.TIMEOUT, Verdict.CRASHED)
        cases.append(
            JUnitCase(
                r.id,
                "fidelity.controls",
                r.duration_s,
                failure=None if r.met or broken else why,
                error=why if broken else None,
            )
        )
    return cases
