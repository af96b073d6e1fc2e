"""Link labels: where a ``[`` closes, scanned once per inline parse.

markdown-it's ``parseLinkLabel`` scans from a ``[`` to its closing bracket; at a ``[`` that
opens no link, its link rule and ``checkers.markdown``'s wrapper around it (a shortcut
reference markdown-it misses, an undefined reference) each ask for the same scan.
``helpers`` gives the shared parser a ``parseLinkLabel`` that answers each from a memo kept
on the inline state (``labels``), and ``label_close`` is CommonMark's own rule for a
reference label's end.
"""

from __future__ import annotations

import types

from markdown_it import helpers as markdown_helpers
from markdown_it.rules_inline.state_inline import StateInline

_parse_label = markdown_helpers.parseLinkLabel


def label(state: StateInline, start: int, disableNested: bool = False) -> int:
    """``parseLinkLabel``, worked out once per inline parse for a bracket (and the same
    bounds and depth): at a ``[`` that opens no link, markdown-it's link rule, then
    ``_link_or_reference`` asked it, and each answer scans to the closing bracket
    (unclosed ``[a [a [a``: 2.5x the bare parse). It only reads the
    state (``pos`` is restored; ``cache`` is markdown-it's own memo of the same scan)."""
    labels: dict[tuple[int, bool, int, int], int] | None = getattr(state, "labels", None)
    if labels is None:
        return _parse_label(state, start, disableNested)
    key = (start, disableNested, state.posMax, state.level)
    found = labels.get(key)
    if found is None:
        found = labels[key] = _parse_label(state, start, disableNested)
    return found


def helpers() -> types.SimpleNamespace:
    """markdown-it's helpers with ``label`` for ``parseLinkLabel``, for this parser only
    (``md.helpers`` is markdown-it's module, shared by every parser)."""
    return types.SimpleNamespace(
        parseLinkLabel=label,
        parseLinkDestination=markdown_helpers.parseLinkDestination,
        parseLinkTitle=markdown_helpers.parseLinkTitle,
    )


def label_close(src: str, start: int, stop: int) -> int:
    """The ``]`` closing a CommonMark link label opened at ``src[start]``, or -1: a backslash
    escapes the next character, an unescaped ``[`` ends it, and so do 999 characters."""
    pos = start + 1
    while pos < stop and pos - start <= 1000:
        char = src[pos]
        if char == "\\":
            pos += 2
            continue
        if char == "[":
            return -1
        if char == "]":
            return pos
        pos += 1
    return -1
