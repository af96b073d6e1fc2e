"""docs/reference/findings.md: which findings a table's `[[accept]]` (or a prediction's
`findings`) may name, from the one list in code (fidelity/matrix/verdict/accept.py `NEVER`, `MAY`)
that validation refuses them by (scripts/gen_reference.py writes the page)."""

from __future__ import annotations

from collections.abc import Mapping

from fidelity.matrix.verdict.accept import MAY, NEVER


def _rows(decided: Mapping[str, str]) -> list[str]:
    return [f"| `{code}` | {why} |" for code, why in sorted(decided.items())]


def findings_page(
    header: str, never: Mapping[str, str] = NEVER, may: Mapping[str, str] = MAY
) -> str:
    lines = [
        "# Findings a table may accept, and those it never may",
        "",
        "A finding makes a run untrusted (exit 3). A case table's `[[accept]]` entry (or a "
        "prediction's `findings`) can state a known one in the open "
        "([accepted findings](../case-matrix.md#accepted-findings-known-deviations-in-the-open)),"
        " except the findings below: a table or prediction that names one is refused (exit 2, "
        "naming the file, the entry and why). They mean that the evidence may not be the "
        "commit's, that it was changed after the run, that the gate was loosened, or that a "
        "prediction came late; accepting one would certify what it cannot.",
        "",
        "## Never accepted",
        "",
        "| finding | why it can never be accepted |",
        "|---|---|",
        *_rows(never),
        "",
        "## May be accepted",
        "",
        "| finding | when accepting it can make sense |",
        "|---|---|",
        *_rows(may),
    ]
    return header + "\n".join(lines) + "\n"
