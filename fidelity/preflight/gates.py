"""Every preflight gate, one row each: its name, what it judges, when it applies and its
check. The order of the rows is the order of `fidelity preflight --list` and of the report;
`[tool.fidelity.preflight] gates` names gates by these names (the shipped schema lists them).
"""

from __future__ import annotations

from fidelity.preflight import message, records, rows, tables
from fidelity.preflight.context import Gate

GATES: tuple[Gate, ...] = (
    Gate(
        "cases",
        "the case table is valid",
        applies=tables.plan_cases,
        check=tables.check_cases,
    ),
    Gate(
        "controls",
        "the control table is valid and its edits apply",
        applies=tables.plan_controls,
        check=tables.check_controls,
    ),
    Gate(
        "predictions",
        "prediction files are valid and every selector names a case",
        applies=tables.plan_predictions,
        check=tables.check_predictions,
    ),
    Gate(
        "failset",
        "failing-set baselines are valid",
        applies=tables.plan_failset,
        check=tables.check_failset,
    ),
    Gate(
        "docs",
        "Markdown checkers and ratchets over the configured pages",
        applies=records.plan_docs,
        check=records.check_docs,
    ),
    Gate(
        "stale",
        "rows of the touched keyed records are landed and fresh",
        applies=records.plan_stale,
        check=records.check_stale,
    ),
    Gate(
        "rows",
        "a merge keeps every keyed record row of its parents; no key on two rows",
        applies=rows.plan_rows,
        check=rows.check_rows,
    ),
    Gate(
        "trailers",
        "the commit message's trailers",
        applies=message.plan_trailers,
        check=message.check_trailers,
    ),
)
