"""The shared parser's inline and block rules called by the character they start at.

markdown-it's inline loop tries every rule in turn at each character its ``text`` rule
stops at, and each rule but one returns at once because the character is not its own: at a
``]`` twelve calls find nothing. ``by_first_character`` puts one rule after ``text`` that
calls, in the chain's order, only the rules that can start at the character under the
cursor, and gives the parser a ``skipToken`` (markdown-it's, with ``checkers.nesting``'s
limit) that does the same: the same rules answer in the same order, so the parse is the
same (a property test renders both). It is one call deep per bracket, where markdown-it's
with the limit's wrapper and the dispatching rule made three: a label scan nests one such
call per open bracket. A chain holding a rule not named in ``FIRST`` is left as it is.

Block rules likewise (``blocks_by_first_character``), by the first character of the line:
each line of a paragraph asks every rule that may end it, most of which look for one
character (``#``, ``>``, a list marker); 11% of the parse of ordinary pages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from checkers.nesting import past_limit

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block.state_block import StateBlock
    from markdown_it.rules_inline.state_inline import StateInline

Rule = Callable[["StateInline", bool], bool]

# the characters each rule checks for first, and returns False at any other
FIRST = {
    "newline": "\n",
    "escape": "\\",
    "backticks": "`",
    "strikethrough": "~",
    "emphasis": "*_",
    "link": "[",
    "footnote_ref": "[",
    "image": "!",
    "autolink": "<",
    "html_inline": "<",
    "entity": "&",
}


def by_first_character(md: MarkdownIt) -> bool:
    """Replace the inline chain after ``text`` with one rule that dispatches on the
    character, and ``skipToken`` with one that does; whether it did (not when the chain
    holds a rule ``FIRST`` does not name). Call it after ``checkers.nesting``."""
    chain = [rule for rule in md.inline.ruler.__rules__ if rule.enabled]
    if not chain or chain[0].name != "text" or any(r.name not in FIRST for r in chain[1:]):
        return False
    rules: dict[str, tuple[Rule, ...]] = {}
    for rule in chain[1:]:
        for char in FIRST[rule.name]:
            rules[char] = (*rules.get(char, ()), rule.fn)

    def dispatch(state: StateInline, silent: bool) -> bool:
        for rule in rules.get(state.src[state.pos], ()):  # noqa: SIM110 (no generator per call)
            if rule(state, silent):
                return True
        return False

    md.inline.ruler.disable([rule.name for rule in chain[1:]])
    md.inline.ruler.after("text", "by_first_character", dispatch)
    md.inline.skipToken = _skipper(chain[0].fn, rules)  # type: ignore[method-assign,assignment]
    return True


def _skipper(text: Rule, rules: dict[str, tuple[Rule, ...]]) -> Callable[[StateInline], None]:
    """markdown-it's ``skipToken`` (every rule in validation mode, one level deeper, its
    answer cached by position) with ``past_limit`` first and the rules by character."""
    chains = {char: (text, *found) for char, found in rules.items()}
    alone = (text,)

    def skip_token(state: StateInline) -> None:
        pos, cache = state.pos, state.cache
        if pos in cache:
            state.pos = cache[pos]
            return
        if past_limit(state):
            return
        ok = False
        if state.level < state.md.options["maxNesting"]:
            for rule in chains.get(state.src[pos], alone):
                state.level += 1
                ok = rule(state, True)
                state.level -= 1
                if ok:
                    if state.pos <= pos:
                        raise RuntimeError("inline rule didn't increment state.pos")
                    break
        else:
            state.pos = state.posMax  # markdown-it skips to the paragraph's end
        if not ok:
            state.pos += 1
        cache[pos] = state.pos

    return skip_token


# the characters a block rule checks for first, at the line's first non-blank, returning
# False at any other; the rules in BLOCK_ANY look past it (the next line, the indent, any
# text) and are tried at every line, in their place in the chain
BLOCK_FIRST = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "footnote_def": "[",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
}
BLOCK_ANY = frozenset({"table", "code", "lheading", "paragraph"})

BlockRule = Callable[["StateBlock", int, int, bool], bool]


def blocks_by_first_character(md: MarkdownIt) -> bool:
    """Give each of the block ruler's chains (the main one, and the rules that may end a
    paragraph, a reference, a quote or a list) one rule that calls only the rules that can
    start at the line's first character, in the chain's order; whether it did (not when a
    rule is named in neither ``BLOCK_FIRST`` nor ``BLOCK_ANY``)."""
    ruler = md.block.ruler
    rules = [rule for rule in ruler.__rules__ if rule.enabled]
    if any(r.name not in BLOCK_FIRST and r.name not in BLOCK_ANY for r in rules):
        return False
    names = {"", *(alt for rule in rules for alt in rule.alt)}
    chains = {
        name: [_block_dispatch([r.fn for r in rules if not name or name in r.alt], rules)]
        for name in names
    }

    def get_rules(name: str) -> list[BlockRule]:
        return chains.get(name, [])

    ruler.getRules = get_rules  # type: ignore[method-assign,assignment]
    return True


def _block_dispatch(chain: list[BlockRule], rules: list[Any]) -> BlockRule:
    named = {rule.fn: rule.name for rule in rules}
    chars = {char for fn in chain for char in BLOCK_FIRST.get(named[fn], "")}
    by_char = {
        char: tuple(fn for fn in chain if named[fn] in BLOCK_ANY or char in BLOCK_FIRST[named[fn]])
        for char in chars
    }
    anywhere = tuple(fn for fn in chain if named[fn] in BLOCK_ANY)

    def dispatch(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        pos = state.bMarks[start] + state.tShift[start]
        char = state.src[pos] if pos < state.eMarks[start] else ""
        for rule in by_char.get(char, anywhere):  # noqa: SIM110 (no generator per call)
            if rule(state, start, end, silent):
                return True
        return False

    return dispatch
