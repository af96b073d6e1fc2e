"""One markdown-it-py parser for every checker: CommonMark plus GFM tables.

The only checker module that imports markdown-it, with ``checkers.tablerows`` and
``checkers.labels`` that only it imports (``checkers.parsed`` holds what a parse returns);
all are imported when a page is parsed: a re-run answered from the cache never loads
markdown-it.

markdown-it-py does not expose two facts the checkers need, so two block rules are wrapped
(the parse itself is unchanged; a property test renders both parsers and compares):

- ``fence`` tokens get ``meta["closed"]``: whether a closing fence was found, decided with
  the parser's own per-line offsets, so container prefixes (``>``, list indentation) and a
  missing final newline are handled the way the parser saw them.
- every token pushed counts against the parse's budget (``TooDense`` once spent): memory
  follows the tokens, and a page of nothing but ``*a `` or one-character table cells
  holds one or two per byte.
- ``table_open`` tokens get ``meta["rows"]``: ``(line, col, text)`` per header and body row,
  where ``text`` is the row as written minus container prefix and surrounding whitespace.
  markdown-it pads and truncates cells to the header's count, so cell counts as written
  must come from here.
- nesting (``checkers.nesting``): blocks are followed 100 levels deep, brackets 20; past
  either, markdown-it skipped the rest silently (for a list item, the rest of the page), so
  the block loop and ``skipToken`` are wrapped to note what was not read
  (``Parsed.unread``, ``Parsed.unread_inline``: FD706).
- a task-list item's box (``- [x] done``) is not parsed as a link (GitHub shows a
  checkbox): its inline parse starts after the box.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_core.state_core import StateCore
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

from checkers import dispatch, footnotes, frontmatter, labels
from checkers.labels import label_close
from checkers.nesting import limit_nesting
from checkers.parsed import BUDGET, UNREAD, UNREAD_INLINE, Parsed, TooDense, parser_failures
from checkers.tablerows import TRIM, line_text, rows_of, rows_only_table

TASK = "fidelity:task"  # env key: the content of the task-list item being parsed, else None
BlockRule = Callable[[StateBlock, int, int, bool], bool]
InlineRule = Callable[[StateInline, bool], bool]


_block_push = StateBlock.push
_inline_push = StateInline.push


class _CountedBlock(StateBlock):
    # the budget is spent inline, not through a helper: push runs once per token
    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        left = self.env.get(BUDGET)
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise TooDense
        return _block_push(self, ttype, tag, nesting)


class _CountedInline(StateInline):
    labels: dict[tuple[int, bool, int, int], int]  # parseLinkLabel's answers (``labels``)

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        left = self.env.get(BUDGET)
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise TooDense
        return _inline_push(self, ttype, tag, nesting)


def _count_tokens(md: MarkdownIt) -> None:
    """Every block and inline parse of ``md`` (nested ones too: an image's alt text) counts
    the tokens it pushes; the parsers' own ``parse`` methods, with the counting states."""
    block, inline = md.block, md.inline

    def block_parse(src: str, md: MarkdownIt, env: Any, out: list[Token]) -> list[Token] | None:
        if not src:
            return None
        state = _CountedBlock(src, md, env, out)
        block.tokenize(state, state.line, state.lineMax)
        return state.tokens

    def inline_parse(src: str, md: MarkdownIt, env: Any, out: list[Token]) -> list[Token]:
        state = _CountedInline(src, md, env, out)
        state.labels = {}
        if env.get(TASK) is src:  # a task-list item's box is no link: parse what follows it
            state.pos = len("[x]")
        inline.tokenize(state)
        for rule in inline.ruler2.getRules(""):
            rule(state)
        return state.tokens

    block.parse = block_parse  # type: ignore[method-assign,assignment]
    inline.parse = inline_parse  # type: ignore[method-assign,assignment]


def normalize(text: str) -> str:
    """The text markdown-it actually parses: newlines unified, NUL replaced, front matter's
    lines emptied (``checkers.frontmatter``)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    return frontmatter.blank(text)


def _is_closer(state: StateBlock, line: int, markup: str) -> bool:
    if state.sCount[line] - state.blkIndent >= 4:
        return False
    text = line_text(state, line)[1]
    marker = markup[0]
    run = len(text) - len(text.lstrip(marker))
    return run >= len(markup) and not text[run:].strip(" \t")


def _wrap_fence(rule: BlockRule) -> BlockRule:
    def fence(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        before = len(state.tokens)
        found = rule(state, start, end, silent)
        if found and not silent:
            token = state.tokens[before]
            last = state.line - 1
            token.meta["closed"] = last > start and _is_closer(state, last, token.markup)
        return found

    return fence


def _wrap_table(rule: BlockRule) -> BlockRule:
    def table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        before = len(state.tokens)
        found = rule(state, start, end, silent)
        if found and not silent:
            token = state.tokens[before]
            first, stop = token.map or (start, state.line)
            token.meta["rows"] = rows_of(state, first, stop)
        return found

    return table


_TASK_LINE = re.compile(r"[ \t\v\f]*(?:[-+*]|[0-9]+[.)])[ \t\v\f]+\[[ xX]\][ \t\v\f]")


def _is_task(tokens: list[Token], i: int, lines: Callable[[], list[str]]) -> bool:
    """A task-list item's box (cmark-gfm's tasklist extension, so GitHub's): the item's
    first block is a paragraph on the marker's line, and that line reads from its start a
    list marker, blanks, ``[ ]``, ``[x]`` or ``[X]``, then a blank (a tab, a space; not the
    line's end). The line is matched from its very start, as cmark-gfm does: an item in a
    quote (``> - [x] a``) or after another marker (``- - [x] a``) is no task there, and its
    ``[x]`` is a link when ``[x]`` is defined."""
    content = tokens[i].content
    if content[:1] != "[" or content[2:3] != "]" or content[1:2] not in " xX" or i < 2:
        return False
    paragraph, item = tokens[i - 1], tokens[i - 2]
    if paragraph.type != "paragraph_open" or item.type != "list_item_open":
        return False
    if not paragraph.map or not item.map or paragraph.map[0] != item.map[0]:
        return False
    return _TASK_LINE.match(lines()[item.map[0]]) is not None


def _inline_core(state: StateCore) -> None:
    """The core ``inline`` rule, telling the inline rules which token they are parsing
    (and, for a task-list item, that its box is not a link)."""
    split: list[list[str]] = []

    def lines() -> list[str]:
        if not split:
            split.append(state.src.split("\n"))
        return split[0]

    md, env, tokens = state.md, state.env, state.tokens
    parse = md.inline.parse
    for i, token in enumerate(tokens):
        if token.type == "inline":
            if token.children is None:
                token.children = []
            content = token.content
            if _ACTIVE.search(content) is None:
                _plain_text(content, token.children)
                continue
            env[footnotes.CURRENT] = token
            task = content[:1] == "[" and _is_task(tokens, i, lines)
            env[TASK] = content if task else None
            parse(content, md, env, token.children)
            if "undefined_references" in token.meta:
                _settle(token)
    env.pop(footnotes.CURRENT, None)
    env.pop(TASK, None)


# the characters at which an inline rule of `parser()` can match: a line break, an escape,
# a code span, emphasis, a bracket (link, image, footnote, reference), an autolink or raw
# HTML, an entity. Content without any is one text token (tests/test_checkers_properties.py)
_ACTIVE = re.compile(r"[\n\\`*_\[<&]")


def _plain_text(content: str, out: list[Token]) -> None:
    """What the inline parse makes of content where no inline rule can match: one text
    token, or none for no content. A table cell, a heading or a line of prose without markup
    is settled by one search instead of a parse, which costs about 3 us each (issue 39)."""
    if content:
        text = Token("text", "", 0)
        text.content = content
        out.append(text)


def _settle(token: Token) -> None:
    """Drop the ``[text][label]`` candidates whose ``[label]`` opens a link or footnote after
    all: ``[text][label](url)`` and ``[IRC][^IRC]`` render literal ``[text]`` and then the
    link (CommonMark matches a link's brackets from the later ``]``, GitHub's footnotes too).
    """
    starts = {
        child.meta["pos"]
        for child in token.children or ()
        if child.type in ("link_open", "image", "footnote_ref") and "pos" in child.meta
    }
    token.meta["undefined_references"] = [
        (start, label)
        for start, label, opens in token.meta["undefined_references"]
        if opens not in starts
    ]


def _current(state: StateInline) -> Token | None:
    """The inline token being parsed, unless this is a nested parse (an image's alt text)."""
    current = state.env.get(footnotes.CURRENT)
    return current if current is not None and state.src is current.content else None


def _with_position(rule: InlineRule, first: str) -> InlineRule:
    """Record ``meta["pos"]`` (offset in the inline content) on the tokens a rule pushes.
    The rule matches only at ``first`` (as markdown-it's own rules check first): every
    other character that stops the text rule is refused here without calling it."""

    def positioned(state: StateInline, silent: bool) -> bool:
        if state.src[state.pos] != first:
            return False
        start, before = state.pos, len(state.tokens)
        found = rule(state, silent)
        if found and not silent and _current(state) is not None:
            for token in state.tokens[before:]:
                if token.type not in ("text", "link_close") and "pos" not in token.meta:
                    token.meta["pos"] = start
                    token.meta["end"] = state.pos
        return found

    return positioned


def _link_or_reference(rule: InlineRule) -> InlineRule:
    """markdown-it's link rule, and where it fails at ``[text]`` followed by a label:

    - markdown-it reads ``[a][[b]]`` as a full reference with the label ``[b]`` and fails
      it; CommonMark (and GitHub) has no label there, so ``[a]`` is a shortcut reference;
    - ``[text][label]`` whose label has no definition is recorded (``_note_undefined``).
    """

    def link(state: StateInline, silent: bool) -> bool:
        if rule(state, silent):
            return True
        src, start = state.src, state.pos
        if src[start] != "[":
            return False
        end = state.md.helpers.parseLinkLabel(state, start, True)
        if end < 0 or end + 1 >= state.posMax or src[end + 1] != "[":
            return False
        close = label_close(src, end + 1, state.posMax)
        if close >= 0:  # a label after all ("[]" too): no shortcut, maybe undefined
            if not silent:
                _note_undefined(state, start, end, close)
            return False
        stop, state.posMax = state.posMax, end + 1
        try:
            return rule(state, silent)
        finally:
            state.posMax = stop

    return link


def _note_undefined(state: StateInline, start: int, end: int, close: int) -> None:
    """Record ``[text][label]`` (``src[start:close + 1]``) whose label has no definition.

    The brackets stay text, as CommonMark renders them. Only the full and collapsed forms
    count (a lone ``[text]`` is as likely prose as a shortcut reference); a ``[^label]`` is
    a footnote's (FD405), and a blank label is no label at all. A candidate whose
    ``[label]`` turns out to open a link is dropped by ``_settle``.
    """
    src = state.src
    current = _current(state)
    if current is None or src.startswith("[^", start):
        return
    label = src[end + 2 : close] or src[start + 1 : end]
    if label.startswith("^") or not label.strip(" \t\n"):
        return
    if normalizeReference(label) not in state.env.get("references", {}):
        current.meta.setdefault("undefined_references", []).append((start, label, end + 1))


@functools.cache
def parser() -> MarkdownIt:
    """The shared parser; built once because building it costs more than a small parse."""
    md = MarkdownIt("commonmark").enable("table")
    rules = {rule.name: rule for rule in md.block.ruler.__rules__}
    md.block.ruler.at("fence", _wrap_fence(rules["fence"].fn), {"alt": rules["fence"].alt})
    md.block.ruler.at("table", _wrap_table(rules["table"].fn), {"alt": rules["table"].alt})
    _footnotes(md)
    md.core.ruler.at("inline", _inline_core)
    inline = {rule.name: rule for rule in md.inline.ruler.__rules__}
    md.inline.ruler.at("link", _with_position(_link_or_reference(inline["link"].fn), "["))
    for name, first in (("image", "!"), ("html_inline", "<")):
        md.inline.ruler.at(name, _with_position(inline[name].fn, first))
    md.helpers = labels.helpers()  # type: ignore[assignment]
    _count_tokens(md)
    limit_nesting(md)
    dispatch.by_first_character(md)
    dispatch.blocks_by_first_character(md)
    return md


def _footnotes(md: MarkdownIt) -> None:
    # "blockquote": on GitHub a definition also ends a table and a quote's lazy lines (the
    # table rule stops at the blockquote rule's terminators); markdown-it-footnote's does not
    ends = ["paragraph", "reference", "blockquote"]
    md.block.ruler.before("reference", "footnote_def", footnotes.definition, {"alt": ends})
    # after "link", as cmark-gfm tries them: `[^x](url)` and `[^x][label]` (defined) are links
    md.inline.ruler.after("link", "footnote_ref", footnotes.reference)


def _skim_table(rule: BlockRule) -> BlockRule:
    """Consume a table's lines as the table rule does, pushing no tokens (a third of the
    cost of a link target's parse). Not replicated: the 65,536 auto-completed cell limit.
    A table holding raw HTML is parsed for real: a cell's ``<a id>`` is an anchor that
    links from other pages must find as the page's own links do."""

    def table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if not rule(state, start, end, True):
            return False
        if silent:
            return True
        terminators = state.md.block.ruler.getRules("blockquote")
        line = start + 2
        while line < end and state.sCount[line] >= state.blkIndent:
            if any(terminate(state, line, end, True) for terminate in terminators):
                break
            if not line_text(state, line)[1].strip(TRIM) or state.is_code_block(line):
                break
            line += 1
        if "<" in state.src[state.bMarks[start] : state.eMarks[line - 1]]:
            return rule(state, start, end, False)
        state.line = line
        return True

    return table


@functools.cache
def block_parser() -> MarkdownIt:
    """The same block structure, without inline parsing or table tokens: for link targets."""
    return _blocks_only(_skim_table)


@functools.cache
def table_parser() -> MarkdownIt:
    """The same block structure, without inline parsing, tables as their rows alone."""
    return _blocks_only(rows_only_table)


def _blocks_only(table_rule: Callable[[BlockRule], BlockRule]) -> MarkdownIt:
    """CommonMark blocks with GFM tables read by `table_rule` (wrapping markdown-it's own),
    no inline parsing, followed as deep as the shared parser follows a page."""
    md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
    rules = {rule.name: rule for rule in md.block.ruler.__rules__}
    md.block.ruler.at("table", table_rule(rules["table"].fn), {"alt": rules["table"].alt})
    _footnotes(md)
    _count_tokens(md)
    limit_nesting(md)
    dispatch.blocks_by_first_character(md)
    return md


def _parsed(text: str, tokens: list[Token], env: dict[str, Any]) -> Parsed:
    return Parsed(
        text=text,
        lines=tuple(text.split("\n")),
        tokens=tuple(tokens),
        references=frozenset(env.get("references", {})),
        footnotes=frozenset(env.get(footnotes.DEFINED, ())),
        unread=tuple(env.get(UNREAD, ())),
        unread_inline=tuple(env.get(UNREAD_INLINE, ())),
    )


def _env(budget: int | None) -> dict[str, Any]:
    return {} if budget is None else {BUDGET: [budget]}


def parse(text: str, budget: int | None = None) -> Parsed:
    """Parse Markdown; line numbers in tokens index into ``lines`` (0-based). TooDense
    when the page pushes more than ``budget`` tokens."""
    text = normalize(text)
    env = _env(budget)
    with parser_failures():
        return _parsed(text, parser().parse(text, env), env)


def parse_headings(text: str, budget: int | None = None) -> Parsed:
    """A cheaper parse for link targets: blocks only (tables skipped unless they hold raw
    HTML), inline children only for headings and for inline content holding HTML. Enough
    for anchors, nothing else. TooDense past ``budget`` tokens, as ``parse``."""
    text = normalize(text)
    env = _env(budget)
    md = parser()
    with parser_failures():
        tokens = block_parser().parse(text, env)
        for i, token in enumerate(tokens):
            if token.type == "inline" and (
                "<" in token.content or (i and tokens[i - 1].type == "heading_open")
            ):
                token.children = []
                md.inline.parse(token.content, md, env, token.children)
        return _parsed(text, tokens, env)


def parse_tables_only(text: str, budget: int | None = None) -> Parsed:
    """A parse for table readers (``checkers.tables.parse_tables``): blocks only, each
    table one ``table_open`` token with its rows, headings with their text but no inline
    children. A tenth of ``parse``'s cost on a long record table; the same tables."""
    text = normalize(text)
    env = _env(budget)
    with parser_failures():
        return _parsed(text, table_parser().parse(text, env), env)
