"""Undefined references: `[text][label]`, `[text][]` and `[^note]` with no definition.

CommonMark renders an undefined reference as literal text, so a deleted or misspelt
definition silently turns a link into brackets; GitHub does the same to a footnote
reference whose `[^note]: ...` definition is missing. Only the full and collapsed link
forms are reported: a lone `[text]` is as likely plain bracketed prose (`[1]`, `[x]`) as a
shortcut reference. The parser records the candidates (``checkers.markdown``), so escaped
brackets and code spans never count.
"""

from __future__ import annotations

from checkers.findings import Code, Finding, clip
from checkers.parsed import Parsed
from checkers.positions import Locator


def check_references(parsed: Parsed, path: str) -> list[Finding]:
    """FD403 for each undefined link reference, FD405 for each undefined footnote."""
    findings = []
    where = Locator(parsed)
    for i in parsed.of("inline"):
        token = parsed.tokens[i]
        meta = token.meta
        if not token.map or not ("undefined_references" in meta or "undefined_footnotes" in meta):
            continue
        found = [
            (pos, Code.UNDEFINED_REFERENCE, label)
            for pos, label in token.meta.get("undefined_references", ())
        ] + [
            (pos, Code.UNDEFINED_FOOTNOTE, label)
            for pos, label in token.meta.get("undefined_footnotes", ())
        ]
        for pos, code, written in sorted(found):
            line, col = where.at(token, pos)
            subject = " ".join(written.split())  # a label may span lines; match as one
            label = clip(subject)
            if code is Code.UNDEFINED_REFERENCE:
                message = (
                    f"reference [{label}] is not defined; add a line '[{label}]: <target>' "
                    "or fix the label"
                )
            else:
                message = (
                    f"footnote [^{label}] is not defined; add a line '[^{label}]: <text>' "
                    "or fix the label"
                )
            findings.append(Finding(path, line, col, code, message, subject))
    return findings
