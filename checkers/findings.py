"""What a checker reports: a located, coded finding. Codes are stable; never renumber."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from checkers.blake import hex_digest


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
    TOO_DENSE = "FD705"
    TOO_DEEP = "FD706"
    PARSER_FAILED = "FD707"


DESCRIPTIONS = {
    "FD101": "table row longer than max_row_chars",
    "FD102": "table cell longer than max_cell_chars",
    "FD103": "prose paragraph (or a run of list items) longer than max_paragraph_chars",
    "FD104": "more prose paragraphs on the page than max_prose_paragraphs",
    "FD201": "heading matches forbidden_headings (a dated or numbered-attempt diary entry)",
    "FD202": "level-2 section not in canonical_sections",
    "FD301": "fenced code block never closed",
    "FD401": "link or image target does not exist",
    "FD402": "link fragment lands on no anchor (or a line anchor past the file's end)",
    "FD403": "reference-style link whose label is not defined",
    "FD404": "link target outside the repository (never read)",
    "FD405": "footnote reference whose label is not defined",
    "FD501": "duplicate key in a keyed table",
    "FD502": "keyed-table row with a different number of cells than the header",
    "FD503": "keyed-table row with an empty key",
    "FD504": "page declares a keyed table but has none",
    "FD601": "more findings of a code than the page's ratchet allows",
    "FD602": "fewer findings than the ratchet: lower it",
    "FD701": "page is not valid UTF-8",
    "FD702": "page larger than max_page_bytes: not checked",
    "FD703": "page cannot be read (symlink outside the repository or loop, permissions)",
    "FD704": "malformed fidelity directive comment",
    "FD705": "page holds more Markdown tokens than max_page_bytes allows: not checked",
    "FD706": "part of the page nested deeper than check-docs follows: not checked",
    "FD707": "the Markdown parser failed on the page: not checked",
}


_DIGITS = re.compile(r"\d+")
QUOTED = 120  # characters of a value from a page that a message quotes; the rest is counted


def clip(value: str, limit: int = QUOTED) -> str:
    """A value as a message quotes it: whole when short, else its first ``limit`` characters,
    an ellipsis and how many more (a 200,000-character fence opener made a message of that
    size, in every report and annotation)."""
    if len(value) <= limit:
        return value
    more = len(value) - limit
    return f"{value[:limit]}… ({more:,} more character{'s' if more != 1 else ''})"


def printable(text: str) -> str:
    """text with each character that is not printable escaped as Python spells it (`\\n`,
    `\\x1b`): a file name may hold a newline or a terminal's escape, and a finding is one
    line, never a command to the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def content_subject(text: str) -> str:
    """A finding's subject from content (a paragraph, a row): whitespace collapsed; a long
    text is cut, with a hash of the whole so that an edit anywhere in it is a new subject."""
    text = " ".join(text.split())
    if len(text) <= 60:
        return text
    digest = hex_digest(text.encode("utf-8", "surrogatepass"), 4)
    return f"{text[:48]}… {digest}"


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem at ``path:line:col`` (1-based); ``path`` is as displayed.

    ``subject`` is what the finding is about, with no line number in it (a link's target, a
    label, a paragraph's content): with the code and the page it names the finding in a
    baseline (``checkers.baseline``). ``fingerprint`` is set once the finding is judged
    against one. ``hint`` is the target and fragment of a broken ``#fragment`` whose "did you
    mean" is not in the message yet: it is worked out only for findings that are shown
    (``checkers.linkcheck.with_hint``; 60,000 of them, most never listed, took 46 CPU-s).
    None of the three takes part in comparisons."""

    path: str
    line: int
    col: int
    code: Code
    message: str
    subject: str = field(default="", compare=False)
    fingerprint: str = field(default="", compare=False)
    hint: tuple[str, ...] = field(default=(), compare=False)

    @property
    def key(self) -> str:
        """The subject, or the message with its numbers masked (no line, no count)."""
        return self.subject or _DIGITS.sub("N", self.message)

    def render(self) -> str:
        return printable(f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}")

    def as_dict(self) -> dict[str, str | int]:
        found: dict[str, str | int] = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": str(self.code),
            "message": self.message,
        }
        if self.fingerprint:
            found["fingerprint"] = self.fingerprint
            found["subject"] = self.key
        return found
