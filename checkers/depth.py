"""FD706: the parts of a page nested deeper than the parser follows, so never checked.

GitHub renders any depth; markdown-it stops at a limit (``checkers.parsed``) and used to
drop what lay past it without a word, so a page of broken links passed as clean. The
parser now notes what it skipped; each skipped part is a finding on its first line, so a
page is never reported clean unless every line of it was read.
"""

from __future__ import annotations

from checkers.findings import Code, Finding
from checkers.parsed import BLOCK_NESTING, INLINE_NESTING, Parsed
from checkers.positions import Locator


def _lines(first: int, last: int) -> str:
    return f"line {first} is" if first == last else f"lines {first}-{last} are"


def check_depth(parsed: Parsed, path: str) -> list[Finding]:
    """FD706 where blocks nest past BLOCK_NESTING or brackets past INLINE_NESTING."""
    findings = [
        Finding(
            path,
            first + 1,
            col + 1,
            Code.TOO_DEEP,
            f"nesting deeper than {BLOCK_NESTING} levels (a quote is one, a list item two): "
            f"{_lines(first + 1, last + 1)} not checked; flatten it",
        )
        for first, last, col in parsed.unread
    ]
    where = Locator(parsed)
    for token in parsed.unread_inline:
        if token.map:
            line, col = where.at(token, token.meta["unread"])
            findings.append(
                Finding(
                    path,
                    line,
                    col,
                    Code.TOO_DEEP,
                    f"brackets nested deeper than {INLINE_NESTING}: links after this point in "
                    "the paragraph may be missed (not checked); escape the brackets (\\[) or "
                    "unnest them",
                )
            )
    return findings
