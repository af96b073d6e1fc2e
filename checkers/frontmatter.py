"""Front matter: a YAML (``---``) or TOML (``+++``) block at the very top of a page.

GitHub shows YAML front matter as a table above the page, never as Markdown; site
generators (Jekyll, Hugo, Zola) strip either kind. So its lines are not Markdown: a ``# x``
in it is no heading and no anchor, a link in it is not checked. The block is blanked (each
line emptied, newlines kept) so that line numbers after it stay those of the file.

Recognised as Jekyll does: the first line is ``---`` (or ``+++``), maybe with trailing
spaces, and a later line closes it with the same marker (``...`` also closes YAML). A
block that is never closed is not front matter: it is Markdown, as GitHub renders it.
"""

from __future__ import annotations

_CLOSERS = {"---": ("---", "..."), "+++": ("+++",)}


def length(text: str) -> int:
    """Characters of front matter at the start of normalized ``text`` (0 when none), up to
    and including the closing line's newline."""
    if not text.startswith(("---", "+++")):
        return 0
    first, newline, rest = text.partition("\n")
    closers = _CLOSERS.get(first.rstrip(" \t"))
    if closers is None or not newline:
        return 0
    offset = len(first) + 1
    for line in rest.split("\n"):
        end = offset + len(line)
        if line.rstrip(" \t") in closers:
            return min(end + 1, len(text))
        offset = end + 1
    return 0


def blank(text: str) -> str:
    """``text`` with its front matter's lines emptied, every newline kept."""
    size = length(text)
    if not size:
        return text
    return "\n" * text.count("\n", 0, size) + text[size:]
