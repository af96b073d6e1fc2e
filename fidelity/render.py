"""Terminal rendering of a matrix outcome through an injected rich Console.

Findings come first, above the verdict, so that an untrusted answer is never read as a
pass. The layout stays readable at 80 columns and in a plain CI log.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fidelity.compare import FAILURES, Comparison, Verdict
from fidelity.findings import Finding
from fidelity.gate import Outcome

STYLE = {
    Verdict.IDENTICAL: "green",
    Verdict.MOVED: "yellow",
    Verdict.NOT_COMPARED: "red",
    Verdict.MISSING_EVIDENCE: "red",
    Verdict.DEFINITION_DIFFERS: "red",
}


def findings(console: Console, found: tuple[Finding, ...]) -> None:
    if not found:
        return
    console.print(
        Text(f"Provenance findings ({len(found)}): the verdict cannot be trusted", "bold red")
    )
    for f in found:
        where = " ".join(
            x for x in (f.side and f"[{f.side}]", f.case_id and f"case {f.case_id}") if x
        )
        console.print(Text(f"  ! {f.code}{' ' + where if where else ''}: {f.message}"))


def case_table(comparison: Comparison, show_identical: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column("case", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in comparison.cases:
        if r.verdict is Verdict.IDENTICAL and not show_identical:
            continue
        style = "red" if r.verdict in FAILURES else STYLE.get(r.verdict, "")
        detail = r.detail
        if r.outputs:
            detail += ": " + ", ".join((*r.outputs.changed, *r.outputs.added, *r.outputs.missing))
        table.add_row(r.case_id, Text(str(r.verdict), style), detail)
    return table


def summary_lines(comparison: Comparison) -> list[str]:
    s = comparison.summary
    lines = [
        f"declared {s.declared} · executed {s.executed_baseline} baseline / "
        f"{s.executed_candidate} candidate · compared {s.compared}",
        f"identical {s.identical} · moved {s.moved} · failed {s.failures} · "
        f"missing evidence {s.missing_evidence} · definition differs {s.definition_differs} · "
        f"not compared {s.not_compared}",
    ]
    if s.cache_files_baseline == s.cache_files_candidate:
        cache = f"{s.cache_files_baseline} cache files on each side"
    else:
        cache = (
            f"cache files: {s.cache_files_baseline} baseline, {s.cache_files_candidate} candidate"
        )
    lines.append(f"{cache}; {s.cache_files_differ} differ")
    return lines


def verdict_line(outcome: Outcome) -> Text:
    s = outcome.comparison.summary
    if outcome.exit_code == 0:
        return Text(f"HOLDS: all {s.identical} declared cases identical (exit 0)", "bold green")
    if outcome.exit_code == 1:
        return Text(
            f"MOVED: {s.moved} moved, {s.failures} failed of {s.declared} (exit 1)", "bold yellow"
        )
    return Text(
        f"UNTRUSTED: {len(outcome.findings)} provenance findings; {s.compared} of {s.declared} "
        "compared (exit 3)",
        "bold red",
    )


def outcome(console: Console, result: Outcome, show_identical: bool = False) -> None:
    h = result.harness
    b, c = result.baseline, result.candidate
    harness = "checkout" if h.rev == "WORKTREE" else h.rev
    console.print(
        f"baseline {_rev(b.rev, b.sha)} vs candidate {_rev(c.rev, c.sha)}; "
        f"table {h.table_path} from {_rev(harness, h.sha)}",
        markup=False,
        highlight=False,
    )
    findings(console, result.findings)
    if any(r.verdict is not Verdict.IDENTICAL for r in result.comparison.cases) or show_identical:
        console.print(case_table(result.comparison, show_identical))
    for line in summary_lines(result.comparison):
        console.print(line, markup=False, highlight=False)
    console.print(verdict_line(result))
    console.print(f"run directory: {result.run_dir}", markup=False, highlight=False, soft_wrap=True)


def _rev(rev: str, sha: str) -> str:
    return sha[:10] if sha.startswith(rev) else f"{sha[:10]} ({rev})"
