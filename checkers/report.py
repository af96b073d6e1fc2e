"""Render a check result: one `path:line:col: CODE message` line per finding, or JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from checkers.check import Result


def as_json(result: Result) -> dict[str, Any]:
    """The result as a JSON-ready document (stable keys)."""
    return {
        "ok": not result.findings,
        "checked": [page.display for page in result.pages],
        "findings": [f.as_dict() for f in result.findings],
        "ratchets_lowered": [
            {"page": m.page, "code": m.code, "from": m.old, "to": m.new} for m in result.lowered
        ],
    }


def json_text(result: Result) -> str:
    return json.dumps(as_json(result), indent=2) + "\n"


def render(result: Result, console: Console) -> None:
    """Findings, ratchets lowered, then a one-line summary."""
    for finding in result.findings:
        console.print(finding.render(), markup=False, highlight=False, soft_wrap=True)
    for moved in result.lowered:
        console.print(
            f"ratchet lowered: {moved.page} {moved.code} {moved.old} -> {moved.new}",
            markup=False,
            soft_wrap=True,
        )
    files = len(result.pages)
    noun = "file" if files == 1 else "files"
    if result.findings:
        paths = len({f.path for f in result.findings})
        count = len(result.findings)
        console.print(
            f"check-docs: {count} finding{'s' if count != 1 else ''} in {paths} of {files} {noun}",
            markup=False,
            soft_wrap=True,
        )
    else:
        console.print(f"check-docs: {files} {noun} clean", markup=False, soft_wrap=True)
