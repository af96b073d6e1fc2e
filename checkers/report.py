"""Render a check result: one `path:line:col: CODE message` line per finding, or JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from checkers.check import Result
from checkers.findings import DESCRIPTIONS, Finding


def as_json(result: Result) -> dict[str, Any]:
    """The result as a JSON-ready document (stable keys)."""
    return {
        "ok": not result.findings,
        "checked": [page.display for page in result.pages],
        "findings": [f.as_dict() for f in result.findings],
        "ratchets_lowered": [
            {"page": m.page, "code": m.code, "from": m.old, "to": m.new} for m in result.lowered
        ],
        **(
            {
                "ratchets_recorded": [
                    {"page": m.page, "code": m.code, "to": m.new} for m in result.recorded
                ]
            }
            if result.recorded
            else {}
        ),
    }


def json_text(result: Result) -> str:
    return json.dumps(as_json(result), indent=2) + "\n"


def render(result: Result, console: Console, counted: tuple[Finding, ...] | None = None) -> None:
    """Findings, ratchets lowered or recorded, then a one-line summary."""
    for finding in result.findings:
        console.print(finding.render(), markup=False, highlight=False, soft_wrap=True)
    for moved in result.lowered:
        console.print(
            f"ratchet lowered: {moved.page} {moved.code} {moved.old} -> {moved.new}",
            markup=False,
            soft_wrap=True,
        )
    for added in result.recorded:
        console.print(
            f"ratchet recorded: {added.page} {added.code} {added.new}", markup=False, soft_wrap=True
        )
    files = len(result.pages)
    noun = "file" if files == 1 else "files"
    findings = result.findings if counted is None else counted
    if findings:
        checked = {page.display for page in result.pages}
        paths = {f.path for f in findings}
        count = len(findings)
        extra = "".join(f" and {other}" for other in sorted(paths - checked))
        console.print(
            f"check-docs: {count} finding{'s' if count != 1 else ''} in "
            f"{len(paths & checked)} of {files} {noun}{extra}",
            markup=False,
            soft_wrap=True,
        )
    else:
        console.print(f"check-docs: {files} {noun} clean", markup=False, soft_wrap=True)


def render_summary(result: Result, console: Console) -> None:
    """The summary alone, counting every finding: under `--format github` the findings are
    annotations, which fidelity.github writes."""
    render(Result((), result.pages, result.lowered, result.recorded), console, result.findings)


def sarif(result: Result, version: str) -> dict[str, Any]:
    """SARIF 2.1.0 for code-scanning uploads: one rule per finding code."""
    codes = sorted({str(f.code) for f in result.findings})
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "fidelity check-docs",
                        "version": version,
                        "rules": [
                            {"id": code, "shortDescription": {"text": DESCRIPTIONS[code]}}
                            for code in codes
                        ],
                    }
                },
                "results": [
                    {
                        "ruleId": str(f.code),
                        "level": "error",
                        "message": {"text": f.message},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": f.path},
                                    "region": {"startLine": f.line, "startColumn": f.col},
                                }
                            }
                        ],
                    }
                    for f in result.findings
                ],
            }
        ],
    }


def sarif_text(result: Result, version: str) -> str:
    return json.dumps(sarif(result, version), indent=2) + "\n"
