"""A matrix outcome as one page: the verdict in words, provenance findings, the prediction,
accepted findings, the revisions; a row per case; then each case that is not identical,
with its value-level differences, its plots (a moved numeric column) and its log
tails.

Every sentence is the one the terminal and the Markdown report say (`matrix.words`); only
the layout is this module's. The case table is always whole; case sections are added while
the page stays under its size limit, plots for the first `PLOTTED` cases, and what was left
out is said at the top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fidelity.htmlreport import cases, plots, values
from fidelity.htmlreport.page import LIMIT, Budget, document, esc, items, section
from fidelity.kinds import registry
from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.compare import CaseResult, Verdict
from fidelity.matrix.verdict.explain import output_file, spec_for
from fidelity.matrix.verdict.outcome import WORKTREE, Outcome

PLOTTED = 25  # cases whose moved columns are plotted; the rest get their values only
ORDER = {
    Verdict.MOVED: 0,
    Verdict.CANDIDATE_ONLY_FAILED: 1,
    Verdict.WITHIN_TOLERANCE: 3,
    Verdict.WITHIN_SPREAD: 3,
}


def _commit(sha: str, rev: str, dirty: bool) -> str:
    named = "" if sha.startswith(rev) else f" ({rev})"
    return f"{sha}{named}{' with uncommitted changes' if dirty else ''}"


def _meta(outcome: Outcome) -> str:
    h, b, c = outcome.harness, outcome.baseline, outcome.candidate
    harness = "the checkout" if h.rev == WORKTREE else h.rev
    rows = [
        ("harness", _commit(h.sha, harness, h.dirty)),
        ("case table", f"{h.table_path} sha256 {h.table_sha256[:12]}"),
        ("baseline", _commit(b.sha, b.rev, b.source_dirty)),
        ("candidate", _commit(c.sha, c.rev, c.source_dirty)),
        ("run directory", str(outcome.run_dir)),
    ]
    tool = outcome.manifest.get("tool", {})
    if tool:
        rows.append(("fidelity", str(tool.get("version", ""))))
    inner = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    return f'<dl class="meta">{inner}</dl>\n'


def _top(outcome: Outcome) -> list[str]:
    code = outcome.exit_code
    parts = [
        "<header>\n<h1>fidelity run report</h1>\n",
        f'<p class="verdict exit-{code}" id="verdict">{esc(words.verdict(outcome))}</p>\n',
        *(f"<p><strong>{esc(t)}</strong></p>\n" for t in words.same_commit(outcome)),
        f"<p>{esc(words.headline(outcome))}</p>\n",
        _meta(outcome),
        items(
            [
                *words.selection_line(outcome),
                *words.summary_lines(outcome.comparison, outcome.selection),
            ]
        ),
        "</header>\n",
    ]
    if outcome.findings:
        lines = [words.finding_line(f) for f in outcome.findings]
        note = "<p>The verdict cannot be trusted until each is fixed.</p>\n"
        title = f"Provenance findings ({len(lines)})"
        parts.append(section(title, [note, items(lines, "finding")], id="findings"))
    parts.append(_prediction(outcome))
    allowed = words.allowed_lines(outcome)
    if allowed:
        parts.append(section("Accepted findings", [items(allowed)], id="accepted"))
    replays = words.replay_lines(outcome)
    if replays:
        parts.append(section("Replays", [items(replays)], id="replays"))
    return parts


def _prediction(outcome: Outcome) -> str:
    j = outcome.judged
    lines = words.prediction_lines(outcome)
    if j is None or not lines:
        return ""
    rows = [
        (label, ids)
        for label, ids in (
            ("confirmed", j.confirmed),
            ("unexpected", j.unexpected),
            ("missed", j.missed),
            ("failed", j.failed),
        )
    ]
    table = "".join(
        f"<tr><th>{esc(label)} ({len(ids)})</th><td>{esc(', '.join(ids) or '-')}</td></tr>\n"
        for label, ids in rows
    )
    inner = [items(lines), f'<table class="prediction">\n<tbody>\n{table}</tbody>\n</table>\n']
    return section("Prediction", inner, id="prediction")


def _specs(outcome: Outcome) -> tuple[dict[str, Any], dict[str, Sequence[str]]]:
    declared = outcome.manifest.get("matrix", {}).get("cases", [])
    specs: dict[str, Any] = {c["id"]: c.get("compare", {}) for c in declared}
    tags: dict[str, Sequence[str]] = {c["id"]: tuple(c.get("tags", ())) for c in declared}
    return specs, tags


def _plots(r: CaseResult, outcome: Outcome, specs: Mapping[str, Any]) -> str:
    parts = []
    base, cand = outcome.baseline.cases[r.case_id], outcome.candidate.cases[r.case_id]
    for e in r.explained:
        spec = spec_for(e.path, specs) or {}
        files = (
            output_file(outcome.run_dir, "baseline", r.case_id, base.path_of(e.path)),
            output_file(outcome.run_dir, "candidate", r.case_id, cand.path_of(e.path)),
        )
        for p in plots.plot(e, files, spec, f"{r.case_id}-{e.path}"):
            note = f"<p>{esc(p.note)}</p>" if p.note else ""
            title = f"<h4>{esc(e.path)}: {esc(p.column)}</h4>"
            parts.append(f'<figure class="plot" data-column="{esc(p.column)}">{title}{note}')
            parts.append(f"{p.svg}</figure>\n")
    return "".join(parts)


def detail(r: CaseResult, outcome: Outcome, plotted: str = "") -> str:
    """One case's section: what it says, its explained outputs, their plots (made by
    `_plots`), its log tails."""
    parts = [f"<h3>{esc(r.case_id)}: {esc(r.verdict)}</h3>\n"]
    parts.append(f"<p>{esc(words.case_detail(r, outcome.run_dir))}</p>\n")
    for label, names in (
        ("outputs only in the candidate", r.outputs.added),
        ("outputs only in the baseline", r.outputs.missing),
        ("cache files that differ", (*r.cache.changed, *r.cache.added, *r.cache.missing)),
    ):
        if names:
            parts.append(f"<p>{esc(label)}: {esc(', '.join(names))}</p>\n")
    parts += [values.output(e) for e in r.explained]
    parts += [plotted, values.logs(outcome.run_dir, r.case_id)]
    anchor = esc(cases.anchor(r.case_id))
    return f'<section class="case-detail" id="{anchor}">\n' + "".join(parts) + "</section>\n"


def _plottable(r: CaseResult) -> bool:
    return any(registry.of(e.kind).plots and not e.limit for e in r.explained)


def _sections(outcome: Outcome, shown: Sequence[CaseResult], budget: Budget) -> list[str]:
    """Each case's section while it fits; its plots too, for the first PLOTTED that fit."""
    specs, _ = _specs(outcome)
    sections, plotted = [], 0
    for r in shown:
        plain = detail(r, outcome)
        if not budget.take(plain, "case sections", dry=True):
            budget.count("case sections")
            sections.append("")
            continue
        part = ""
        if _plottable(r) and plotted < PLOTTED:
            figures = _plots(r, outcome, specs.get(r.case_id, {}))
            part = budget.take(detail(r, outcome, figures), "")
            plotted += bool(part)
            if not part:
                budget.count("cases' plots (too large for the page)")
        elif _plottable(r):
            budget.count(f"cases' plots (past the first {PLOTTED} cases plotted)")
        sections.append(part or budget.take(plain, "case sections"))
    return sections


def page(outcome: Outcome, limit: int = LIMIT) -> str:
    """The whole page, at most about `limit` bytes but for the case table, which is whole."""
    _, tags = _specs(outcome)
    shown = sorted(
        (r for r in outcome.comparison.cases if r.verdict is not Verdict.IDENTICAL),
        key=lambda r: ORDER.get(r.verdict, 2),
    )
    top = _top(outcome)
    budget = Budget(limit - sum(len(p.encode()) for p in top))
    table = cases.table(outcome, tags, {r.case_id for r in shown})
    budget.left -= len(table.encode()) + 16384  # the head, style and script
    sections = _sections(outcome, shown, budget)
    body = [*top, budget.note(limit), section("Cases", [table], id="cases-section")]
    if shown:
        body.append(section("What differs, case by case", sections, id="details"))
    return document(f"fidelity: {words.verdict(outcome)}", body)
