"""A controls report as one page: the verdict, a matrix of controls x tests showing which
test caught which control and how (an assertion, an error), and the tests never seen to fail.

Built from the report's JSON (`controls.render.to_json`, the report.json a run keeps), so a
page can be made again from a controls run's directory alone. Test ids, failure kinds and
details are the tests' own text: all escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fidelity.htmlreport.page import document, esc, items, pre, section
from fidelity.plugins import fidelity_testids as testids

TESTS_SHOWN = 300  # columns of the matrix; past them, said on the page
MET = ("caught", "residue-held")


def _expected(control: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(the failing tests an expected id names, the expected ids that name none of them),
    read as the verdict reads them: a function id stands for its parametrized cases."""
    failing = tuple(control.get("failing", ()))
    named = testids.expand(control.get("expected", ()), failing)
    return {t for hits in named.values() for t in hits}, {e for e, h in named.items() if not h}


def _cell(control: Mapping[str, Any], test: str, expected: set[str], missed: set[str]) -> str:
    failing = set(control.get("failing", ()))
    kinds = control.get("kinds") or {}
    if test in failing:
        how = str(kinds.get(test, "failed"))
        cls = "caught" if test in expected else "extra"
        title = "expected, failed" if test in expected else "failed, not expected"
        return f'<td class="ctl-cell {cls}" title="{esc(title)}">{esc(how)}</td>'
    if test in missed:
        return '<td class="ctl-cell missed" title="expected, did not fail">not failed</td>'
    return '<td class="ctl-cell"></td>'


def matrix(controls: Sequence[Mapping[str, Any]]) -> str:
    """Rows are controls, columns the tests any control saw fail or expected in vain."""
    read = [_expected(c) for c in controls]
    tests = sorted(
        {t for c in controls for t in c.get("failing", ())} | {t for _, m in read for t in m}
    )
    shown = tests[:TESTS_SHOWN]
    more = (
        f'<p class="elided">{len(tests) - len(shown)} more tests not shown as columns '
        "(every control's failing tests are listed in the table above).</p>\n"
        if len(tests) > len(shown)
        else ""
    )
    head = "<th>control</th><th>verdict</th>" + "".join(
        f'<th class="test" title="{esc(t)}">{esc(t)}</th>' for t in shown
    )
    rows = "".join(
        f'<tr><td class="id">{esc(c["id"])}</td><td>{esc(c["verdict"])}</td>'
        + "".join(_cell(c, t, expected, missed) for t in shown)
        + "</tr>\n"
        for c, (expected, missed) in zip(controls, read, strict=True)
    )
    legend = (
        "<p>A cell says how the test failed for that control: green, an expected test that "
        "failed (the catch); yellow, a test that failed but was not expected; red, an "
        "expected test that did not fail.</p>\n"
    )
    return (
        legend
        + more
        + f'<div class="matrix-wrap"><table id="matrix">\n<thead><tr>{head}</tr></thead>\n'
        + f"<tbody>\n{rows}</tbody>\n</table></div>\n"
    )


def _rows(controls: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(
        f'<th data-type="{k}">{esc(n)}</th>'
        for n, k in (
            ("control", "text"),
            ("verdict", "text"),
            ("how", "text"),
            ("expected", "text"),
            ("failing", "text"),
            ("tests run", "num"),
            ("seconds", "num"),
            ("detail", "text"),
        )
    )
    rows = []
    for c in controls:
        cells = [
            f'<td class="id">{esc(c["id"])}</td>',
            f'<td class="verdict-cell">{esc(c["verdict"])}</td>',
            f"<td>{esc(c.get('how', ''))}</td>",
            f'<td class="tests">{esc(", ".join(c.get("expected", ())))}</td>',
            f'<td class="tests">{esc(", ".join(c.get("failing", ())))}</td>',
            f'<td class="num">{esc(c.get("tests_run", ""))}</td>',
            f'<td class="num">{float(c.get("duration_s", 0.0)):.2f}</td>',
            f'<td class="detail">{esc(c.get("detail", ""))}</td>',
        ]
        cls = esc(c["verdict"])
        rows.append(f'<tr class="v-{cls}" data-class="{cls}">' + "".join(cells) + "</tr>\n")
    verdicts = sorted({str(c["verdict"]) for c in controls})
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in verdicts)
    return (
        '<div class="controls"><input id="controls-filter" type="search" '
        'placeholder="filter: control, test, verdict" aria-label="filter the controls">'
        '<select id="controls-class" aria-label="only this verdict"><option value="">every '
        f'verdict</option>{options}</select><span id="controls-shown"></span></div>\n'
        f'<div class="table-wrap"><table id="controls" data-table="controls">\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{''.join(rows)}</tbody>\n</table></div>\n"
    )


def page(report: Mapping[str, Any]) -> str:
    """The page of one `controls run` report (its JSON)."""
    code = report.get("exit_code", 3)
    controls = list(report.get("controls") or [])
    baseline = report.get("baseline") or {}
    noop = report.get("noop") or {}
    meta = [
        ("tree under test", f"{report.get('sha', '')} ({report.get('rev', '')})"),
        ("control table", str(report.get("table", ""))),
        ("unmodified tree", f"{baseline.get('status', '')}, {baseline.get('tests', 0)} tests"),
        ("no-op control", str(noop.get("verdict", "not run"))),
        ("logs", str(report.get("logs") or "")),
    ]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in meta)
    body = [
        "<header>\n<h1>fidelity controls report</h1>\n",
        f'<p class="verdict exit-{esc(code)}" id="verdict">{esc(report.get("summary", ""))}</p>\n',
        f'<dl class="meta">{dl}</dl>\n',
        items(report.get("notes") or []),
        "</header>\n",
    ]
    if baseline.get("detail") and baseline.get("status") != "passed":
        body.append(section("The unmodified tree", [pre(str(baseline["detail"]))]))
    if controls:
        body.append(section("Controls", [_rows(controls)], id="controls-section"))
        body.append(section("Which test caught which control, and how", [matrix(controls)]))
    groups = report.get("identical_subsets") or []
    if groups:
        lines = [", ".join(g) for g in groups]
        body.append(section("Identical failing subsets: they do not discriminate", [items(lines)]))
    never = report.get("never_failed") or []
    title = f"Tests never seen to fail by these controls ({len(never)})"
    body.append(section(title, [items(never) or "<p>none</p>\n"], id="never-failed"))
    return document(f"fidelity controls: {report.get('summary', '')}", body)
