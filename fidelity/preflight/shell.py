"""Which `git commit`s a shell command line would run, where, and with what message (pure).

Coding agents hand their hook the command about to run as one shell string. It is read the
way a shell splits it (quotes, `;`, `&&`, `||`, `|`, `&`, newlines, subshells, `bash -c`,
`cd DIR`, `git -C DIR`), never run. What cannot be known without running it is said, not
guessed: a message built by `$(...)` other than the usual `cat <<EOF` is unknown, and a
line that cannot be split at all but mentions git and commit counts as a commit (the hook
fails closed). Not simulated: commands earlier in the line that edit files (`sed -i`, a
script) before a `git add`; the judged tree is the one on disk when the hook runs.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

OPERATORS = frozenset({";", "&&", "||", "|", "&", "\n", ";;", "|&", "(", ")"})
KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time"})
WRAPPERS = frozenset({"command", "exec", "nohup", "sudo", "nice", "builtin", "xargs"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# git subcommands that change the index or HEAD: a commit after one of them in the same line
# records more than the index holds when the hook runs
STAGING = frozenset(
    {
        *("add", "rm", "mv", "stage", "apply", "restore", "reset", "checkout", "switch"),
        *("stash", "merge", "pull", "rebase", "cherry-pick", "revert", "am", "commit"),
        *("update-index", "read-tree"),
    }
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
HEREDOC_MESSAGE = re.compile(
    r"\A\$\(\s*cat\s+<<-?\s*(['\"]?)(\w+)\1[ \t]*\n(.*?)\n[ \t]*\2[ \t]*\n?\s*\)\Z", re.S
)


@dataclass(frozen=True, slots=True)
class Commit:
    """One `git commit` the line would run."""

    cwd: str  # the directory git runs in: the event's cwd joined with cd / -C, as written
    amend: bool = False
    stages: bool = False  # records more than the index holds now (-a, paths, git add before)
    message: str | None = None  # the message, when the line states it
    message_file: str | None = None  # -F FILE (relative to cwd), when given
    unknown: str = ""  # why the message is not known, when it is not
    cwd_known: bool = True  # False when a cd or -C names a directory by a variable


@dataclass(slots=True)
class _State:
    cwd: str
    cwd_known: bool = True
    staged_before: bool = False
    stack: list[tuple[str, bool]] = field(default_factory=list)


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    return list(lexer)


def _skip_heredoc(tokens: list[str], i: int, delimiter: str) -> int:
    """The index after a here-document body that starts at the next newline."""
    while i < len(tokens):
        if tokens[i] == "\n" and i + 1 < len(tokens) and tokens[i + 1] == delimiter:
            return i + 2
        i += 1
    return i


def _simple_commands(tokens: list[str]) -> Iterator[list[str]]:
    """The words of each simple command, with `(` and `)` yielded as one-word markers;
    redirections and here-document bodies dropped."""
    words: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token in OPERATORS:
            if words:
                yield words
            if token in ("(", ")"):
                yield [token]
            words = []
        elif set(token) <= set("<>&|") and ("<" in token or ">" in token):
            if words and words[-1].isdigit():
                words.pop()  # the fd of `2>file`
            target = tokens[i] if i < len(tokens) else ""
            i += 1  # the redirection's target
            if token.startswith("<<"):
                i = _skip_heredoc(tokens, i, target)
        else:
            words.append(token)
    if words:
        yield words


def _strip_prefix(words: list[str]) -> list[str]:
    """The command behind keywords, variable assignments and wrappers like `env`, `sudo`."""
    out = list(words)
    while out:
        head = out[0]
        if head in KEYWORDS or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", head, re.S):
            out.pop(0)
        elif posixpath.basename(head) == "env" or head in WRAPPERS:
            out.pop(0)
            while out and (out[0].startswith("-") or "=" in out[0]):
                flag = out.pop(0)
                if flag in ("-u", "-C", "-n", "-g") and out:
                    out.pop(0)
        elif head == "timeout" and len(out) > 1:
            out = out[1:]
            while out and out[0].startswith("-"):
                out.pop(0)
            out = out[1:]  # the duration
        else:
            break
    return out


def _join(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(path)))


def _variable(text: str) -> bool:
    return "$" in text or "`" in text


def commits(command: str, cwd: str) -> list[Commit]:
    """Every `git commit` in a shell command line run from cwd."""
    try:
        tokens = _tokens(command)
    except ValueError:
        if re.search(r"\bgit\b", command) and "commit" in command:
            why = "the command line could not be split (unbalanced quotes?)"
            return [Commit(cwd, "--amend" in command, True, None, None, why)]
        return []
    found: list[Commit] = []
    state = _State(cwd)
    for words in _simple_commands(tokens):
        if words == ["("]:
            state.stack.append((state.cwd, state.cwd_known))
        elif words == [")"]:
            if state.stack:
                state.cwd, state.cwd_known = state.stack.pop()
        else:
            found += _one(_strip_prefix(words), state)
    return found


def _one(words: list[str], state: _State) -> list[Commit]:
    if not words:
        return []
    name = posixpath.basename(words[0])
    if name in ("cd", "pushd"):
        target = next((w for w in words[1:] if w not in ("--", "-L", "-P")), "~")
        if _variable(target) or target == "-":
            state.cwd_known = False
        else:
            state.cwd = _join(state.cwd, target)
        return []
    if name in SHELLS:
        script = _shell_script(words[1:])
        if script is not None:
            inner = commits(script, state.cwd)
            state.staged_before = state.staged_before or bool(inner)
            return inner
        return []
    if name == "eval":
        return commits(" ".join(words[1:]), state.cwd)
    if name != "git":
        return []
    return _git(words[1:], state)


def _shell_script(args: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (also `-lc`, `-ec`), or None."""
    for i, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return args[i + 1] if i + 1 < len(args) else None
        if not arg.startswith("-"):
            return None
    return None


def _git(args: list[str], state: _State) -> list[Commit]:
    cwd, known = state.cwd, state.cwd_known
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option, _, attached = args[i].partition("=")
        value = attached if attached else (args[i + 1] if i + 1 < len(args) else "")
        if option in GIT_VALUE_OPTIONS:
            if option == "-C" or option == "--work-tree":
                known = known and not _variable(value)
                cwd = _join(cwd, value)
            elif option == "--git-dir":
                known = known and not _variable(value)
                path = _join(cwd, value)
                cwd = posixpath.dirname(path) if posixpath.basename(path) == ".git" else path
            i += 1 if attached else 2
        else:
            i += 1
    sub = args[i] if i < len(args) else ""
    if sub == "commit":
        commit = _commit(args[i + 1 :], cwd, known, state.staged_before)
        state.staged_before = True
        return [commit]
    if sub in STAGING:
        state.staged_before = True
    return []


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


def _options(args: list[str]) -> tuple[list[tuple[str, str]], bool]:
    """git commit's options as (long name, value), short clusters unpacked; and whether a
    pathspec was given."""
    options: list[tuple[str, str]] = []
    paths = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            return options, paths or i < len(args)
        if not arg.startswith("-") or arg == "-":
            paths = True
        elif arg.startswith("--"):
            name, has_value, value = arg.partition("=")
            if name in COMMIT_LONG_VALUES and not has_value:
                value, i = (args[i] if i < len(args) else ""), i + 1
            options.append((name, value))
        else:
            for j, flag in enumerate(arg[1:], start=1):
                name = LONG_OF.get(f"-{flag}", f"-{flag}")
                if flag not in COMMIT_SHORT_VALUES:
                    options.append((name, ""))
                    continue
                value = arg[j + 1 :]
                if not value:
                    value, i = (args[i] if i < len(args) else ""), i + 1
                options.append((name, value))
                break
    return options, paths


def _commit(args: list[str], cwd: str, known: bool, staged_before: bool) -> Commit:
    options, paths = _options(args)
    names = [name for name, _ in options]
    files = [value for name, value in options if name == "--file"]
    elsewhere = next((n for n in names if n in ELSEWHERE), None)
    commit = Commit(
        cwd=cwd,
        amend="--amend" in names,
        stages=paths or staged_before or any(n in STAGES for n in names),
        message_file=files[-1] if files else None,
        unknown=f"{elsewhere} builds the message from elsewhere" if elsewhere else "",
        cwd_known=known,
    )
    return _with_message(commit, [value for name, value in options if name == "--message"])


def _with_message(commit: Commit, messages: list[str]) -> Commit:
    if commit.unknown or commit.message_file is not None:
        why = commit.unknown or "the message is in a file"
        return replace(commit, unknown=why)
    if not messages:
        return replace(commit, unknown="no -m: the message is written in an editor or elsewhere")
    texts = []
    for text in messages:
        heredoc = HEREDOC_MESSAGE.match(text)
        if heredoc:
            texts.append(heredoc.group(3))
        elif _variable(text):
            return replace(commit, unknown="the message is built by the shell ($... or `...`)")
        else:
            texts.append(text)
    return replace(commit, message="\n\n".join(texts) + "\n")
