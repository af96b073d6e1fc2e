"""Inline silencing: HTML comments that turn findings off where a page needs it.

    <!-- fidelity: disable-next-line FD401 -->   the line after the comment
    <!-- fidelity: disable-line FD103 -->        the comment's own line(s)
    <!-- fidelity: disable FD1 FD402 -->         from here ...
    <!-- fidelity: enable FD1 FD402 -->          ... to here (or to the end of the page)

Codes are finding codes or their prefixes (``FD1``); none means every code. Ratchet
findings (FD6) are never silenced: they count what is left. A comment that starts
``fidelity:`` but says something else is FD704, so that a typo does not silence nothing.
Comments in code are text, not directives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from checkers.findings import Code, Finding, clip
from checkers.parsed import Parsed
from checkers.positions import Locator

_COMMENT = re.compile(r"<!--\s*fidelity\s*:(.*?)-->", re.DOTALL)
_KINDS = ("disable-next-line", "disable-line", "disable", "enable")
_CODE = re.compile(r"^FD[1-7]\d{0,2}$")
_KNOWN = tuple(str(c) for c in Code)


@dataclass(frozen=True, slots=True)
class Directive:
    """One directive: what it does, to which codes (empty: all), on which lines."""

    kind: str
    codes: tuple[str, ...]
    first: int
    last: int

    def covers(self, code: str) -> bool:
        return not self.codes or code.startswith(self.codes)


def _comments(parsed: Parsed) -> Iterator[tuple[int, int, str, int]]:
    """(first line, last line, body, column) of every ``fidelity:`` comment outside code."""
    where = Locator(parsed)
    for i in parsed.of("html_block", "inline"):
        token = parsed.tokens[i]
        if token.type == "html_block" and token.map:
            for match in _COMMENT.finditer(token.content):
                line, col = where.at(token, match.start())
                yield line, line + match.group(0).count("\n"), match.group(1), col
        elif token.type == "inline" and token.map and "fidelity" in token.content:
            for child in token.children or ():
                if child.type == "html_inline" and "pos" in child.meta:
                    inline = _COMMENT.match(child.content)
                    if inline:
                        line, col = where.at(token, child.meta["pos"])
                        yield line, line + child.content.count("\n"), inline.group(1), col


def _problem(words: list[str]) -> str | None:
    if not words or words[0] not in _KINDS:
        return f"unknown directive {clip(' '.join(words))!r}; use one of: {', '.join(_KINDS)}"
    bad = [w for w in words[1:] if not _CODE.match(w) or not any(k.startswith(w) for k in _KNOWN)]
    if bad:
        shown = clip(", ".join(bad))
        return f"unknown finding code {shown}; codes look like FD401 (or a prefix, FD4)"
    return None


def directives(parsed: Parsed, path: str) -> tuple[tuple[Directive, ...], list[Finding]]:
    """The page's directives in order, and FD704 for each malformed one."""
    found, bad = [], []
    for first, last, body, col in _comments(parsed):
        words = body.split()
        problem = _problem(words)
        if problem is not None:
            bad.append(Finding(path, first, col, Code.BAD_DIRECTIVE, problem))
            continue
        found.append(Directive(words[0], tuple(words[1:]), first, last))
    return tuple(found), bad


def silenced(finding: Finding, rules: tuple[Directive, ...]) -> bool:
    """Whether a directive turns this finding off."""
    code, line, off = str(finding.code), finding.line, False
    for rule in rules:
        if not rule.covers(code):
            continue
        if rule.kind == "disable-next-line" and line == rule.last + 1:
            return True
        if rule.kind == "disable-line" and rule.first <= line <= rule.last:
            return True
        if rule.kind in ("disable", "enable") and rule.first <= line:
            off = rule.kind == "disable"
    return off
