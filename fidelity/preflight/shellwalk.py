"""The tree-sitter walk over a shell command line (pure): the syntax tree in document order,
the variables the line sets, what feeds a command's standard input, and the nesting of
`sh -c`, `eval` and aliases as lines of their own. What a simple command does is its
subclass's question (`shell`, `shellgit`)."""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from fidelity.preflight.gitcli import Commit, head, join
from fidelity.preflight.shellwords import heredoc_body, literal, text

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# variables a non-interactive shell runs later: a child shell's start-up file, `set -x`'s
# prompt (PS1 and PROMPT_COMMAND are for interactive shells; a venv's activate sets them)
EVALUATED = frozenset({"BASH_ENV", "ENV", "PS4"})
MAX_DEPTH = 16  # nested sh -c, eval and aliases; deeper is a commit in doubt
LONG_OPTION = re.compile(r"[\"']?(--[A-Za-z][A-Za-z0-9-]*)=")
MAX_NODES = 200_000  # a line with more syntax nodes than this is judged, not walked


class Lookup(Protocol):
    """What the analysis may ask of the machine: git aliases, script files."""

    def aliases(self, cwd: str) -> Mapping[str, str]: ...

    def script(self, path: str) -> str | None: ...

    def program(self, name: str) -> bool:
        """Whether a command name is a program on PATH (else an alias or function)."""
        ...

    def folder(self, path: str) -> bool:
        """Whether path is a folder (where bash's CDPATH search stops)."""
        ...


class NoLookup:
    """No aliases known and no file readable: every script run is a commit in doubt; every
    command name a program."""

    def aliases(self, cwd: str) -> Mapping[str, str]:
        return {}

    def script(self, path: str) -> str | None:
        return None

    def program(self, name: str) -> bool:
        return True

    def folder(self, path: str) -> bool:
        return False


@dataclass(slots=True)
class State:
    """Where the line is, as far as its text says, and what it has done so far."""

    cwd: str
    cwd_known: bool = True
    staged_before: bool = False
    brought: str = ""  # the first git command that filled the index from elsewhere
    env: dict[str, str | None] = field(default_factory=dict)  # variables the line set
    visited: list[str] = field(default_factory=list)  # directories it was in
    aliases: dict[str, str] = field(default_factory=dict)  # bash aliases it defined
    functions: set[str] = field(default_factory=set)  # shell functions it defined

    def fork(self, cwd: str | None = None, known: bool | None = None) -> State:
        return State(
            self.cwd if cwd is None else cwd,
            self.cwd_known if known is None else known,
            self.staged_before,
            self.brought,
            dict(self.env),
            list(self.visited),
            dict(self.aliases),
            set(self.functions),
        )

    def absorb(self, other: State) -> None:
        """What a nested line (sh -c, an alias) staged or brought counts for this one."""
        self.staged_before = self.staged_before or other.staged_before
        self.brought = self.brought or other.brought


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _gaps(source: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """(offset, text) of the words between start and end: what no node covered."""
    gap = source[start:end].replace(b"\\\n", b"  ") if end > start else b""
    return [(start + m.start(), m.group()) for m in re.finditer(rb"[^ \t\r\n]+", gap)]


def _standalone(node: Node) -> bool:
    """An assignment of its own (`X=1;`, `export X=1`), not a prefix of one command."""
    return node.parent is not None and node.parent.type != "command"


def _argument(node: Node) -> list[str | None]:
    """An argument's value; `--name=$X` is the option and a value only the shell knows
    (`--work-tree=$D` names another work tree, whatever $D holds)."""
    value = literal(node)
    if value is not None:
        return [value]
    option = LONG_OPTION.match(text(node))
    return [option.group(1), None] if option else [None]


def _mentions(value: str) -> bool:
    lowered = value.lower()
    return "git" in lowered or "commit" in lowered


class Walker(abc.ABC):
    """Walks a line's syntax tree and hands each simple command to `simple`."""

    def __init__(self, lookup: Lookup, top: str) -> None:
        self.lookup = lookup
        self.mentions_git = _mentions(top)
        self.guessing = 0  # inside a word read as a line only in case it is one

    def doubt(self, state: State, why: str) -> list[Commit]:
        """A commit in doubt, where the line's GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE
        would put one."""
        where = head([], state.cwd, state.cwd_known, state.env)
        found = Commit(
            where.cwd,
            stages=True,
            unknown=why,
            cwd_known=where.known,
            doubt=why,
            also=tuple(dict.fromkeys([*state.visited, state.cwd])),
            brought=state.brought,
            place=where.place,
        )
        return [found]

    def script(self, line: str, state: State, depth: int) -> list[Commit]:
        if depth > MAX_DEPTH:
            return self.doubt(state, f"nested more than {MAX_DEPTH} levels deep")
        source = line.encode("utf-8", "surrogateescape")
        tree = _parser().parse(source)
        if tree.root_node.descendant_count > MAX_NODES:
            return self.doubt(state, f"the line is too large to read ({MAX_NODES:,}+ nodes)")
        before = state.fork()
        found, dropped = self.walk(tree.root_node, source, state, depth)
        if dropped and all(word == b"-" for _, word in dropped):
            # tree-sitter-bash drops the `-` of `cmd - <<EOF`; quoted, it is kept
            for i, _ in reversed(dropped):
                source = source[:i] + b"'-'" + source[i + 1 :]
            state.cwd, state.cwd_known, state.visited = before.cwd, before.cwd_known, before.visited
            state.staged_before, state.brought, state.env = (
                before.staged_before,
                before.brought,
                before.env,
            )
            tree = _parser().parse(source)
            found, dropped = self.walk(tree.root_node, source, state, depth)
        if (tree.root_node.has_error or dropped) and self.mentions_git:
            why = "the shell could not parse the line (unbalanced quotes?)"
            found = [replace(c, stages=True, message=None, unknown=why) for c in found]
            return found or self.doubt(state, why)
        return found

    def walk(
        self, root: Node, source: bytes, state: State, depth: int
    ) -> tuple[list[Commit], list[tuple[int, bytes]]]:
        """The commits in document order, and where the parse dropped text (bytes that no
        node covers, other than blanks and line continuations)."""
        found: list[Commit] = []
        covered, dropped = 0, list[tuple[int, bytes]]()
        # an explicit stack: a line can nest subshells deeper than Python's recursion limit
        stack: list[tuple[str, Any]] = [("visit", root)]
        while stack:
            action, item = stack.pop()
            if action == "restore":
                state.cwd, state.cwd_known = item
                continue
            if action == "command":
                found += self.command(item, state, depth)
                continue
            node: Node = item
            if node.child_count == 0 or node.type == "heredoc_body":
                dropped += _gaps(source, covered, node.start_byte)
                covered = max(covered, node.end_byte)
            if node.type in ("subshell", "command_substitution", "process_substitution"):
                stack.append(("restore", (state.cwd, state.cwd_known)))
            elif node.type == "command":
                stack.append(("command", node))
            elif node.type == "function_definition":
                name = node.child_by_field_name("name")
                state.functions.add(text(name) if name is not None else "")
            elif node.type == "variable_assignment" and _standalone(node):
                found += self.assign(node, state, state.env, depth)
            stack += [("visit", c) for c in reversed(node.children)]
        return found, dropped + _gaps(source, covered, len(source))

    def assign(
        self, node: Node, state: State, env: dict[str, str | None], depth: int
    ) -> list[Commit]:
        """A variable the line sets: GIT_* and PATH move later commands; a value holding
        `$(...)` with git in it, or a variable the shell evaluates later, may commit."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        key = text(name) if name is not None else ""
        got = literal(value) if value is not None else ""
        env[key] = got
        if key in EVALUATED:
            return self.doubt(state, f"{key} is set: the shell runs it later")
        if got is not None and ("$(" in got or "`" in got) and _mentions(got):
            return self.inner(got, state, depth)
        return []

    def command(self, node: Node, state: State, depth: int) -> list[Commit]:
        env = dict(state.env)
        found: list[Commit] = []
        for child in node.children:
            if child.type == "variable_assignment":
                found += self.assign(child, state, env, depth)
        name = node.child_by_field_name("name")
        if name is None:
            return found
        words = [literal(name.named_children[0]) if name.named_children else None]
        words += [w for a in node.children_by_field_name("argument") for w in _argument(a)]
        return found + self.simple(words, state, env, self.stdin_of(node, state), depth)

    def stdin_of(self, node: Node, state: State) -> str | None:
        """What a here-document, here-string or `< FILE` feeds this command, when known."""
        parent = node.parent
        if parent is None or parent.type != "redirected_statement":
            return None
        for redirect in parent.children_by_field_name("redirect"):
            if redirect.type == "heredoc_redirect":
                return heredoc_body(redirect)
            if redirect.type == "herestring_redirect" and redirect.named_children:
                value = literal(redirect.named_children[-1])
                return None if value is None else value + "\n"
            target = redirect.child_by_field_name("destination")
            reads = any(c.type == "<" for c in redirect.children)
            if redirect.type == "file_redirect" and target is not None and reads:
                path = literal(target)
                return self.lookup.script(join(state.cwd, path)) if path else None
        return None

    @abc.abstractmethod
    def simple(
        self,
        words: list[str | None],
        state: State,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        """The commits one simple command (its words as the shell passes them) could create."""

    def inner(self, script: str, state: State, depth: int) -> list[Commit]:
        inner_state = state.fork()
        found = self.script(script, inner_state, depth + 1)
        state.absorb(inner_state)
        state.staged_before = state.staged_before or bool(found)
        return found

    def embedded(self, word: str, state: State, depth: int) -> list[Commit]:
        """A word that holds a command line mentioning git (`ssh host "git commit"`, a
        `-c core.editor=...` value) is read as one."""
        if _mentions(word) and any(ch in word for ch in " \t\n;&|"):
            self.guessing += 1  # a title such as "Fix the commit hook" runs no `Fix`
            try:
                return self.inner(word, state, depth)
            finally:
                self.guessing -= 1
        return []
