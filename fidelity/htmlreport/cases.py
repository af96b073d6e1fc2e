"""The case table of a matrix run: a row per case, filtered and sorted in the page.

Each row carries its class (`data-class`) for the class filter and sort keys for the
numeric columns; `report.js` does the filtering and sorting, so the page needs no server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fidelity.htmlreport.page import esc
from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.compare import CaseResult, Verdict
from fidelity.matrix.verdict.evidence import CaseEvidence
from fidelity.matrix.verdict.outcome import Outcome

DETAIL_CHARS = 300  # of a row's detail; the case's own section below says the rest
COLUMNS = (
    ("case", "text"),
    ("class", "text"),
    ("tags", "text"),
    ("baseline s", "num"),
    ("candidate s", "num"),
    ("outputs compared", "num"),
    ("detail", "text"),
)


def anchor(case_id: str) -> str:
    """The id of a case's detail section: case ids are slugs, but escaped all the same."""
    return "case-" + case_id


def _seconds(ev: CaseEvidence | None) -> tuple[str, str]:
    if ev is None or not ev.status.executed:
        return "", "—"
    return f"{ev.duration_s:.6f}", f"{ev.duration_s:.2f}"


def _outputs(r: CaseResult, base: CaseEvidence | None, cand: CaseEvidence | None) -> str:
    names = sorted({*(base.outputs if base else ()), *(cand.outputs if cand else ())})
    differ = r.outputs.count
    shown = f"{len(names)}" + (f" ({differ} differ)" if differ else "")
    return f'<td class="num" data-sort="{len(names)}">{esc(shown)}</td>'


def _clip(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."


def row(r: CaseResult, outcome: Outcome, tags: Sequence[str], linked: bool) -> str:
    base = outcome.baseline.cases.get(r.case_id)
    cand = outcome.candidate.cases.get(r.case_id)
    name = esc(r.case_id)
    if linked:
        name = f'<a href="#{esc(anchor(r.case_id))}">{name}</a>'
    detail = "" if r.verdict is Verdict.IDENTICAL else words.case_detail(r, outcome.run_dir)
    cells = [f'<td class="id">{name}</td>', f'<td class="verdict-cell">{esc(r.verdict)}</td>']
    cells.append(f"<td>{esc(', '.join(tags))}</td>")
    for ev in (base, cand):
        key, shown = _seconds(ev)
        cells.append(f'<td class="num" data-sort="{key}">{esc(shown)}</td>')
    cells.append(_outputs(r, base, cand))
    cells.append(f"<td>{esc(_clip(detail))}</td>")
    verdict = esc(r.verdict)
    return f'<tr class="v-{verdict}" data-class="{verdict}">' + "".join(cells) + "</tr>\n"


def table(outcome: Outcome, tags: Mapping[str, Sequence[str]], linked: set[str]) -> str:
    """The filter, the class picker and the table of every case of the run."""
    present = sorted({str(r.verdict) for r in outcome.comparison.cases})
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in present)
    head = "".join(f'<th data-type="{kind}">{esc(name)}</th>' for name, kind in COLUMNS)
    rows = [
        row(r, outcome, tags.get(r.case_id, ()), r.case_id in linked)
        for r in outcome.comparison.cases
    ]
    return (
        '<div class="controls">'
        '<input id="cases-filter" type="search" placeholder="filter: id, class, tag, detail" '
        'aria-label="filter the cases">'
        '<select id="cases-class" aria-label="only this class"><option value="">every class'
        f"</option>{options}</select>"
        '<span id="cases-shown" aria-live="polite"></span></div>\n'
        f'<table id="cases" data-table="cases">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "".join(rows)
        + "</tbody>\n</table>\n"
    )
