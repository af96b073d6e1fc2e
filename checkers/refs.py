"""Undefined references: `[text][label]` and `[text][]` whose label has no definition.

CommonMark renders an undefined reference as literal text, so a deleted or misspelt
definition silently turns a link into brackets. Only the full and collapsed forms are
reported: a lone `[text]` is as likely plain bracketed prose (`[1]`, `[x]`) as a shortcut
reference. Escaped brackets and code spans are not references; a candidate must appear
unescaped in the inline source to count.
"""

from __future__ import annotations

import re

from markdown_it.common.utils import normalizeReference

from checkers.findings import Code, Finding
from checkers.markdown import Parsed

_REFERENCE = re.compile(r"\[((?:[^\[\]\\]|\\.)+)\]\[((?:[^\[\]\\]|\\.)*)\]")


def check_references(parsed: Parsed, path: str) -> list[Finding]:
    """FD403 for each reference-style link or image whose label is not defined."""
    findings = []
    for token in parsed.tokens:
        if token.type != "inline" or not token.map or "][" not in token.content:
            continue
        offset = 0
        for child in token.children or ():
            if child.type in ("softbreak", "hardbreak"):
                offset += 1
            elif child.type == "text":
                for match in _REFERENCE.finditer(child.content):
                    label = match.group(2) or match.group(1)
                    if normalizeReference(label) in parsed.references:
                        continue
                    if match.group(0) not in token.content:
                        continue  # built from escaped brackets
                    line = token.map[0] + offset
                    text = parsed.lines[line] if line < len(parsed.lines) else ""
                    col = max(text.find(match.group(0)), 0) + 1
                    findings.append(
                        Finding(
                            path,
                            line + 1,
                            col,
                            Code.UNDEFINED_REFERENCE,
                            f"reference [{label}] is not defined; add a line "
                            f"'[{label}]: <target>' or fix the label",
                        )
                    )
    return findings
