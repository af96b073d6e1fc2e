"""Markdown that text from a case cannot break, for a step summary or a PR comment.

GitHub renders these as HTML, and a case's stderr, file names and values are anyone's
bytes: `</details>` or `<img onerror=...>` would be markup, `*` emphasis, `|` a new table
cell, ESC a raw control byte. So every such text is written inline with a backslash before
each character CommonMark or GitHub would read as syntax (the spec makes any escaped ASCII
punctuation literal), with control characters shown as `\\x1b`-style escapes and line
breaks as spaces, and no mention or bare link left (`defuse`); or as a code span delimited
by more backticks than any run inside it.
"""

from __future__ import annotations

import re

from fidelity.text import visible

STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary over 1 MiB

# code, emphasis, links (both brackets: either alone opens or closes none), raw HTML and
# autolinks, entities, table cells, strikethrough, and GitHub's math (which no test parser
# here knows); `>` opens a quote only at a line's start, below
_SYNTAX = re.compile(r"[\\`*_\[\]<&|~$]")
# what a line may start with to open a block: heading, quote, list, setext underline
_LINE_START = re.compile(r"^([ \t]*)([#>+\-=]|\d{1,9}[.)])")
_BREAK = re.compile(r"\r\n|\r|\n")
# GitHub makes `@name` a mention (a PR comment pings that person) and GFM links `www.x`,
# `https://x` and `a@b.c`: a word joiner (U+2060, invisible) after `@`, `www` and the
# scheme keeps each one text
_LINKING = re.compile(r"@|\b(?:[Hh][Tt][Tt][Pp][Ss]?|[Ff][Tt][Pp]|[Ww][Ww][Ww])(?=[:.])")


def defuse(text: str) -> str:
    """text with no mention or autolink for GitHub to make of it."""
    return _LINKING.sub(lambda m: m.group() + "\u2060", text)


def _one_line(text: str) -> str:
    return visible(_BREAK.sub(" ", text))


def inline(text: str) -> str:
    """text as literal Markdown inline content, safe also in a table cell."""
    escaped = _SYNTAX.sub(r"\\\g<0>", defuse(_one_line(text)))
    return _LINE_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], escaped)


def code(text: str, in_table: bool = False) -> str:
    """text as a code span; `in_table` escapes `|`, which GFM splits cells on even there."""
    text = _one_line(text)
    if not text.strip(" "):  # an empty or all-blank span is not a code span
        return inline(text)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""  # one space each side is stripped
    body = text.replace("|", "\\|") if in_table else text
    return f"{fence}{pad}{body}{pad}{fence}"


CUT_NOTE = "\n*Cut here to fit GitHub's 1 MiB step-summary limit; --json has the whole report.*\n"


def fit(text: str, limit: int) -> str:
    """text whole when it fits in `limit` bytes; else its first lines and a note that says
    so; "" when not even the note fits."""
    data = text.encode()
    if len(data) <= limit:
        return text
    room = limit - len(CUT_NOTE.encode())
    if room <= 0:
        return ""
    head = data[:room]
    return head[: head.rfind(b"\n") + 1].decode() + CUT_NOTE
