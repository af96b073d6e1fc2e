"""How deep the shared parser follows a page, and what it notes where it stops (FD706).

markdown-it stops at ``maxNesting`` (20 by default, for blocks and brackets alike) and
drops what lies deeper without a word: its block loop skips to the end of the range it was
given, which for a list item is the end of the page, and its ``skipToken`` skips to the end
of the paragraph. Here blocks go ``BLOCK_NESTING`` deep and brackets ``INLINE_NESTING``
(``checkers.parsed``); past either, the part not read is noted in the parse's env for
``checkers.depth``, and a too-deep container skips only its own lines, so the page after it
is read.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_inline.state_inline import StateInline

from checkers import footnotes
from checkers.parsed import BLOCK_NESTING, INLINE_NESTING, UNREAD, UNREAD_INLINE


def _column(state: StateBlock, line: int) -> int:
    """0-based column where the parser's view of a line starts (after container prefixes)."""
    start = state.bMarks[line] + state.tShift[line]
    return start - (state.src.rfind("\n", 0, start) + 1)


def _unread_block(state: StateBlock, start: int, end: int) -> None:
    """Skip the lines the too-deep container still holds (blank, or indented at least as
    deep as it), and note them; markdown-it skipped to ``end``."""
    line = state.skipEmptyLines(start)
    if line < end and state.sCount[line] >= state.blkIndent:
        first = last = line
        while line < end and (state.isEmpty(line) or state.sCount[line] >= state.blkIndent):
            if not state.isEmpty(line):
                last = line
            line += 1
        state.env.setdefault(UNREAD, []).append((first, last, _column(state, first)))
    state.line = line


def _unread_inline(state: StateInline) -> None:
    """Note where brackets went past INLINE_NESTING, on the inline token being parsed (for a
    nested parse, an image's alt text, at the token's start)."""
    token = state.env.get(footnotes.CURRENT)
    if token is None:
        return
    where = state.pos if state.src is token.content else 0
    if "unread" not in token.meta:
        state.env.setdefault(UNREAD_INLINE, []).append(token)
        token.meta["unread"] = where
    else:
        token.meta["unread"] = min(token.meta["unread"], where)


def past_limit(state: StateInline) -> bool:
    """``skipToken``'s answer past INLINE_NESTING, unless it has one already: the rest of
    the paragraph skipped, as markdown-it skips it past its own limit, and noted."""
    pos = state.pos
    if state.level < INLINE_NESTING or pos in state.cache:
        return False
    _unread_inline(state)
    state.pos = state.posMax + 1
    state.cache[pos] = state.pos
    return True


def limit_nesting(md: MarkdownIt) -> None:
    """Blocks nest to BLOCK_NESTING, brackets to INLINE_NESTING; past either, the part not
    read is noted for FD706."""
    md.options["maxNesting"] = BLOCK_NESTING
    block, inline = md.block, md.inline
    tokenize, skip = block.tokenize, inline.skipToken

    # a rule never leaves state.level changed, so the level on entry is the loop's
    def limited(state: StateBlock, start: int, end: int) -> None:
        if state.level < BLOCK_NESTING:
            tokenize(state, start, end)
        else:
            _unread_block(state, start, end)

    def skip_token(state: StateInline) -> None:
        if not past_limit(state):
            skip(state)

    block.tokenize = limited  # type: ignore[method-assign,assignment]
    inline.skipToken = skip_token  # type: ignore[method-assign]
