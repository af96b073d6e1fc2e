"""Reports of a matrix outcome for CI: Markdown (a PR comment or step summary), JUnit, JSON.

The Markdown quotes what cases wrote (stderr tails, output names, values): all of it goes
through fidelity.markdown, so no case can put HTML, a table cell or a control byte into the
page GitHub renders.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from fidelity.markdown import CUT_NOTE, STEP_SUMMARY_LIMIT, code, fit, inline
from fidelity.matrix.run import rundir
from fidelity.matrix.verdict import predict, words
from fidelity.matrix.verdict.compare import FAILURES, CaseResult, Verdict
from fidelity.matrix.verdict.evidence import ReplayVerdict
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.report_junit import JUnitCase

UNTRUSTED = frozenset({Verdict.NOT_COMPARED, Verdict.MISSING_EVIDENCE, Verdict.DEFINITION_DIFFERS})
TABLE = ["| case | verdict | detail |", "|---|---|---|"]
NOTE_ROOM = 200  # bytes kept for each "N more not shown" note
SHOWN_IDS = 50  # case ids listed in one cell of the prediction table


def _size(lines: list[str]) -> int:
    return sum(len(line.encode()) + 1 for line in lines)


def _take(lines: list[str], room: int) -> tuple[list[str], int]:
    """The leading lines that fit in room bytes, and the room left."""
    taken = []
    for line in lines:
        size = len(line.encode()) + 1
        if size > room:
            break
        taken.append(line)
        room -= size
    return taken, room


def _ids(ids: tuple[str, ...]) -> str:
    more = f" (+{len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else ""
    return inline(", ".join(ids[:SHOWN_IDS]) + more) or "—"


def _summary(outcome: Outcome) -> list[str]:
    """The counts, and the prediction with how it fared."""
    summary = words.selection_line(outcome)
    summary += words.summary_lines(outcome.comparison, outcome.selection)
    summary += words.replay_lines(outcome, only_bad=True)  # the rest are in run.json
    lines = [f"{inline(line)}  " for line in summary] + [""]
    j, p = outcome.judged, outcome.prediction
    if j is not None and p is not None:
        lines += [
            f"**Prediction** {code(p.path)} (sha256 `{p.sha256[:12]}`): {inline(p.why)}",
            "",
            "| | cases |",
            "|---|---|",
        ]
        for label, ids in (
            ("confirmed", j.confirmed),
            ("unexpected", j.unexpected),
            ("missed", j.missed),
            ("failed", j.failed),
            *((("expected findings that did not occur", j.unmet),) if j.unmet else ()),
        ):
            lines.append(f"| {label} ({len(ids)}) | {_ids(ids)} |")
        lines.append("")
    return lines


def _row(r: CaseResult, run_dir: Path) -> str:
    detail = inline(words.case_detail(r, run_dir))
    return f"| {code(r.case_id, in_table=True)} | {r.verdict} | {detail} |"


def markdown(outcome: Outcome, limit: int = STEP_SUMMARY_LIMIT) -> str:
    """The verdict in under `limit` bytes, every text from a case escaped. The verdict,
    counts and prediction always; findings and case rows while they fit, then a note of
    how many were cut; "" when not even the verdict fits."""
    top = [f"### fidelity: {inline(words.verdict(outcome))}", ""]
    top += [line for text in words.same_commit(outcome) for line in (f"**{inline(text)}**", "")]
    top += [inline(words.headline(outcome)), ""]
    allowed = words.allowed_lines(outcome)  # never cut: an accepted finding is never silent
    top += [f"- {inline(t[4:])}" if t.startswith("  ~ ") else inline(t) for t in allowed]
    top += [""] if allowed else []
    summary = _summary(outcome)
    found = [f"- {inline(words.finding_line(f))}" for f in outcome.findings]
    rows = [
        _row(r, outcome.run_dir)
        for r in outcome.comparison.cases
        if r.verdict is not Verdict.IDENTICAL
    ]
    room = limit - _size(top + summary + (TABLE if rows else [])) - 3 * NOTE_ROOM
    if room < 0:  # the verdict alone, and a note that the rest was cut
        verdict = "\n".join(top) + "\n"
        if len((verdict + CUT_NOTE).encode()) <= limit:
            return verdict + CUT_NOTE
        return fit(verdict, limit)
    shown_found, room = _take(found, room)
    shown_rows, room = _take(rows, room)
    lines = list(top)
    if found:
        lines += [
            f"**Provenance findings ({len(found)})**: the verdict cannot be trusted.",
            "",
            *shown_found,
        ]
        if len(shown_found) < len(found):
            lines.append(
                f"- {len(found) - len(shown_found)} more findings not shown (size limit); "
                "see run.json in the run directory"
            )
        lines.append("")
    lines += summary
    if rows:
        lines += TABLE + shown_rows
        if len(shown_rows) < len(rows):
            lines += [
                "",
                f"{len(rows) - len(shown_rows)} more non-identical cases not shown (size "
                "limit); see run.json in the run directory.",
            ]
    return "\n".join(lines) + "\n"


def judge_case(r: CaseResult, outcome: Outcome) -> tuple[str | None, str | None]:
    """(failure, error) for one case; a prediction decides what a move means."""
    detail = words.case_detail(r, outcome.run_dir)
    if r.verdict in UNTRUSTED:
        return None, f"{r.verdict}: {detail}"
    j = outcome.judged
    if r.verdict in FAILURES and _stated(r.case_id, outcome):
        return None, None  # a failure the table accepts or the prediction said, as said
    if r.verdict in FAILURES:
        return f"{r.verdict}: {detail}", None
    replayed = [f"{role} {v}" for role, v in r.replay if ReplayVerdict(v).bad]
    if replayed and (j is None or r.case_id in j.failed or r.case_id in j.missed):
        return f"replay: {', '.join(replayed)}; {detail}", None
    if j is not None:
        if r.case_id in j.unexpected:
            return f"moved, not predicted: {detail}", None
        said = outcome.prediction.replay if outcome.prediction else {}
        if r.case_id in j.missed and r.case_id in said:
            got = dict(r.replay).get("candidate", "not replayed")
            return f"predicted replay {said[r.case_id]}, got {got}: {detail}", None
        if r.case_id in j.missed:
            return "predicted to move, but identical", None
        return None, None
    return (f"moved: {detail}", None) if r.verdict is Verdict.MOVED else (None, None)


def _stated(case_id: str, outcome: Outcome) -> bool:
    """The case's failure is one the table accepts, or the prediction said it, as it said."""
    known = any(f.case_id == case_id and f.code is Code.BOTH_FAILED for f, _ in outcome.accepted)
    return known or (outcome.judged is not None and case_id in outcome.judged.confirmed)


def junit_cases(outcome: Outcome, suite: str = "matrix") -> list[JUnitCase]:
    """One test case per matrix case, plus one for provenance so findings fail the build."""
    durations = {
        cid: ev.duration_s + outcome.candidate.cases[cid].duration_s
        for cid, ev in outcome.baseline.cases.items()
        if cid in outcome.candidate.cases
    }
    cases = []
    for r in outcome.comparison.cases:
        failure, error = judge_case(r, outcome)
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
    cases += _unselected(outcome, suite)
    findings = "\n".join(words.finding_line(f) for f in outcome.findings)
    said = [words.verdict(outcome), words.headline(outcome), *words.allowed_lines(outcome)]
    cases.append(JUnitCase("provenance", suite, error=findings or None, output="\n".join(said)))
    return cases


def _unselected(outcome: Outcome, suite: str) -> list[JUnitCase]:
    """A partial run's declared cases it did not run, as skipped test cases: a CI page
    counts them, so the report of a partial run cannot pass for the full gate's."""
    selection = outcome.selection
    if selection is None:
        return []
    ran = {r.case_id for r in outcome.comparison.cases}
    why = f"not run: a partial run of {selection.scope}; the full gate runs every case"
    return [JUnitCase(cid, suite, skipped=why) for cid, _ in selection.all if cid not in ran]


def json_report(outcome: Outcome) -> dict[str, Any]:
    """The run manifest with this judgement's comparison, findings and verdict, schema-checked."""
    data = {k: v for k, v in outcome.manifest.items() if k != "digest"}  # not the run.json
    data["run_dir"] = str(outcome.run_dir)
    data["comparison"] = asdict(outcome.comparison)
    data["findings"] = [asdict(f) for f in outcome.findings]
    data["prediction"] = predict.to_json(outcome.prediction)
    data["prediction_verdict"] = asdict(outcome.judged) if outcome.judged else None
    data["exit_code"] = outcome.exit_code
    data["verdict"] = words.verdict(outcome)  # the words every other report leads with
    data["same_commit"] = bool(words.same_commit(outcome))  # a commit compared with itself
    return rundir.plain(data)
