"""Text that can always be written: file names that are not UTF-8, control characters, and
XML's forbidden chars.

A case can name its output files with any bytes; Python keeps such names as lone
surrogates, which no UTF-8 writer accepts. Reports show them as escapes instead. A case's
stderr can hold NUL, ESC sequences or text-direction overrides, which a terminal, a browser
or a CI log would act on; reports meant for those show them as escapes too.
"""

from __future__ import annotations

import re
from functools import cache


# compiled on first use: 0.5 ms of every command's start-up, for text most never escapes
@cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 forbids, even escaped."""
    return re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@cache
def _control() -> re.Pattern[str]:
    """C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides
    that reorder what a reader sees ("Trojan Source")."""
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """text with every lone surrogate written as `\\udcff`: valid UTF-8, still readable."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def xml_safe(text: str) -> str:
    """Text XML 1.0 can hold and a CI page shows as written: `visible`, and the two
    noncharacters XML forbids escaped too (a text-direction override was kept raw)."""
    return _not_xml().sub(_escape, visible(text))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """printable(text) with control characters (tab and newline kept) written as `\\x1b` or
    `\\u202e`: nothing left for a terminal or a browser to act on, every character readable."""
    return _control().sub(_escape, printable(text))


def one_line(text: str) -> str:
    """visible(text) with line breaks written as `\\n` too: one line of output, whatever the
    text (a line of a case's own could start a CI command, such as GitHub's `::error::`)."""
    return visible(text).replace("\n", "\\n")


def counted(n: int, noun: str) -> str:
    """`1 finding`, `2 findings`: a count with its noun, plural when it is not one."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
