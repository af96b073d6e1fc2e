"""GitHub footnotes: `[^label]` references and `[^label]: text` definitions.

CommonMark alone reads a definition as a link reference definition (`[^note]: https://x`
becomes a link target) and a reference as a shortcut link to it, which garbles both. These
rules parse them the way GitHub renders them (the markdown-it-footnote grammar): a
definition is a container whose content starts after ``]:`` and continues on lines indented
by four spaces; a reference to a defined label becomes a ``footnote_ref`` token. A
reference to a label that no definition names stays text, as on GitHub, and is recorded
for the checkers (``meta["undefined_footnotes"]`` of the enclosing inline token).
"""

from __future__ import annotations

from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

DEFINED = "fidelity:footnotes"
CURRENT = "fidelity:inline"  # the inline token being parsed (set by checkers.markdown)


def _label_end(src: str, start: int, end: int) -> int:
    """Index of the ``]`` closing a ``[^label`` that starts at ``start``, or -1."""
    if start + 3 > end or src[start] != "[" or src[start + 1] != "^":
        return -1
    pos = start + 2
    while pos < end:
        ch = src[pos]
        if ch in " \t\n[":
            return -1
        if ch == "]":
            return pos if pos > start + 2 else -1
        pos += 1
    return -1


def _indent_after(src: str, pos: int, end: int, offset: int) -> tuple[int, int]:
    """(position of the first non-blank after ``pos``, its column counted from ``offset``)."""
    while pos < end and src[pos] in " \t":
        offset += 4 - offset % 4 if src[pos] == "\t" else 1
        pos += 1
    return pos, offset


def definition(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: ``[^label]: content`` with four-space-indented continuation lines."""
    if state.is_code_block(start_line):
        return False
    start = state.bMarks[start_line] + state.tShift[start_line]
    maximum = state.eMarks[start_line]
    close = _label_end(state.src, start, maximum)
    if close < 0 or close + 1 >= maximum or state.src[close + 1] != ":":
        return False
    if silent:
        return True
    label = state.src[start + 2 : close]
    state.env.setdefault(DEFINED, set()).add(label.lower())
    opener = Token("footnote_reference_open", "", 1)
    opener.meta = {"label": label}
    opener.level = state.level
    state.level += 1
    state.tokens.append(opener)
    saved = (
        state.bMarks[start_line],
        state.tShift[start_line],
        state.sCount[start_line],
        state.parentType,
    )
    after_colon = close + 2
    initial = state.sCount[start_line] + after_colon - start
    pos, offset = _indent_after(state.src, after_colon, maximum, initial)
    state.bMarks[start_line] = after_colon
    state.tShift[start_line] = pos - after_colon
    state.sCount[start_line] = offset - initial
    state.blkIndent += 4
    state.parentType = "footnote"  # type: ignore[assignment, unused-ignore]  # a Literal in some releases
    if state.sCount[start_line] < state.blkIndent:
        state.sCount[start_line] += state.blkIndent
    state.md.block.tokenize(state, start_line, end_line)
    state.blkIndent -= 4
    (
        state.bMarks[start_line],
        state.tShift[start_line],
        state.sCount[start_line],
        state.parentType,
    ) = saved
    opener.map = [start_line, state.line]
    closer = Token("footnote_reference_close", "", -1)
    state.level -= 1
    closer.level = state.level
    state.tokens.append(closer)
    return True


def reference(state: StateInline, silent: bool) -> bool:
    """Inline rule: ``[^label]`` to a defined footnote; an undefined one is recorded."""
    start = state.pos
    if silent:
        # only parseLinkLabel skips tokens silently, to refuse a link inside a link's text;
        # a footnote reference is allowed there (`[[^n]][label]` is a link on GitHub)
        return False
    close = _label_end(state.src, start, state.posMax)
    if close < 0:
        return False
    label = state.src[start + 2 : close]
    if label.lower() not in state.env.get(DEFINED, ()):
        current = state.env.get(CURRENT)
        if current is not None and state.src is current.content:
            current.meta.setdefault("undefined_footnotes", []).append((start, label))
        return False
    token = state.push("footnote_ref", "", 0)
    token.meta = {"label": label, "pos": start}
    state.pos = close + 1
    return True
