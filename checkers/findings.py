"""What a checker reports: a located, coded finding. Codes are stable; never renumber."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Code(enum.StrEnum):
    """Stable finding codes; the first digit names the rule family."""

    ROW_TOO_LONG = "FD101"
    CELL_TOO_LONG = "FD102"
    PARAGRAPH_TOO_LONG = "FD103"
    TOO_MANY_PARAGRAPHS = "FD104"
    FORBIDDEN_HEADING = "FD201"
    NON_CANONICAL_SECTION = "FD202"
    UNCLOSED_FENCE = "FD301"
    MISSING_FILE = "FD401"
    MISSING_ANCHOR = "FD402"
    UNDEFINED_REFERENCE = "FD403"
    OUTSIDE_ROOT = "FD404"
    UNDEFINED_FOOTNOTE = "FD405"
    DUPLICATE_KEY = "FD501"
    CELL_COUNT = "FD502"
    EMPTY_KEY = "FD503"
    NO_KEYED_TABLE = "FD504"
    RATCHET_EXCEEDED = "FD601"
    RATCHET_SLACK = "FD602"
    NOT_UTF8 = "FD701"
    TOO_LARGE = "FD702"
    UNREADABLE = "FD703"
    BAD_DIRECTIVE = "FD704"


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem at ``path:line:col`` (1-based); ``path`` is as displayed."""

    path: str
    line: int
    col: int
    code: Code
    message: str

    def render(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, str | int]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": str(self.code),
            "message": self.message,
        }
