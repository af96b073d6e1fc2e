"""Which commits a shell command line could create, where, and with what message (pure).

Coding agents hand their hook the command about to run as one shell string. It is parsed
by tree-sitter's bash grammar (quotes, escapes, line continuations, here-documents,
`$(...)`, subshells, functions, `if`/`for` bodies), never run. The rule is fail closed: a
command that could create a commit counts as one. A commit found behind a wrapper (`env`,
`sudo`, `timeout`, `xargs`, any unknown command that takes a command), in `sh -c`, `eval`,
`env -S`, a script file or here-document a shell runs, a git alias (the repository's
config, `-c alias.x=...`; `!` aliases read as shell), a bash alias, or run as `git-commit`
is a commit like any other. Whatever only the shell could know is a commit *in doubt*, on
which the gates run all the same: a command name, git subcommand or argument the shell
builds (`$X commit`, `git $(echo commit)`, brace and glob expansion), a shell reading its
script from a pipe or an unreadable file, a git subcommand fidelity does not know (an
alias it could not read, a `git-NAME` program), a variable the shell evaluates later
holding `$(...)` (prompts, `BASH_ENV`), a changed PATH, a line that does not parse, and
one too large to walk (MAX_NODES).

A commit's directory is where the line's `cd`s lead, and every directory it was in before
is named too (a `cd` can fail or not run); a commit after a git command that fills the
index from elsewhere (`git stash pop`, `checkout REV`, `apply`) records what cannot be
judged beforehand, and says so. Not seen: programs that run git themselves (a Python
script, make) and files that other commands in the line edit (`sed -i ... && git add`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from fidelity.preflight import gitcli
from fidelity.preflight.gitcli import Commit, join
from fidelity.preflight.shellwords import heredoc_body, literal, text

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["Commit", "Lookup", "NoLookup", "commits"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
KEYWORDS = frozenset({"time", "!", "coproc"})
# commands that never run their arguments: a `git commit` in their words is text
INERT = frozenset(
    {
        *("echo", "printf", "cat", "grep", "egrep", "fgrep", "rg", "ls", "head", "tail"),
        *("wc", "sort", "uniq", "cut", "tr", "true", "false", "test", "[", "read", "jq"),
        *("diff", "less", "more", "file", "stat", "touch", "mkdir", "rm", "rmdir", "cp"),
        *("mv", "ln", "chmod", "basename", "dirname", "realpath", "readlink", "pwd"),
        *("which", "type", "date", "sleep", "tee", "export", "unset", "local", "declare"),
        *("set", "shopt", "wait", "exit", "return", "shift", ":"),
    }
)
# wrappers whose options are known: name -> options that take a separate value
WRAPPERS: dict[str, frozenset[str]] = {
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-r", "-t", "-U", "-C", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "unbuffer": frozenset(),
    "xargs": frozenset({"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--delimiter"}),
    "flock": frozenset({"-w", "-E", "-c"}),
}
DURATION_FIRST = frozenset({"timeout"})  # `timeout [opts] DURATION cmd`
TIMEOUT_VALUES = frozenset({"-s", "--signal", "-k", "--kill-after"})
# variables a non-interactive shell runs later: a child shell's start-up file, `set -x`'s
# prompt (PS1 and PROMPT_COMMAND are for interactive shells; a venv's activate sets them)
EVALUATED = frozenset({"BASH_ENV", "ENV", "PS4"})
MAX_DEPTH = 16  # nested sh -c, eval and aliases; deeper is a commit in doubt
MAX_NODES = 200_000  # a line with more syntax nodes than this is judged, not walked


class Lookup(Protocol):
    """What the analysis may ask of the machine: git aliases, script files."""

    def aliases(self, cwd: str) -> Mapping[str, str]: ...

    def script(self, path: str) -> str | None: ...


class NoLookup:
    """No aliases known and no file readable: every script run is a commit in doubt."""

    def aliases(self, cwd: str) -> Mapping[str, str]:
        return {}

    def script(self, path: str) -> str | None:
        return None


@dataclass(slots=True)
class _State:
    """Where the line is, as far as its text says, and what it has done so far."""

    cwd: str
    cwd_known: bool = True
    staged_before: bool = False
    brought: str = ""  # the first git command that filled the index from elsewhere
    env: dict[str, str | None] = field(default_factory=dict)  # variables the line set
    visited: list[str] = field(default_factory=list)  # directories it was in
    aliases: dict[str, str] = field(default_factory=dict)  # bash aliases it defined

    def fork(self, cwd: str | None = None, known: bool | None = None) -> _State:
        return _State(
            self.cwd if cwd is None else cwd,
            self.cwd_known if known is None else known,
            self.staged_before,
            self.brought,
            dict(self.env),
            list(self.visited),
            dict(self.aliases),
        )

    def absorb(self, other: _State) -> None:
        """What a nested line (sh -c, an alias) staged or brought counts for this one."""
        self.staged_before = self.staged_before or other.staged_before
        self.brought = self.brought or other.brought


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def commits(command: str, cwd: str, lookup: Lookup | None = None) -> list[Commit]:
    """Every commit a shell command line run from cwd would or could create."""
    return _Walker(lookup or NoLookup(), command).script(command, _State(cwd, visited=[cwd]), 0)


def _shell_input(args: list[str | None]) -> tuple[str, str | None]:
    """Where a shell's script comes from: ("c", SCRIPT), ("file", PATH), ("stdin", None),
    or ("dynamic", None) when only the shell knows."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return "dynamic", None
        if arg in ("-o", "+o", "-O", "+O"):
            i += 2
        elif arg.startswith(("-", "+")) and arg not in ("-", "--"):
            if "c" in arg[1:] and not arg.startswith("--"):
                script = args[i + 1] if i + 1 < len(args) else None
                return ("c", script) if script is not None else ("dynamic", None)
            i += 1
        elif arg == "--":
            rest = args[i + 1 :]
            if not rest:
                return "stdin", None
            return ("file", rest[0]) if rest[0] is not None else ("dynamic", None)
        else:
            return ("stdin", None) if arg == "-" else ("file", arg)
    return "stdin", None


def _shell_script(script: str) -> bool:
    """A file a shell would run: no `#!` line (the shell runs it itself) or one naming a
    shell anywhere (`#!/usr/bin/env -S bash -e`)."""
    if not script.startswith("#!"):
        return True
    words = script[2:].partition("\n")[0].split()
    return any(posixpath.basename(w) in SHELLS for w in words)


def _gaps(source: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """(offset, text) of the words between start and end: what no node covered."""
    gap = source[start:end].replace(b"\\\n", b"  ") if end > start else b""
    return [(start + m.start(), m.group()) for m in re.finditer(rb"[^ \t\r\n]+", gap)]


def _standalone(node: Node) -> bool:
    """An assignment of its own (`X=1;`, `export X=1`), not a prefix of one command."""
    return node.parent is not None and node.parent.type != "command"


def _mentions(value: str) -> bool:
    lowered = value.lower()
    return "git" in lowered or "commit" in lowered


class _Walker:
    def __init__(self, lookup: Lookup, top: str) -> None:
        self.lookup = lookup
        self.mentions_git = _mentions(top)

    def doubt(self, state: _State, why: str) -> list[Commit]:
        found = Commit(
            state.cwd,
            stages=True,
            unknown=why,
            cwd_known=state.cwd_known,
            doubt=why,
            also=tuple(dict.fromkeys(state.visited)),
            brought=state.brought,
        )
        return [found]

    def script(self, line: str, state: _State, depth: int) -> list[Commit]:
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
        self, root: Node, source: bytes, state: _State, depth: int
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
            elif node.type == "variable_assignment" and _standalone(node):
                found += self.assign(node, state, state.env, depth)
            stack += [("visit", c) for c in reversed(node.children)]
        return found, dropped + _gaps(source, covered, len(source))

    def assign(
        self, node: Node, state: _State, env: dict[str, str | None], depth: int
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

    def command(self, node: Node, state: _State, depth: int) -> list[Commit]:
        env = dict(state.env)
        found: list[Commit] = []
        for child in node.children:
            if child.type == "variable_assignment":
                found += self.assign(child, state, env, depth)
        name = node.child_by_field_name("name")
        if name is None:
            return found
        words = [literal(name.named_children[0]) if name.named_children else None]
        words += [literal(a) for a in node.children_by_field_name("argument")]
        return found + self.simple(words, state, env, self.stdin_of(node, state), depth)

    def stdin_of(self, node: Node, state: _State) -> str | None:
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

    def simple(
        self,
        words: list[str | None],
        state: _State,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        words = self.expand_alias(words, state, depth)
        local = state.fork()
        unwrapped = self.unwrap(words, local, env)  # `env -C DIR` moves this command alone
        if not unwrapped:
            return []
        head, args = unwrapped[0], unwrapped[1:]
        if head is None:
            return self.doubt(local, "the command name is built by the shell")
        name = posixpath.basename(head)
        if name in ("cd", "pushd", "popd"):
            self.cd(name, args, state)
            return []
        if name == "alias":
            for definition in args:
                alias, eq, value = (definition or "").partition("=")
                if eq:
                    state.aliases[alias] = value
            return []
        if name == "git" or (name.startswith("git-") and len(name) > 4):
            sub = [] if name == "git" else [name[4:]]
            found = self.git([*sub, *args], local, depth, stdin, env)
        else:
            found = self.runs_other(head, name, args, local, env=env, stdin=stdin, depth=depth)
        state.absorb(local)
        return found

    def expand_alias(self, words: list[str | None], state: _State, depth: int) -> list[str | None]:
        """A bash alias the line defined (`alias g=git`), expanded as bash would."""
        seen: set[str] = set()
        while words and words[0] in state.aliases and words[0] not in seen:
            seen.add(words[0] or "")
            try:
                words = [*shlex.split(state.aliases[words[0] or ""]), *words[1:]]
            except ValueError:
                return [None, *words[1:]]
        return words

    def runs_other(
        self,
        head: str,
        name: str,
        args: list[str | None],
        state: _State,
        *,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        """A command that is not git itself but may run it: a shell, eval, a script file."""
        if name in SHELLS:
            return self.shell(args, state, stdin, depth)
        if name in ("eval", "source", "."):
            return self.eval(name, args, state, depth)
        if name in INERT:
            return []
        if "/" in head:
            script = self.lookup.script(join(state.cwd, head))
            if script is not None and _shell_script(script):
                return self.inner(script, state, depth)
        elif "PATH" in env:
            return self.doubt(state, f"PATH is changed, so {name} may be any program")
        return self.scan(name, args, state, env, depth)

    def unwrap(
        self, words: list[str | None], state: _State, env: dict[str, str | None]
    ) -> list[str | None]:
        """The command behind keywords, `env`, `sudo`, `timeout` and the like. `xargs`
        adds words only the input knows."""
        out = list(words)
        while out and out[0] is not None:
            name = posixpath.basename(out[0])
            if name in KEYWORDS:
                out.pop(0)
            elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", out[0], re.S):
                key, _, value = out.pop(0).partition("=")  # type: ignore[union-attr]
                env[key] = value
            elif name == "env":
                out = _env_args(out[1:], state, env)
            elif name in WRAPPERS:
                out = _skip_options(out[1:], WRAPPERS[name])
                if name == "xargs" and out:
                    out.append(None)
            elif name in DURATION_FIRST:
                out = _skip_options(out[1:], TIMEOUT_VALUES)[1:]
            else:
                break
        return out

    def cd(self, name: str, args: list[str | None], state: _State) -> None:
        if name == "popd":
            state.cwd_known = False
            return
        target = next((w for w in args if w not in ("--", "-L", "-P", "-e", "-@", "-n")), "~")
        if target is None or target == "-":
            state.cwd_known = False
        else:
            state.cwd = join(state.cwd, target)
            state.visited.append(state.cwd)

    def shell(
        self, args: list[str | None], state: _State, stdin: str | None, depth: int
    ) -> list[Commit]:
        """`sh -c SCRIPT`, `sh FILE`, `sh <<EOF`: the script is read as a line of its own;
        one that cannot be read is in doubt."""
        how, what = _shell_input(args)
        if how == "c" and what is not None:
            return self.inner(what, state, depth)
        if how == "file" and what is not None:
            script = self.lookup.script(join(state.cwd, what))
            if script is not None:
                return self.inner(script, state, depth)
            return self.doubt(state, f"a shell runs {what}, which could not be read")
        if how == "stdin" and stdin is not None:
            return self.inner(stdin, state, depth)
        if how == "stdin":
            return self.doubt(state, "a shell reads its script from standard input")
        return self.doubt(state, "a shell runs a script built by the shell")

    def inner(self, script: str, state: _State, depth: int) -> list[Commit]:
        inner_state = state.fork()
        found = self.script(script, inner_state, depth + 1)
        state.absorb(inner_state)
        state.staged_before = state.staged_before or bool(found)
        return found

    def eval(self, name: str, args: list[str | None], state: _State, depth: int) -> list[Commit]:
        if name != "eval":
            path = args[0] if args else None
            script = self.lookup.script(join(state.cwd, path)) if path is not None else None
            if script is None:
                return self.doubt(state, f"{name} runs a file that could not be read")
            return self.script(script, state, depth + 1)
        if any(a is None for a in args):
            return self.doubt(state, "eval runs a line built by the shell")
        return self.script(" ".join(a for a in args if a is not None), state, depth + 1)

    def scan(
        self,
        name: str,
        args: list[str | None],
        state: _State,
        env: dict[str, str | None],
        depth: int,
    ) -> list[Commit]:
        """An unknown command may run another (`find -exec`, `ssh`, `parallel`): a `git`
        among its words, or a word holding a line that commits, counts in doubt."""
        for i, arg in enumerate(args):
            if arg is None:
                continue
            if posixpath.basename(arg) == "git":
                found = self.git(args[i + 1 :], state, depth, env=env)
                return [replace(c, doubt=c.doubt or f"run by {name}") for c in found]
            found = self.embedded(arg, state, depth)
            if found:
                return [replace(c, doubt=c.doubt or f"run by {name}") for c in found]
        return []

    def embedded(self, word: str, state: _State, depth: int) -> list[Commit]:
        """A word that holds a command line mentioning git (`ssh host "git commit"`, a
        `-c core.editor=...` value) is read as one."""
        if _mentions(word) and any(ch in word for ch in " \t\n;&|"):
            return self.inner(word, state, depth)
        return []

    def git(
        self,
        args: list[str | None],
        state: _State,
        depth: int,
        stdin: str | None = None,
        env: Mapping[str, str | None] | None = None,
    ) -> list[Commit]:
        """One git invocation: its global options, then its subcommand or alias. `state`
        keeps what the line has staged so far; -C and GIT_DIR apply to this call alone."""
        cwd, known, other_index = _where(state, env or {})
        head = gitcli.head(args, cwd, known)
        here = state.fork(head.cwd, head.known)
        here.staged_before = here.staged_before or other_index
        if head.doubt:
            return self.doubt(here, head.doubt)
        if head.sub is None:
            return []
        sub, rest = head.sub, args[head.at + 1 :]
        for setting in head.settings:  # -c core.editor='git commit ...'
            if self.embedded(setting, here, depth):
                return self.doubt(here, f"git -c runs a command: {setting[:60]}")
        if sub == "commit":
            found = gitcli.commit(rest, head.cwd, head.known, here.staged_before)
            found = replace(found, also=tuple(dict.fromkeys(here.visited)), brought=here.brought)
            state.staged_before = True
            return [gitcli.stdin_message(found, stdin)]
        return self.other_git(sub, rest, head, here, state, depth=depth)

    def other_git(
        self,
        sub: str,
        rest: list[str | None],
        head: gitcli.Head,
        here: _State,
        state: _State,
        *,
        depth: int,
    ) -> list[Commit]:
        """A git subcommand other than commit: one that creates commits is in doubt; one
        that fills the index from elsewhere marks the commits after it; an alias is read."""
        brought = gitcli.brings(sub, rest)
        if gitcli.committing(sub, rest):
            found = self.doubt(here, f"git {sub} creates commits")
            state.staged_before, state.brought = True, state.brought or brought
            return found
        if sub in gitcli.STAGING:
            state.staged_before, state.brought = True, state.brought or brought
        if sub in gitcli.BUILTIN:
            return []
        if head.dynamic_config:
            return self.doubt(here, "git -c sets configuration built by the shell")
        alias = head.aliases.get(sub.lower())
        if alias is None and head.known:
            alias = self.lookup.aliases(head.cwd).get(sub.lower())
        if alias is None:
            why = f"git {sub} is no git command fidelity knows (an alias it cannot read?)"
            return self.doubt(here, why)
        found = self.alias(sub, alias, rest, here, depth)
        state.absorb(here)
        return found

    def alias(
        self, name: str, value: str, rest: list[str | None], here: _State, depth: int
    ) -> list[Commit]:
        if depth >= MAX_DEPTH:
            return self.doubt(here, f"git alias {name!r} expands more than {MAX_DEPTH} times")
        if value.startswith("!"):
            if any(r is None for r in rest):
                return self.doubt(here, f"git alias {name!r} runs a shell line")
            line = value[1:] + "".join(" " + shlex.quote(r) for r in rest if r is not None)
            found = self.inner(line, here, depth)
        else:
            try:
                words: list[str | None] = list(shlex.split(value))
            except ValueError:
                return self.doubt(here, f"git alias {name!r} could not be split")
            found = self.git([*words, *rest], here, depth + 1)
        return [replace(c, doubt=c.doubt or f"git alias {name!r}") for c in found]


def _where(state: _State, env: Mapping[str, str | None]) -> tuple[str, bool, bool]:
    """Where a git call runs: GIT_DIR (set for it or exported earlier) moves it; a work tree
    does not choose the repository. GIT_INDEX_FILE records another index than the one
    judged, so the work tree is judged too (the third value)."""
    merged = {**state.env, **env}
    cwd, known = state.cwd, state.cwd_known
    if "GIT_DIR" in merged:
        value = merged["GIT_DIR"]
        known = known and value is not None
        cwd = gitcli.git_dir_home(cwd, value or "")
    return cwd, known, "GIT_INDEX_FILE" in merged


def _env_args(
    args: list[str | None], state: _State, env: dict[str, str | None]
) -> list[str | None]:
    """The command `env [OPTIONS] [NAME=VALUE]... COMMAND` runs, in the directory `-C`
    names; `-S STRING` is split as env would."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None or arg == "--":
            return args[i + (arg == "--") :]
        option, eq, attached = arg.partition("=")
        value = attached if eq else (args[i + 1] if i + 1 < len(args) else "")
        step = 1 if eq else 2
        if arg.startswith("-S") and len(arg) > 2:
            return _split(arg[2:], args[i + 1 :])
        if option in ("-S", "--split-string"):
            return _split(value, args[i + step :])
        if option in ("-C", "--chdir"):
            state.cwd_known = state.cwd_known and value is not None
            state.cwd = join(state.cwd, value or "")
        elif eq and re.fullmatch(r"\w+", option):
            env[option] = attached
        elif not arg.startswith("-"):
            return args[i:]
        i += step if option in ("-C", "--chdir", "-u", "--unset") else 1
    return []


def _split(value: str | None, rest: list[str | None]) -> list[str | None]:
    """`env -S STRING`: the string split into words, the way env splits it."""
    if value is None:
        return [None]
    try:
        return [*shlex.split(value), *rest]
    except ValueError:
        return [None]


def _skip_options(args: list[str | None], valued: frozenset[str]) -> list[str | None]:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None or not arg.startswith("-") or arg == "-":
            break
        i += 1
        if arg == "--":
            break
        if arg in valued:
            i += 1
    return args[i:]
