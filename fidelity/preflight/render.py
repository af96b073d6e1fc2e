"""A report as plain lines: one per gate, its details indented, then the closing count."""

from __future__ import annotations

from collections.abc import Sequence

from fidelity.preflight.context import Plan
from fidelity.preflight.outcome import Report

WIDTH = 12  # the longest gate name, padded


def lines(report: Report) -> list[str]:
    out = []
    for result in report.results:
        out.append(f"{result.status:<9} {result.gate:<{WIDTH}} {result.summary}")
        out += [f"    {detail}" for detail in result.details]
    out.append(report.closing())
    return out


def plan_lines(plans: Sequence[tuple[str, str, Plan]]) -> list[str]:
    """`--list`: whether each gate would run on this change, and why."""
    out = []
    for name, what, plan in plans:
        state = "runs" if plan.runs else str(plan.skip)
        out.append(f"{state:<9} {name:<{WIDTH}} {what}: {plan.why}")
    return out
