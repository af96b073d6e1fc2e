"""Render a check result: one `path:line:col: CODE message` line per finding, or JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import PurePosixPath
from typing import IO, Any
from urllib.parse import quote

from checkers.baseline import Fixed
from checkers.check import SHOWN, Result
from checkers.findings import DESCRIPTIONS, Finding, clip, printable

UPDATE = "fidelity check-docs --update-baseline"


def _fixed(items: tuple[Fixed, ...]) -> list[dict[str, str | bool]]:
    return [
        {"page": f.page, "code": f.code, "subject": f.subject, **({"gone": True} if f.gone else {})}
        for f in items
    ]


def as_json(result: Result) -> dict[str, Any]:
    """The result as a JSON-ready document (stable keys)."""
    return {
        "ok": not result.findings,
        "checked": [page.display for page in result.pages],
        "findings": [f.as_dict() for f in result.findings],
        "not_shown": result.not_shown,
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
        "baseline": {
            "file": result.baseline_file,
            "held": result.held,
            "fixed": _fixed(result.fixed),
            "removed": _fixed(result.removed),
            "converted": [
                {"page": m.page, "code": m.code, "count": m.old, "subjects": m.new}
                for m in result.converted
            ],
        },
    }


def _why(fixed: Fixed) -> str:
    return ": the page was renamed or deleted" if fixed.gone else ""


def _baseline_lines(result: Result) -> list[str]:
    """What the baseline says beside the findings: fixed entries, and what was changed."""
    where = result.baseline_file
    lines = [
        f"baseline: {f.page} {f.code} {clip(f.subject)!r} is fixed{_why(f)}; remove it from "
        f"{where} with `{UPDATE}`"
        for f in result.fixed
    ]
    lines += [
        f"baseline: removed {f.page} {f.code} {clip(f.subject)!r} (fixed{_why(f)})"
        for f in result.removed
    ]
    lines += [
        f"baseline: converted {m.page} {m.code} from a count of {m.old} to {m.new} "
        f"fingerprint{'s' if m.new != 1 else ''}"
        for m in result.converted
    ]
    return lines


def _held(result: Result) -> str:
    held = sum(n for codes in result.held.values() for n in codes.values())
    if not held:
        return ""
    pages = len(result.held)
    return (
        f"; {held} held by the baseline {result.baseline_file} "
        f"({pages} page{'s' if pages != 1 else ''})"
    )


def json_text(result: Result) -> str:
    return json.dumps(as_json(result), indent=2) + "\n"


def lines(result: Result, counted: tuple[Finding, ...] | None = None) -> list[str]:
    """Findings, ratchets lowered or recorded, the baseline's notes, then a one-line summary."""
    out = [finding.render() for finding in result.findings]
    out += [
        f"{path}: {count:,} more {code} findings on this page not shown (a page lists its "
        f"first {SHOWN:,}); fix those and run again"
        for path, codes in sorted(result.not_shown.items())
        for code, count in sorted(codes.items())
    ]
    out += [f"ratchet lowered: {m.page} {m.code} {m.old} -> {m.new}" for m in result.lowered]
    out += [
        f"baseline: recorded {m.page} {m.code} ({m.new} finding{'s' if m.new != 1 else ''}) "
        f"in {result.baseline_file}"
        for m in result.recorded
    ]
    out += _baseline_lines(result)
    files = len(result.pages)
    noun = "file" if files == 1 else "files"
    findings = result.findings if counted is None else counted
    if findings:
        checked = {page.display for page in result.pages}
        paths = {f.path for f in findings}
        count = len(findings) + sum(
            n for codes in result.not_shown.values() for n in codes.values()
        )
        extra = "".join(f" and {other}" for other in sorted(paths - checked))
        out.append(
            f"check-docs: {count} finding{'s' if count != 1 else ''} in "
            f"{len(paths & checked)} of {files} {noun}{extra}{_held(result)}"
        )
    else:
        out.append(f"check-docs: {files} {noun} clean{_held(result)}")
    return out


def render(result: Result, out: IO[str], counted: tuple[Finding, ...] | None = None) -> None:
    """`lines` written as they are: no renderer that could wrap a line or read `:name:` in
    a message as an emoji (and no rich to import: check-docs starts faster without it)."""
    out.write("".join(printable(line) + "\n" for line in lines(result, counted)))


def render_summary(result: Result, out: IO[str]) -> None:
    """The summary alone, counting every finding: under `--format github` the findings are
    annotations, which fidelity.github writes."""
    render(replace(result, findings=()), out, result.findings)


def sarif_uri(path: str) -> str:
    """A page's path as SARIF's `artifactLocation.uri`: a URI reference (RFC 3986), each byte
    outside the unreserved set percent-encoded (a space, `%`, `#`, `?`, non-ASCII), so code
    scanning finds the file; an absolute path as a `file:` URI."""
    if path.startswith("/"):
        return PurePosixPath(path).as_uri()
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")  # a name's own bytes


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
                        "baselineState": "new",
                        "partialFingerprints": {"fidelityFinding/v1": f.fingerprint},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": sarif_uri(f.path)},
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
