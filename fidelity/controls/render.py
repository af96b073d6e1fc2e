"""Controls reports through an injected Console, and as JSON, Markdown and JUnit.

An unsound harness or a leaking no-op is printed first and alone, so that it is never read
as a pass. Every control shows its full failing subset, how many tests ran and why;
caught-differently shows both sets. Test ids, control ids and every other piece of user
data are printed as `Text`, never parsed as markup (`[/api/users]` is an id, not a tag).
"""

from __future__ import annotations

import io
from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from fidelity.controls.verdict import (
    ControlResult,
    Report,
    Verdict,
    difference,
    identical_subsets,
)
from fidelity.markdown import code, inline
from fidelity.report_junit import JUnitCase
from fidelity.text import counted, one_line, visible

STYLE = {
    Verdict.CAUGHT: "green",
    Verdict.RESIDUE_HELD: "green",
    Verdict.CAUGHT_DIFFERENTLY: "yellow",
    Verdict.CAUGHT_BY_ERROR: "red",
    Verdict.SURVIVED: "red",
    Verdict.RESIDUE_CLOSED: "red",
    Verdict.UNVIABLE: "red",
    Verdict.TIMEOUT: "red",
    Verdict.CRASHED: "red",
}
NEVER_SHOWN = 10  # tests never seen to fail, listed on the terminal (all of them in JSON)


def _tests(ids: tuple[str, ...]) -> str:
    """One test id a line: an id is the test file's to choose (pytest's ids can hold a
    line break), so each is escaped to one line that can start no CI command."""
    return "\n".join(map(one_line, ids)) if ids else "-"


def verdict(r: ControlResult) -> str:
    """`caught (assertion 3)`: which kind of failure caught a control (`failkinds`)."""
    return f"{r.verdict} ({r.how})" if r.how and r.failing else str(r.verdict)


def suggest(r: ControlResult) -> str:
    return f"`fidelity controls suggest {r.id}` prints the entry that expects what failed"


def detail(r: ControlResult, known: Collection[str] = ()) -> str:
    """A caught-differently control names the expected tests that passed (each case of a
    function-level id) and the failures nobody expected, and the command that rewrites it."""
    if r.verdict is not Verdict.CAUGHT_DIFFERENTLY:
        return r.detail
    missing, extra = difference(r, known)
    return (
        f"expected ({r.match}): {len(missing)} did not fail, {len(extra)} failed unexpectedly\n"
        f"did not fail:\n{_tests(missing)}\nfailed unexpectedly:\n{_tests(extra)}\n{suggest(r)}"
    )


RECORD_FIELDS = ("id", "verdict", "tests run", "failing tests", "detail", "how")


def records(result: Report) -> list[str]:
    """One line per control for CI logs (`-q`), always the six `RECORD_FIELDS` separated by
    tabs, a field empty where it does not apply, so field N means one thing on every line.
    A caught-differently control's detail names the tests that did not fail, those that
    failed unexpectedly, and the command that rewrites the entry."""
    total = len(result.baseline.tests)
    lines = []
    for r in result.results:
        why = r.detail or r.selection
        if r.verdict is Verdict.CAUGHT_DIFFERENTLY:
            missing, extra = difference(r, result.baseline.tests)
            why = (
                f"did not fail: {', '.join(map(one_line, missing)) or '-'}; failed "
                f"unexpectedly: {', '.join(map(one_line, extra)) or '-'}; fix: {suggest(r)}"
            )
        failing = ", ".join(map(one_line, r.failing)) or "-"
        how = f"by {r.how}" if r.how and r.failing else ""
        fields = (one_line(r.id), str(r.verdict), ran(r, total), failing, visible(why), how)
        lines.append("\t".join(" ".join(f.split()) for f in fields))
    return lines


def ran(r: ControlResult, total: int = 0) -> str:
    """How many tests ran and where: `15 of 193, warm`."""
    if not r.mode:
        return "none"
    of = f" of {total}" if total else ""
    return f"{r.tests_run}{of}, {r.mode}"


def why_ran(r: ControlResult) -> str:
    """`15 of 193, warm: those that ran merge() of toolz/dicttoolz.py` (for JSON readers,
    Markdown and the terminal's detail column)."""
    return f"{ran(r)}: {r.selection}" if r.selection else ran(r)


def _noop_scope(noop: ControlResult) -> str:
    """Which tests the no-op control ran, when not all (`unmodified.noop_selection`)."""
    return "" if noop.selection.startswith("all tests") else f" ({noop.selection})"


def trust_problem(report: Report) -> str:
    """Why the report cannot be trusted, or ''."""
    b = report.baseline
    if report.skipped:
        return ""
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


def _counts(results: list[ControlResult]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
    return ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))


def summary(report: Report) -> str:
    code = report.exit_code()
    if report.skipped:
        return f"SKIPPED: {report.skipped} (exit 0)"
    if code == 3:
        return f"UNTRUSTED: {trust_problem(report)} (exit 3)"
    n = len(report.results)
    met = [r for r in report.results if r.met]
    missed = [r for r in report.results if not r.met]
    if code == 0:
        every = "the one control met its" if n == 1 else f"all {n} controls met their"
        return f"HOLDS: {every} expectation ({_counts(met)}) (exit 0)"
    also = f"; {len(met)} did ({_counts(met)})" if met else ""
    return (
        f"MISSED: {len(missed)} of {n} controls did not meet their expectation "
        f"({_counts(missed)}){also} (exit 1)"
    )


def table(report: Report) -> Table:
    total = len(report.baseline.tests)
    out = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    out.add_column("control", no_wrap=True)
    out.add_column("verdict", no_wrap=True)
    out.add_column("failing subset", overflow="fold", ratio=4)
    out.add_column("tests run", no_wrap=True)
    out.add_column("detail", overflow="fold", ratio=3)
    for r in report.results:
        out.add_row(
            Text(one_line(r.id)),
            Text(verdict(r), STYLE[r.verdict]),
            Text(_tests(r.failing)),
            Text(ran(r, total)),
            Text(visible(detail(r, report.baseline.tests) or r.selection)),
        )
    return out


def _ids(r: ControlResult, known: Collection[str]) -> list[str]:
    """The test ids a control's row shows: its failing subset, and the tests a caught-
    differently detail lists."""
    if r.verdict is not Verdict.CAUGHT_DIFFERENTLY:
        return list(r.failing)
    missing, extra = difference(r, known)
    return [*r.failing, *missing, *extra]


def fits(report: Report, width: int) -> bool:
    """Whether the table shows every test id whole on one line at this width: it is drawn
    once aside and read back, since rich shares the room between the folding columns."""
    ids = {one_line(t) for r in report.results for t in _ids(r, report.baseline.tests)}
    if not ids:
        return True
    aside = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    aside.print(table(report))
    drawn = aside.file.getvalue()  # type: ignore[attr-defined]
    return all(t in drawn for t in ids)


def blocks(console: Console, report: Report) -> None:
    """Each control as a block, for a terminal too narrow for the table: its id, verdict
    and tests run on one line, then each failing test and the detail, indented; a line
    longer than the terminal is folded by the terminal, never cut into columns."""
    total = len(report.baseline.tests)
    for r in report.results:
        head = Text.assemble(
            (r.id, "bold"), "  ", (verdict(r), STYLE[r.verdict]), f"  {ran(r, total)}"
        )
        console.print(head, soft_wrap=True)
        for test in r.failing:
            _plain(console, f"  {one_line(test)}")
        why = detail(r, report.baseline.tests) or r.selection
        for line in visible(why).split("\n"):
            _plain(console, f"  {line}", "dim")


def _plain(console: Console, text: str, style: str = "") -> None:
    console.print(Text(text, style), soft_wrap=True)


def report(console: Console, result: Report, *, quiet: bool = False) -> None:
    """The terminal report; `quiet` (CI logs) prints one record per line, not the table,
    which off a terminal folds test ids into pieces."""
    _plain(console, f"controls at {result.sha[:10]} ({result.rev}); table {result.table}")
    for note in result.notes:
        _plain(console, f"note: {note}", "yellow")
    problem = trust_problem(result)
    if problem and result.results:  # above the table, so it is never read as a pass
        _plain(console, f"The evidence cannot be trusted: {problem}", "bold red")
    if result.results and quiet:  # straight to the file: rich would expand the tabs
        console.file.write("".join(line + "\n" for line in records(result)))
        console.file.flush()
    elif result.results and fits(result, console.width):
        console.print(table(result))
    elif result.results:
        blocks(console, result)
    if result.noop is not None:
        b, n = result.baseline, result.noop
        _plain(
            console,
            f"unmodified tree: {b.status}, {counted(len(b.tests), 'test')} in "
            f"{b.duration_s:.2f} s; "
            f"no-op control: {'survived' if n.verdict is Verdict.RESIDUE_HELD else n.verdict}"
            f"{_noop_scope(n)}; "
            f"import guard: {', '.join(result.guard) or 'the table import_check only'}",
        )
        never = result.never_failed()
        if never:
            listed = map(one_line, never[:NEVER_SHOWN])
            shown = ", ".join(listed) + (" ..." if len(never) > NEVER_SHOWN else "")
            _plain(
                console,
                f"{len(never)} of {len(b.tests)} tests were never seen to fail by these "
                f"controls: {shown}",
                "yellow",
            )
    for group in identical_subsets(result.results):
        _plain(
            console,
            f"! identical failing subsets, they do not discriminate: {one_line(', '.join(group))}",
            "yellow",
        )
    if result.logs:
        _plain(console, f"logs and report.json: {result.logs}")
    style = {0: "bold green", 1: "bold red"}.get(result.exit_code(), "bold red")
    _plain(console, summary(result), style)


def to_json(result: Report) -> dict[str, Any]:
    return {
        "rev": result.rev,
        "sha": result.sha,
        "table": result.table,
        "skipped": result.skipped or None,
        "notes": list(result.notes),
        "import_guard": list(result.guard),
        "logs": result.logs or None,
        "baseline": {
            **{k: v for k, v in asdict(result.baseline).items() if k != "skipped"},
            "failing": sorted(result.baseline.failing),
            "tests": len(result.baseline.tests),
        },
        "noop": asdict(result.noop) if result.noop else None,
        "controls": [asdict(r) for r in result.results],
        "identical_subsets": [list(g) for g in identical_subsets(result.results)],
        "never_failed": list(result.never_failed()) if result.noop is not None else [],
        "summary": summary(result),
        "exit_code": result.exit_code(),
    }


def to_markdown(result: Report) -> str:
    """The report for a PR comment or step summary; test ids and failure text escaped."""
    lines = ["### mutation controls", "", inline(summary(result)), ""]
    lines += [f"> note: {inline(n)}" for n in result.notes]
    if result.results:
        lines += [
            "| control | verdict | failing subset | tests run | detail |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {inline(r.id)} | {inline(verdict(r))} | {inline(_tests(r.failing))} "
            f"| {inline(why_ran(r))} | {inline(detail(r, result.baseline.tests))} |"
            for r in result.results
        ]
    for group in identical_subsets(result.results):
        lines += ["", f"Identical failing subsets (not discriminating): {inline(', '.join(group))}"]
    never = result.never_failed() if result.noop is not None else ()
    if never:
        lines += [
            "",
            f"<details><summary>{len(never)} tests never seen to fail by these controls</summary>",
            "",
            *(f"- {code(t)}" for t in never),
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


def to_junit(result: Report) -> list[JUnitCase]:
    """One test case per control; an untrusted run is one erroring case, never a pass."""
    problem = trust_problem(result)
    cases = [JUnitCase("harness", "fidelity.controls", error=problem)] if problem else []
    if result.skipped:
        cases.append(JUnitCase("in-diff", "fidelity.controls", skipped=result.skipped))
    for r in result.results:
        failing = ", ".join(r.failing) or "-"
        why = f"{verdict(r)}: {detail(r, result.baseline.tests)}\nfailing: {failing}"
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
