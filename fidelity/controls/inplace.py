"""An edit that deletes lines of Python keeps the lines after it where they were.

A find/replace edit that removes lines moves every later line of its file up, and a moved
line can be seen (a traceback, a warning, `inspect`): its selection is then every test that
ran any function of the file, and a file whose functions also ran at import is imported
afresh for it. Statement deletions are the commonest mutation, so such an edit is applied
with blank lines in place of the lines it removes, when the file then parses to the same
code as the edit written (`ast.dump` without positions): the same defect, nothing moved, the
tests of the edited function selected and its new body swapped in. Where the two differ (the
deleted lines were inside a string) or either does not parse, the edit is applied as written.
"""

from __future__ import annotations

import ast
import re

_BREAK = re.compile(r"\r\n?|\n")  # a line ends as Python's tokenizer ends one


def line_of(text: str, pos: int) -> int:
    """The line (from 1) of `text[pos]`, counted as Python counts them: a file may end its
    lines with `\r\n` or a lone `\r` as well as `\n`."""
    found = len(_BREAK.findall(text, 0, pos))
    if 0 < pos < len(text) and text[pos - 1] == "\r" and text[pos] == "\n":
        found -= 1  # `pos` is the second half of one `\r\n`: that line has not ended
    return found + 1


def breaks(text: str) -> int:
    """How many line breaks `text` holds, counted as `line_of` counts them."""
    return len(_BREAK.findall(text))


def _code(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError):
        return None


def in_place(file: str, text: str, find: str, replace: str) -> str:
    """The `replace` to apply to `text`: as written, or with a blank line before it per line
    it deletes, when that leaves a Python file the same code."""
    newline = next((n for n in ("\r\n", "\r") if n in find), "\n")
    missing = breaks(find) - breaks(replace)
    if missing <= 0 or not file.endswith(".py") or text.count(find) != 1:
        return replace
    kept = newline * missing + replace
    written = _code(text.replace(find, replace, 1))
    if written is None or written != _code(text.replace(find, kept, 1)):
        return replace
    return kept
