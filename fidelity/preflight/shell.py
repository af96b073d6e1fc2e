"""Which commits a shell command line could create, where, and with what message (pure).

Coding agents hand their hook the command about to run as one shell string. It is parsed
by tree-sitter's bash grammar (quotes, escapes, line continuations, here-documents,
`$(...)`, subshells, functions, `if`/`for` bodies), never run. The rule is fail closed: a
command that could create a commit counts as one. A commit found behind a wrapper (`env`,
`sudo`, `timeout`, `xargs`, any unknown command that takes a command), in `sh -c`, `eval`,
`env -S`, a script file or here-document a shell runs, a git alias (the repository's
config, `-c alias.x=...`; `!` aliases read as shell), a bash alias the line defines, or run
as `git-commit` is a commit like any other. Whatever only the shell could know is a commit
*in doubt*, on which the gates run all the same: a command name, git subcommand or argument
the shell builds (`$X commit`, `git $(echo commit)`, brace and glob expansion), a shell reading its
script from a pipe or an unreadable file, a git subcommand fidelity does not know (an
alias it could not read, a `git-NAME` program), a command name that is no program on PATH,
builtin or function of the line (an alias or function from the user's start-up files,
which are never run: `bash -ic 'gcm'`, or an agent that sources a snapshot of them), a
variable the shell evaluates later holding `$(...)` (prompts, `BASH_ENV`), a changed PATH,
a line that does not parse, and one too large to walk (MAX_NODES).

A commit's directory is where the line's `cd`s lead, and every directory it was in before
is named too (a `cd` can fail or not run); a commit after a git command that fills the
index from elsewhere (`git stash pop`, `checkout REV`, `apply`) records what cannot be
judged beforehand, and says so. Not seen: programs that run git themselves (a Python
script, make) and files that other commands in the line edit (`sed -i ... && git add`).

This module knows which commands run others (shells, eval, wrappers, scripts); the walk
over the syntax tree is `shellwalk`'s, and what one git call does is `shellgit`'s.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from dataclasses import replace

from fidelity.preflight.gitcli import Commit, join
from fidelity.preflight.shellgit import GitWalker
from fidelity.preflight.shellwalk import Lookup, NoLookup, State

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
# shell builtins and keywords (bash's, and zsh's common ones): never looked up on PATH
BUILTINS = frozenset(
    """alias bg bind break builtin caller cd command compgen complete compopt continue declare
    dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs
    kill let local logout mapfile popd printf pushd pwd read readarray readonly return set
    shift shopt source suspend test times trap true type typeset ulimit umask unalias unset
    wait . : [ [[ ]] { } ! time coproc autoload bindkey bye chdir compdef emulate float
    functions integer noglob print pushln rehash setopt unsetopt whence where zle zmodload
    zstyle""".split()  # noqa: SIM905 (a list of 90 words reads better so)
)
# builtins that set a variable from their input, and the variables that move a commit
READS_INTO = frozenset({"read", "printf", "mapfile", "readarray", "getopts"})
PLACE_VARIABLES = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"})
DURATION_FIRST = frozenset({"timeout"})  # `timeout [opts] DURATION cmd`
TIMEOUT_VALUES = frozenset({"-s", "--signal", "-k", "--kill-after"})


def commits(
    command: str,
    cwd: str,
    lookup: Lookup | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Commit]:
    """Every commit a shell command line run from cwd would or could create; env: the
    variables the line inherits that move a commit (GIT_DIR, GIT_INDEX_FILE, ...)."""
    walker = _Walker(lookup or NoLookup(), command)
    inherited: dict[str, str | None] = dict(env or {})
    return walker.script(command, State(cwd, env=inherited, visited=[cwd]), 0)


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


class _Walker(GitWalker):
    """The walk, knowing which commands run others: shells, eval, wrappers, scripts."""

    def simple(
        self,
        words: list[str | None],
        state: State,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        words = self.expand_alias(words, state, depth)
        local = state.fork()
        unwrapped = self.unwrap(words, local, env)  # `env -C DIR` moves this command alone
        local.env = env  # what a shell or git this command starts inherits
        if not unwrapped:
            return []
        head, args = unwrapped[0], unwrapped[1:]
        if head is None:
            return self.doubt(local, "the command name is built by the shell")
        name = posixpath.basename(head)
        if name in ("cd", "pushd", "popd"):
            self.cd(name, args, state, env)
            return []
        if name in READS_INTO:  # `read GIT_INDEX_FILE`: a value only the input knows
            state.env.update({a: None for a in args if a in PLACE_VARIABLES})
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
            found = self.runs_other(head, args, local, env=env, stdin=stdin, depth=depth)
        state.absorb(local)
        return found

    def expand_alias(self, words: list[str | None], state: State, depth: int) -> list[str | None]:
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
        args: list[str | None],
        state: State,
        *,
        env: dict[str, str | None],
        stdin: str | None,
        depth: int,
    ) -> list[Commit]:
        """A command that is not git itself but may run it: a shell, eval, a script file."""
        name = posixpath.basename(head)
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
        found = self.scan(name, args, state, env, depth)
        if found or self.guessing or "/" in head or name in BUILTINS or name in state.functions:
            return found
        if not self.lookup.program(name):
            why = f"{name} is no program on PATH (an alias or function of the user's shell?)"
            return self.doubt(state, why)
        return []

    def unwrap(
        self, words: list[str | None], state: State, env: dict[str, str | None]
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

    def cd(
        self, name: str, args: list[str | None], state: State, env: dict[str, str | None]
    ) -> None:
        if name == "popd":
            state.cwd_known = False
            return
        target = next((w for w in args if w not in ("--", "-L", "-P", "-e", "-@", "-n")), "~")
        if target is None or target == "-":
            state.cwd_known = False
            return
        found = None
        cdpath = env.get("CDPATH", "")
        if cdpath != "" and not target.startswith(("/", "~", "./", "../")) and target != "..":
            if cdpath is None:  # bash searches a CDPATH only the shell knows
                state.cwd_known = False
                return
            found = self.cdpath_search(target, cdpath, state.cwd)
        state.cwd = found or join(state.cwd, target)
        state.visited.append(state.cwd)

    def cdpath_search(self, target: str, cdpath: str, cwd: str) -> str | None:
        """Where bash's `cd NAME` goes first: the first CDPATH entry (an empty one is the
        current folder) that holds NAME as a folder; None for none, and bash then tries
        NAME from the current folder."""
        for entry in cdpath.split(":"):
            candidate = join(join(cwd, entry or "."), target)
            if self.lookup.folder(candidate):
                return candidate
        return None

    def shell(
        self, args: list[str | None], state: State, stdin: str | None, depth: int
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

    def eval(self, name: str, args: list[str | None], state: State, depth: int) -> list[Commit]:
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
        state: State,
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


def _env_args(args: list[str | None], state: State, env: dict[str, str | None]) -> list[str | None]:
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
