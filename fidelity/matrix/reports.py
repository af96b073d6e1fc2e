"""Reports of a matrix outcome for CI: Markdown (a PR comment or step summary), JUnit, JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fidelity.matrix import predict, rundir, words
from fidelity.matrix.compare import FAILURES, CaseResult, Verdict
from fidelity.matrix.outcome import Outcome
from fidelity.report_junit import JUnitCase
from fidelity.text import printable

STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub rejects a step summary over 1 MiB
UNTRUSTED = frozenset({Verdict.NOT_COMPARED, Verdict.MISSING_EVIDENCE, Verdict.DEFINITION_DIFFERS})


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _head(outcome: Outcome) -> list[str]:
    lines = [f"### fidelity: {words.verdict(outcome)}", "", words.headline(outcome), ""]
    if outcome.findings:
        lines += [
            f"**Provenance findings ({len(outcome.findings)})**: the verdict cannot be trusted.",
            "",
        ]
        lines += [f"- {_cell(words.finding_line(f))}" for f in outcome.findings] + [""]
    summary = words.selection_line(outcome) + words.summary_lines(outcome.comparison)
    lines += [f"{line}  " for line in summary] + [""]
    j, p = outcome.judged, outcome.prediction
    if j is not None and p is not None:
        lines += [
            f"**Prediction** `{p.path}` (sha256 `{p.sha256[:12]}`): {_cell(p.why)}",
            "",
            "| | cases |",
            "|---|---|",
        ]
        for label, ids in (
            ("confirmed", j.confirmed),
            ("unexpected", j.unexpected),
            ("missed", j.missed),
            ("failed", j.failed),
        ):
            lines.append(f"| {label} ({len(ids)}) | {_cell(', '.join(ids)) or '—'} |")
        lines.append("")
    return lines


def markdown(outcome: Outcome, limit: int = STEP_SUMMARY_LIMIT) -> str:
    """A compact summary under `limit` bytes; the case table is cut with a note if need be."""
    head = printable("\n".join(_head(outcome)) + "\n")
    rows = [r for r in outcome.comparison.cases if r.verdict is not Verdict.IDENTICAL]
    if not rows:
        return head
    table = "| case | verdict | detail |\n|---|---|---|\n"
    budget = limit - len(head.encode()) - len(table.encode()) - 200
    shown: list[str] = []
    for r in rows:
        line = printable(
            f"| `{_cell(r.case_id)}` | {r.verdict} | "
            f"{_cell(words.case_detail(r, outcome.run_dir))} |\n"
        )
        budget -= len(line.encode())
        if budget < 0:
            break
        shown.append(line)
    note = ""
    if len(shown) < len(rows):
        note = (
            f"\n{len(rows) - len(shown)} more non-identical cases not shown (size limit); "
            "see run.json in the run directory.\n"
        )
    return head + table + "".join(shown) + note


def _judge_case(r: CaseResult, outcome: Outcome) -> tuple[str | None, str | None]:
    """(failure, error) for one case; a prediction decides what a move means."""
    detail = words.case_detail(r, outcome.run_dir)
    if r.verdict in UNTRUSTED:
        return None, f"{r.verdict}: {detail}"
    if r.verdict in FAILURES:
        return f"{r.verdict}: {detail}", None
    j = outcome.judged
    if j is not None:
        if r.case_id in j.unexpected:
            return f"moved, not predicted: {detail}", None
        if r.case_id in j.missed:
            return "predicted to move, but identical", None
        return None, None
    return (f"moved: {detail}", None) if r.verdict is Verdict.MOVED else (None, None)


def junit_cases(outcome: Outcome, suite: str = "matrix") -> list[JUnitCase]:
    """One test case per matrix case, plus one for provenance so findings fail the build."""
    durations = {
        cid: ev.duration_s + outcome.candidate.cases[cid].duration_s
        for cid, ev in outcome.baseline.cases.items()
        if cid in outcome.candidate.cases
    }
    cases = []
    for r in outcome.comparison.cases:
        failure, error = _judge_case(r, outcome)
        cases.append(
            JUnitCase(
                r.case_id,
                suite,
                durations.get(r.case_id, 0.0),
                failure,
                error,
                output=f"{r.verdict}: {words.case_detail(r, outcome.run_dir)}",
            )
        )
    findings = "\n".join(words.finding_line(f) for f in outcome.findings)
    cases.append(JUnitCase("provenance", suite, error=findings or None))
    return cases


def json_report(outcome: Outcome) -> dict[str, Any]:
    """The run manifest with this judgement's comparison, findings and verdict, schema-checked."""
    data = {k: v for k, v in outcome.manifest.items() if k != "digest"}  # not the run.json
    data["run_dir"] = str(outcome.run_dir)
    data["comparison"] = asdict(outcome.comparison)
    data["findings"] = [asdict(f) for f in outcome.findings]
    data["prediction"] = predict.to_json(outcome.prediction)
    data["prediction_verdict"] = asdict(outcome.judged) if outcome.judged else None
    data["exit_code"] = outcome.exit_code
    return rundir.plain(data)
