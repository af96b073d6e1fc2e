"""Which `git commit`s a shell command line could run, where, and with what message (pure).

Coding agents hand their hook the command about to run as one shell string. It is parsed
by tree-sitter's bash grammar (linear in the input; quotes, escapes, line continuations,
here-documents, `$(...)`, subshells, functions, `if`/`for` bodies), never run. The rule is
fail closed: a command that could create a commit counts as one. So a commit found behind
a wrapper (`env`, `sudo`, `timeout`, `xargs`, any unknown command that takes a command), in
`sh -c`, `eval`, `env -S`, a script file a shell runs, a here-document fed to a shell, a git
alias (read from the repository's git config, `-c alias.x=...` included; `!` aliases are
read as shell), and a git subcommand, command name or argument that only the shell can
build (`git $(echo commit)`, `$GIT commit`, brace and glob expansion) is a commit *in
doubt*: the gates run on it, with the index and the work tree judged.

What is said, not guessed: a message built by the shell (other than `cat <<EOF` and
`$'...'`) is unknown. Not seen: programs that run git themselves (a Python script, make),
files that commands earlier in the line edit (`sed -i ... && git add`), `help.autocorrect`
running a mistyped subcommand, and `git-<name>` programs on PATH; keep the git hook too.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

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
# git's own subcommands (`git --list-cmds=builtins`, git 2.39) and its common scripts; an
# alias cannot shadow them, so a line of these needs no look at the config
BUILTIN = frozenset(
    [
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bugreport",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "check-mailmap",
        "check-ref-format",
        "checkout",
        "checkout-index",
        "cherry",
        "cherry-pick",
        "clean",
        "clone",
        "column",
        "commit-graph",
        "commit-tree",
        "config",
        "count-objects",
        "credential",
        "describe",
        "diagnose",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fast-export",
        "fast-import",
        "fetch",
        "fetch-pack",
        "fmt-merge-msg",
        "for-each-ref",
        "for-each-repo",
        "format-patch",
        "fsck",
        "gc",
        "grep",
        "hash-object",
        "help",
        "hook",
        "index-pack",
        "init",
        "interpret-trailers",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "mailinfo",
        "mailsplit",
        "maintenance",
        "merge",
        "merge-base",
        "merge-file",
        "merge-index",
        "merge-tree",
        "mktag",
        "mktree",
        "multi-pack-index",
        "mv",
        "name-rev",
        "notes",
        "pack-objects",
        "pack-refs",
        "patch-id",
        "prune",
        "pull",
        "push",
        "range-diff",
        "read-tree",
        "rebase",
        "reflog",
        "remote",
        "repack",
        "replace",
        "rerere",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "show-branch",
        "show-ref",
        "sparse-checkout",
        "stage",
        "stash",
        "status",
        "stripspace",
        "switch",
        "symbolic-ref",
        "tag",
        "update-index",
        "update-ref",
        "var",
        "verify-commit",
        "verify-pack",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
        "submodule",
        "mergetool",
        "gui",
        "gitk",
        "lfs",
        "request-pull",
        "instaweb",
        "bisect--helper",
    ]
)
# git subcommands that change the index or HEAD: a commit after one of them in the same line
# records more than the index holds when the hook runs
STAGING = frozenset(
    {
        *("add", "rm", "mv", "stage", "apply", "restore", "reset", "checkout", "switch"),
        *("stash", "merge", "pull", "rebase", "cherry-pick", "revert", "am", "commit"),
        *("update-index", "read-tree"),
    }
)
# other git subcommands that create commits: what they will record is not known before they
# run, so the index and the work tree they start from are judged
COMMITTING = frozenset({"commit-tree", "merge", "pull", "cherry-pick", "revert", "am", "rebase"})
NO_COMMIT = frozenset(
    {"--abort", "--quit", "--no-commit", "-n", "--edit-todo", "--show-current-patch"}
)
GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
COMMIT_SHORT_VALUES = frozenset("mFCct")  # short options whose value follows
COMMIT_LONG_VALUES = frozenset(
    {
        *("--message", "--file", "--reuse-message", "--reedit-message", "--fixup"),
        *("--squash", "--author", "--date", "--cleanup", "--template", "--trailer"),
        "--pathspec-from-file",
    }
)
MAX_DEPTH = 16  # nested sh -c, eval and aliases; deeper is a commit in doubt
GLOB = re.compile(r"(?<!\\)[*?\[]")
ANSI_C = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


@dataclass(frozen=True, slots=True)
class Commit:
    """One `git commit` the line would (or, in doubt, could) run."""

    cwd: str  # the directory git runs in: the event's cwd joined with cd / -C, as written
    amend: bool = False
    stages: bool = False  # records more than the index holds now (-a, paths, git add before)
    message: str | None = None  # the message, when the line states it
    message_file: str | None = None  # -F FILE (relative to cwd), when given
    unknown: str = ""  # why the message is not known, when it is not
    cwd_known: bool = True  # False when a cd or -C names a directory by a variable
    doubt: str = ""  # why this counts as a commit though the line does not say `git commit`


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
    cwd: str
    cwd_known: bool = True
    staged_before: bool = False
    env: dict[str, str | None] = field(default_factory=dict)  # GIT_* the line exported


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def commits(command: str, cwd: str, lookup: Lookup | None = None) -> list[Commit]:
    """Every `git commit` a shell command line run from cwd would or could run."""
    return _Walker(lookup or NoLookup(), command).script(command, _State(cwd), 0)


# --- words ---


def _unescape_word(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.S)


def _unescape_dq(text: str) -> str:
    return re.sub(r"\\([\\$`\"\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU":
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return ANSI_SIMPLE.get(code, code if code in "\\'\"?" else "\\" + code)

    return ANSI_C.sub(one, body)


def _heredoc_message(node: Node) -> str | None:
    """The body of `$(cat <<'EOF' ... EOF)`, the way agents write multi-line messages."""
    inner = list(node.named_children)
    if len(inner) != 1 or inner[0].type != "redirected_statement":
        return None
    body, redirects = (
        inner[0].child_by_field_name("body"),
        inner[0].children_by_field_name("redirect"),
    )
    if body is None or body.type != "command" or _text(body).strip() != "cat":
        return None
    if len(redirects) != 1 or redirects[0].type != "heredoc_redirect":
        return None
    return _heredoc_body(redirects[0])


def _heredoc_body(redirect: Node) -> str | None:
    """A here-document's text, or None when the shell would expand something in it."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if start is None or body is None:
        return "" if start is not None else None
    quoted = any(q in _text(start) for q in "'\"\\")
    if not quoted and any(c.type != "heredoc_content" for c in body.named_children):
        return None
    text = _text(body)
    if any(c.type == "<<-" for c in redirect.children):
        text = re.sub(r"(?m)^\t+", "", text)
    return text


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


def _shell_script(text: str) -> bool:
    """A file a shell would run: no `#!` line (the shell runs it itself) or one naming a
    shell."""
    if not text.startswith("#!"):
        return True
    interpreter = text[2:].partition("\n")[0].split()
    names = [posixpath.basename(w) for w in interpreter[:2]]
    return any(n in SHELLS for n in names)


def _gaps(source: bytes, start: int, end: int) -> list[tuple[int, bytes]]:
    """(offset, text) of the words between start and end: what no node covered."""
    gap = source[start:end].replace(b"\\\n", b"  ") if end > start else b""
    return [(start + m.start(), m.group()) for m in re.finditer(rb"[^ \t\r\n]+", gap)]


def _standalone(node: Node) -> bool:
    """An assignment of its own (`X=1;`, `export X=1`), not a prefix of one command."""
    return node.parent is not None and node.parent.type != "command"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def literal(node: Node) -> str | None:
    """The word's value after quote removal, or None when only the shell can know it."""
    kind = node.type
    if kind == "word":
        text = _text(node)
        return None if GLOB.search(text) else _unescape_word(text)
    if kind == "number":
        return _text(node)
    if kind == "raw_string":
        return _text(node)[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(_text(node)[2:-1])
    if kind in ("string", "translated_string"):
        return _string(node)
    if kind == "concatenation":
        parts = [literal(c) for c in node.children]
        if any(p is None for p in parts) or any(_text(c) == "{" for c in node.children):
            return None  # brace expansion: {commit,x}
        return "".join(p for p in parts if p is not None)
    return None


def _string(node: Node) -> str | None:
    parts = [c for c in node.children if c.type not in ('"', '$"')]
    if len(parts) == 1 and parts[0].type == "command_substitution":
        message = _heredoc_message(parts[0])
        return message.rstrip("\n") if message is not None else None
    out = []
    for part in parts:
        if part.type != "string_content":
            return None
        out.append(_unescape_dq(_text(part)))
    return "".join(out)


# --- the walk ---


class _Walker:
    def __init__(self, lookup: Lookup, top: str) -> None:
        self.lookup = lookup
        lowered = top.lower()
        self.mentions_git = "git" in lowered or "commit" in lowered
        self.found: list[Commit] = []

    def doubt(self, state: _State, why: str) -> list[Commit]:
        commit = Commit(state.cwd, stages=True, unknown=why, cwd_known=state.cwd_known, doubt=why)
        return [commit]

    def script(self, text: str, state: _State, depth: int) -> list[Commit]:
        if depth > MAX_DEPTH:
            return self.doubt(state, f"nested more than {MAX_DEPTH} levels deep")
        source = text.encode("utf-8", "surrogateescape")
        before = _State(state.cwd, state.cwd_known, state.staged_before, dict(state.env))
        tree = _parser().parse(source)
        found, dropped = self.walk(tree.root_node, source, state, depth)
        if dropped and all(word == b"-" for _, word in dropped):
            # tree-sitter-bash drops the `-` of `cmd - <<EOF`; quoted, it is kept
            for i, _ in reversed(dropped):
                source = source[:i] + b"'-'" + source[i + 1 :]
            state.cwd, state.cwd_known, state.staged_before = (
                before.cwd,
                before.cwd_known,
                before.staged_before,
            )
            state.env = before.env
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
                self.assign(node, state)
            stack += [("visit", c) for c in reversed(node.children)]
        return found, dropped + _gaps(source, covered, len(source))

    def assign(self, node: Node, state: _State) -> None:
        """`export GIT_DIR=...` and friends change where later commits run."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        key = _text(name) if name is not None else ""
        if key.startswith("GIT_"):
            state.env[key] = literal(value) if value is not None else ""

    def command(self, node: Node, state: _State, depth: int) -> list[Commit]:
        env = dict(state.env)
        for child in node.children:
            if child.type == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                key = _text(name) if name is not None else ""
                if key.startswith("GIT_"):
                    env[key] = literal(value) if value is not None else ""
        name = node.child_by_field_name("name")
        if name is None:
            return []
        words = [literal(name.named_children[0]) if name.named_children else None]
        words += [literal(a) for a in node.children_by_field_name("argument")]
        stdin = self.stdin_of(node)
        return self.simple(words, state, env, stdin, depth)

    def stdin_of(self, node: Node) -> str | None:
        """What a here-document or here-string feeds this command, when it is known."""
        parent = node.parent
        if parent is None or parent.type != "redirected_statement":
            return None
        for redirect in parent.children_by_field_name("redirect"):
            if redirect.type == "heredoc_redirect":
                return _heredoc_body(redirect)
            if redirect.type == "herestring_redirect" and redirect.named_children:
                value = literal(redirect.named_children[-1])
                return None if value is None else value + "\n"
        return None

    def simple(
        self,
        words: list[str | None],
        state: _State,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        local = _State(state.cwd, state.cwd_known, state.staged_before, state.env)
        unwrapped = self.unwrap(words, local, env)  # `env -C DIR` moves this command alone
        if not unwrapped:
            return []
        head, args = unwrapped[0], unwrapped[1:]
        if head is None:
            why = "the command name is built by the shell"
            return self.doubt(local, why) if self.mentions_git else []
        name = posixpath.basename(head)
        if name in ("cd", "pushd", "popd"):
            self.cd(name, args, state)
            return []
        if name == "git":
            found = self.git(args, local, depth, stdin, env)
        else:
            found = self.runs_other(head, name, args, local, env, stdin, depth)
        state.staged_before = state.staged_before or local.staged_before
        return found

    def runs_other(
        self,
        head: str,
        name: str,
        args: list[str | None],
        state: _State,
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
            text = self.lookup.script(_join(state.cwd, head))
            if text is not None and _shell_script(text):
                return self.inner(text, state, depth)
        return self.scan(name, args, state, env, depth)

    def unwrap(
        self, words: list[str | None], state: _State, env: dict[str, str | None]
    ) -> list[str | None]:
        """The command behind keywords, `env`, `sudo`, `timeout` and the like."""
        out = list(words)
        while out and out[0] is not None:
            name = posixpath.basename(out[0])
            if name in KEYWORDS:
                out.pop(0)
            elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", out[0], re.S):
                key, _, value = out.pop(0).partition("=")  # type: ignore[union-attr]
                if key.startswith("GIT_"):
                    env[key] = value
            elif name == "env":
                out = _env_args(out[1:], state, env)
            elif name in WRAPPERS:
                out = _skip_options(out[1:], WRAPPERS[name])
            elif name in DURATION_FIRST:
                out = _skip_options(out[1:], TIMEOUT_VALUES)[1:]
            else:
                break
        return out

    def cd(self, name: str, args: list[str | None], state: _State) -> None:
        if name == "popd":
            state.cwd_known = False
            return
        target = next((w for w in args if w not in ("--", "-L", "-P", "-e", "-@")), "~")
        if target is None or target == "-":
            state.cwd_known = False
        else:
            state.cwd = _join(state.cwd, target)

    def shell(
        self, args: list[str | None], state: _State, stdin: str | None, depth: int
    ) -> list[Commit]:
        """`sh -c SCRIPT`, `sh FILE`, `sh <<EOF`: the script is read as a line of its own."""
        how, what = _shell_input(args)
        if how == "c" and what is not None:
            return self.inner(what, state, depth)
        if how == "file" and what is not None:
            text = self.lookup.script(_join(state.cwd, what))
            if text is not None:
                return self.inner(text, state, depth)
            why = f"a shell runs {what}, which could not be read"
            return self.doubt(state, why) if self.mentions_git else []
        if how == "stdin" and stdin is not None:
            return self.inner(stdin, state, depth)
        if how == "stdin":
            why = "a shell reads its script from standard input"
            return self.doubt(state, why) if self.mentions_git else []
        return self.doubt(state, "a shell runs a script built by the shell")

    def inner(self, script: str, state: _State, depth: int) -> list[Commit]:
        inner_state = _State(state.cwd, state.cwd_known, state.staged_before, dict(state.env))
        found = self.script(script, inner_state, depth + 1)
        state.staged_before = state.staged_before or inner_state.staged_before or bool(found)
        return found

    def eval(self, name: str, args: list[str | None], state: _State, depth: int) -> list[Commit]:
        if name != "eval":
            path = args[0] if args else None
            text = self.lookup.script(_join(state.cwd, path)) if path is not None else None
            if text is None:
                return (
                    self.doubt(state, f"{name} runs a file that could not be read")
                    if (self.mentions_git)
                    else []
                )
            return self.script(text, state, depth + 1)
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
            if ("git" in arg or "commit" in arg) and any(ch in arg for ch in " \t\n;&|"):
                found = self.inner(arg, state, depth)
                if found:
                    return [replace(c, doubt=c.doubt or f"run by {name}") for c in found]
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
        head = _git_head(args, cwd, known)
        here = _State(head.cwd, head.known, state.staged_before or other_index, state.env)
        if head.doubt:
            return self.doubt(here, head.doubt)
        if head.sub is None:
            return []
        sub, rest = head.sub, args[head.at + 1 :]
        if sub == "commit":
            commit = _commit(rest, head.cwd, head.known, here.staged_before)
            state.staged_before = True
            return [stdin_message(commit, stdin)]
        if sub in COMMITTING and not _no_commit(rest):
            state.staged_before = True
            return self.doubt(here, f"git {sub} creates commits")
        if sub in STAGING:
            state.staged_before = True
        if sub in BUILTIN:
            return []
        if head.dynamic_config:
            return self.doubt(here, "git -c sets configuration built by the shell")
        alias = head.aliases.get(sub.lower())
        if alias is None and head.known:
            alias = self.lookup.aliases(head.cwd).get(sub.lower())
        if alias is None:
            return []
        found = self.alias(sub, alias, rest, here, depth)
        state.staged_before = state.staged_before or here.staged_before
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
    """Where a git call runs: GIT_WORK_TREE or GIT_DIR (set for it or exported earlier)
    move it; GIT_INDEX_FILE records another index than the one judged, so the work tree is
    judged too (the third value)."""
    merged = {**state.env, **env}
    cwd, known = state.cwd, state.cwd_known
    for key in ("GIT_WORK_TREE", "GIT_DIR"):
        if key in merged:
            value = merged[key]
            known = known and value is not None
            cwd = _git_dir_home(cwd, value or "")
            break
    return cwd, known, "GIT_INDEX_FILE" in merged


def _no_commit(args: list[str | None]) -> bool:
    """`git merge --abort`, `cherry-pick -n` and the like record nothing."""
    return any(a in NO_COMMIT for a in args if a is not None)


def _git_dir_home(cwd: str, value: str) -> str:
    path = _join(cwd, value)
    return posixpath.dirname(path) if posixpath.basename(path) == ".git" else path


@dataclass(frozen=True, slots=True)
class _GitHead:
    """git's global options read: where it runs, the subcommand and where it stands."""

    cwd: str
    known: bool
    sub: str | None = None
    at: int = 0
    aliases: Mapping[str, str] = field(default_factory=dict)  # from -c alias.NAME=VALUE
    dynamic_config: bool = False
    doubt: str = ""


def _git_head(args: list[str | None], cwd: str, known: bool) -> _GitHead:
    aliases: dict[str, str] = {}
    dynamic = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return _GitHead(cwd, known, doubt="the git subcommand is built by the shell")
        if not arg.startswith("-"):
            return _GitHead(cwd, known, arg, i, aliases, dynamic)
        option, eq, attached = arg.partition("=")
        if option not in GIT_VALUE_OPTIONS:
            i += 1
            continue
        value = attached if eq else (args[i + 1] if i + 1 < len(args) else "")
        i += 1 if eq else 2
        if option in ("-C", "--work-tree", "--git-dir"):
            known = known and value is not None
            cwd = (
                _join(cwd, value or "")
                if option != "--git-dir"
                else _git_dir_home(cwd, value or "")
            )
        elif option in ("-c", "--config-env") and value is None:
            dynamic = True
        elif option in ("-c", "--config-env"):
            key, _, setting = (value or "").partition("=")
            if key.lower().startswith("alias."):
                aliases[key[6:].lower()] = setting
    return _GitHead(cwd, known, None, i, aliases, dynamic)


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
            state.cwd = _join(state.cwd, value or "")
        elif option.startswith("GIT_") and eq:
            env[option] = attached
        elif not arg.startswith("-") and not (eq and re.fullmatch(r"\w+", option)):
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


def _join(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(path)))


# --- git commit's options ---

SHORT_NAMES = {
    *(("-m", "--message"), ("-F", "--file"), ("-C", "--reuse-message")),
    *(("-c", "--reedit-message"), ("-t", "--template"), ("-a", "--all")),
    *(("-i", "--include"), ("-o", "--only"), ("-p", "--patch")),
}
LONG_OF = dict(SHORT_NAMES)
STAGES = frozenset(
    {"--all", "--include", "--only", "--interactive", "--patch", "--pathspec-from-file"}
)
ELSEWHERE = (
    "--reuse-message",
    "--reedit-message",
    "--fixup",
    "--squash",
    "--trailer",
    "--template",
)
_Options = list[tuple[str, str | None]]


def _options(args: list[str | None]) -> tuple[_Options, bool, bool]:
    """git commit's options as (long name, value), short clusters unpacked; whether a
    pathspec was given; whether some argument is built by the shell."""
    options: _Options = []
    paths = dynamic = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            dynamic = True
        elif arg == "--":
            return options, paths or i < len(args), dynamic
        elif not arg.startswith("-") or arg == "-":
            paths = True
        elif arg.startswith("--"):
            name, has_value, value = arg.partition("=")
            got: str | None = value
            if name in COMMIT_LONG_VALUES and not has_value:
                got, i = (args[i] if i < len(args) else ""), i + 1
            options.append((name, got))
        else:
            for j, flag in enumerate(arg[1:], start=1):
                name = LONG_OF.get(f"-{flag}", f"-{flag}")
                if flag not in COMMIT_SHORT_VALUES:
                    options.append((name, ""))
                    continue
                got = arg[j + 1 :]
                if not got:
                    got, i = (args[i] if i < len(args) else ""), i + 1
                options.append((name, got))
                break
    return options, paths, dynamic


def _commit(args: list[str | None], cwd: str, known: bool, staged_before: bool) -> Commit:
    options, paths, dynamic = _options(args)
    names = [name for name, _ in options]
    files = [value for name, value in options if name == "--file"]
    elsewhere = next((n for n in names if n in ELSEWHERE), None)
    unknown = f"{elsewhere} builds the message from elsewhere" if elsewhere else ""
    if dynamic:
        unknown = "an argument is built by the shell"
    commit = Commit(
        cwd=cwd,
        amend="--amend" in names,
        stages=paths or staged_before or dynamic or any(n in STAGES for n in names),
        message_file=files[-1] if files else None,
        unknown=unknown,
        cwd_known=known,
    )
    if files and files[-1] is None:
        return replace(commit, message_file=None, unknown="the message file is named by the shell")
    return _with_message(commit, [value for name, value in options if name == "--message"])


def _with_message(commit: Commit, messages: list[str | None]) -> Commit:
    if commit.unknown or commit.message_file is not None:
        why = commit.unknown or "the message is in a file"
        return replace(commit, unknown=why)
    if not messages:
        return replace(commit, unknown="no -m: the message is written in an editor or elsewhere")
    if any(text is None for text in messages):
        return replace(commit, unknown="the message is built by the shell ($... or `...`)")
    return replace(commit, message="\n\n".join(t for t in messages if t is not None) + "\n")


def stdin_message(commit: Commit, stdin: str | None) -> Commit:
    """`git commit -F -` with a here-document: the message is the document."""
    if commit.message_file != "-" or stdin is None:
        return commit
    return replace(commit, message_file=None, unknown="", message=stdin)
