"""The coding-agent hook: a pre-tool-use event in, allow (0) or block (2) out.

Agents such as Claude Code hand the hook a JSON event on stdin (`tool_name`,
`tool_input.command`, `cwd`) before a tool runs, block the call when the hook exits 2
(showing its stderr to the model) and treat every other non-zero code as a warning that
lets the call through. So this hook fails closed: anything that is not the documented event
(an array, a string, a `tool_input` that is not an object, text that is not UTF-8, nesting
deeper than MAX_NESTING, more than MAX_EVENT_BYTES) blocks, and on a commit an internal
error or a reason it cannot judge blocks too. A call that cannot create a commit is allowed
at once; which calls can is `shell.commits`' question.

A commit is judged on what it would record (`recorded`): the index it uses (the
repository's, or the one GIT_INDEX_FILE names), and when the line would stage more first
(`git add` earlier in the line, `commit -a`, paths), or when it is a commit in doubt, that
index with the files of the work tree it stages from (the repository's, or another one
named). `--amend` is judged against HEAD's parent. A message the line states (`-m`, a
`cat <<EOF` message, `-F FILE`, `-F -` with a here-document), with its `--trailer` values
added as git adds them, is judged by the trailers gate. An index or work tree named by a
shell variable, and one a staging command used before the commit, are refused.
"""

from __future__ import annotations

import json
import os
import stat
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from fidelity.errors import FidelityError, UsageError
from fidelity.preflight import shell

if TYPE_CHECKING:
    from fidelity.preflight.outcome import Report
    from fidelity.preflight.recorded import Message

ALLOW, BLOCK = 0, 2
MAX_EVENT_BYTES = 16 * 1024 * 1024  # a command of several MiB is still judged
MAX_NESTING = 64  # the documented event nests 3 levels; agents add a few
MAX_SCRIPT_BYTES = 1024 * 1024  # a script file a shell in the line runs, read to judge it
USAGE = (
    "fidelity preflight --agent-hook reads a coding agent's pre-tool-use event (JSON) on "
    "standard input, e.g. "
    """echo '{"tool_name": "Bash", "tool_input": {"command": "git commit -m x"}, "cwd": "."}' """
    "| fidelity preflight --agent-hook"
)


@dataclass(frozen=True, slots=True)
class Decision:
    code: int  # ALLOW or BLOCK
    stderr: str = ""


class Event(Exception):
    """The input is not the documented hook event: why, in one line."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise Event(f"the event names {twice!r} twice")
    return dict(pairs)


def _nesting(value: Any) -> int:
    """How deep containers nest (an object of strings is 1), walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in item if isinstance(v, dict | list)]
    return deepest


def parse_event(raw: bytes) -> dict[str, Any]:
    """The event as a dict; Event when it is anything but the documented JSON object."""
    if len(raw) > MAX_EVENT_BYTES:
        raise Event(f"the event is larger than {MAX_EVENT_BYTES // (1024 * 1024)} MiB")
    if not raw.strip():
        raise Event("no event on standard input")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Event("the event is not UTF-8 text (UTF-16? a BOM?)") from None
    try:
        event = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise Event(f"the event nests deeper than {MAX_NESTING} levels") from None
    except ValueError as exc:  # JSONDecodeError, and a number too long to convert
        raise Event(f"the event is not JSON this hook can read ({exc})") from None
    if not isinstance(event, dict):
        raise Event(f"the event is a JSON {type(event).__name__}, not an object")
    if _nesting(event) > MAX_NESTING:
        raise Event(f"the event nests deeper than {MAX_NESTING} levels")
    try:  # valid JSON may escape half of a UTF-16 pair: "\ud800" is no text
        json.dumps(event, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Event("the event holds text that is not UTF-8 (a lone \\ud800-\\udfff)") from None
    _shape(event)
    return event


def _shape(event: dict[str, Any]) -> None:
    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise Event("the event has no tool_name string")
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        raise Event(f"tool_input is a {type(tool_input).__name__}, not an object")
    if "cwd" in event and not isinstance(event["cwd"], str):
        raise Event("cwd is not a string")
    command = tool_input.get("command")
    if command is None and tool == "Bash":
        raise Event("a Bash event without tool_input.command")
    argv = isinstance(command, list) and all(isinstance(w, str) for w in command)
    if command is not None and not isinstance(command, str) and not argv:
        raise Event("tool_input.command is neither a string nor a list of strings")


def _command(event: dict[str, Any]) -> str | None:
    """The shell command of a tool call, or None for a tool that runs none."""
    command = event["tool_input"].get("command")
    if isinstance(command, list):
        return " ".join(_quote(w) for w in command)  # agents that pass argv lists
    return command if isinstance(command, str) else None


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


class Machine:
    """What the shell analysis may look at: git aliases and script files, read on demand."""

    def __init__(self) -> None:
        self._aliases: dict[str, Mapping[str, str]] = {}

    def aliases(self, cwd: str) -> Mapping[str, str]:
        from fidelity.git import gitdir

        if cwd not in self._aliases:
            self._aliases[cwd] = gitdir.aliases(Path(cwd)) if Path(cwd).is_dir() else {}
        return self._aliases[cwd]

    def program(self, name: str) -> bool:
        import shutil

        return shutil.which(name) is not None

    def folder(self, path: str) -> bool:
        return os.path.isdir(path)

    def script(self, path: str) -> str | None:
        """A regular file's text; a fifo, device or folder is never opened for reading."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SCRIPT_BYTES:
                return None
            return handle.read(MAX_SCRIPT_BYTES).decode("utf-8", "replace")


def decide(raw: bytes, default_cwd: Path, lookup: shell.Lookup | None = None) -> Decision:
    """The verdict on one hook event; never raises (fails closed)."""
    try:
        event = parse_event(raw)
    except Event as exc:
        return Decision(
            BLOCK,
            f"fidelity preflight: not a hook event this hook understands: {exc}; blocked. "
            "Check the agent's hook setup (`fidelity preflight --help`).\n",
        )
    command = _command(event)
    if command is None:
        return Decision(ALLOW)
    cwd = event.get("cwd") or str(default_cwd)
    try:
        found = shell.commits(command, cwd, lookup or Machine(), _inherited(os.environ))
        if not found:
            return Decision(ALLOW)
        return _judge_all(found)
    except Exception as exc:  # fail closed: no error lets a commit through
        detail = str(exc) if isinstance(exc, FidelityError) else traceback.format_exc()
        return Decision(
            BLOCK,
            f"fidelity preflight could not judge this commit, so it is "
            f"blocked:\n{detail.rstrip()}\n",
        )


def _inherited(environ: Mapping[str, str]) -> dict[str, str]:
    """What the agent's shell inherits that moves a commit: another git directory, index
    or work tree, git configuration (trailer keys) given by the environment, and the
    folders bash's `cd` searches (CDPATH)."""
    names = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "CDPATH")
    return {k: v for k, v in environ.items() if k in names or k.startswith("GIT_CONFIG")}


def _judge_all(found: list[shell.Commit]) -> Decision:
    """Each commit the line could create, judged once per repository and kind: a line that
    commits a thousand times in one place costs one judgement."""
    messages: list[str] = []
    seen: set[tuple[object, ...]] = set()
    for commit in found:
        decision = _judge(commit, seen)
        if decision.code == BLOCK:
            return decision
        messages.append(decision.stderr)
    return Decision(ALLOW, "".join(dict.fromkeys(messages)))


def _nearest(path: str) -> Path | None:
    """The directory itself, or its nearest parent that exists: git run in a folder the line
    creates first (`mkdir sub && cd sub && git commit`) finds the repository above it."""
    where = Path(path)
    for candidate in (where, *where.parents):
        if candidate.is_dir():
            return candidate
    return None


def repositories(commit: shell.Commit) -> list[Path]:
    """Every repository the commit could land in: where the line's `cd`s lead, and every
    directory it was in before (a `cd` can fail, or not run), symbolic links resolved."""
    from fidelity.git import worktrees

    found: dict[Path, None] = {}
    for path in dict.fromkeys([commit.cwd, *commit.also]):
        where = _nearest(path)
        for form in dict.fromkeys([where, where.resolve()] if where else []):
            try:
                found[worktrees.toplevel(form)] = None
            except UsageError:
                continue
    return list(found)


def _refusal(commit: shell.Commit) -> str:
    """Why a commit is blocked before any gate runs, or ''."""
    if not commit.cwd_known:
        return (
            "fidelity preflight: this commit runs in a directory named by a shell variable, "
            "so its repository cannot be known; it is blocked. Run the commit with a literal "
            "path (cd /path && git commit ...).\n"
        )
    if commit.place.unknown:
        return (
            f"fidelity preflight: this commit uses {commit.place.unknown}, and the line "
            "names it with a shell variable (or reads it from input), so what it records "
            "cannot be known; it is blocked. Name it with a literal path, or commit from the "
            "repository's own index and work tree.\n"
        )
    if commit.brought:
        return (
            f"fidelity preflight: this line fills the index with {commit.brought} before it "
            "commits, so what the commit records cannot be judged before the line runs; it "
            f"is blocked. Run the {commit.brought} command on its own first, then commit in a "
            "call of its own (that call is judged).\n"
        )
    return ""


def _judge(commit: shell.Commit, seen: set[tuple[object, ...]]) -> Decision:
    """Only a call that could commit pays for importing the gates."""
    refusal = _refusal(commit)
    if refusal:
        return Decision(BLOCK, refusal)
    repos = repositories(commit)
    named = commit.place.work_tree is not None  # a git directory or work tree named
    if named and not repositories(replace(commit, also=())):
        return Decision(
            BLOCK,
            f"fidelity preflight: this commit names a git directory or work tree "
            f"({commit.place.work_tree}) in which no repository with a work tree of its own "
            "was found, so what it records cannot be judged; it is blocked. Commit from "
            "inside the repository's work tree.\n",
        )
    if not repos:
        return Decision(ALLOW, f"fidelity preflight: {commit.cwd} is not in a git repository\n")
    notes = []
    for repo in repos:
        key = (repo, replace(commit, also=(), doubt="", unknown=""))
        if key in seen:
            continue
        seen.add(key)
        decision = _judge_in(repo, commit)
        if decision.code == BLOCK:
            return decision
        notes.append(decision.stderr)
    return Decision(ALLOW, "".join(notes))


def _judge_in(repo: Path, commit: shell.Commit) -> Decision:
    import tempfile

    from fidelity.preflight import recorded

    with tempfile.TemporaryDirectory(prefix="fidelity-agent-") as scratch:
        said = recorded.message(commit, repo, Path(scratch))
        reports = recorded.reports(commit, repo, Path(scratch), said)
    return _verdict(repo, commit, reports, said)


def _verdict(repo: Path, commit: shell.Commit, reports: list[Report], said: Message) -> Decision:
    from fidelity.preflight import render
    from fidelity.preflight.outcome import Status

    unconfigured = all(r.status is Status.NOT_CONFIGURED for r in reports[0].results)
    if unconfigured:
        return Decision(ALLOW, f"fidelity preflight: nothing is configured in {repo}; allowed\n")
    failing = [r for r in reports if r.exit_code() != 0]
    if not failing:
        return Decision(ALLOW)
    lines = [f"fidelity preflight blocked this commit in {repo}:"]
    for report in failing:
        lines.append(f"judged {report.judged}:")
        lines += render.lines(report)
    if commit.doubt:
        lines.append(f"(judged as a commit the line could make: {commit.doubt})")
    if said.partial:
        unseen = "; ".join(n for n in dict.fromkeys([commit.unknown, *said.notes]) if n)
        lines.append(
            f"(the hook cannot read all of the message ({unseen}), so a required trailer "
            "it lacks is not reported)"
        )
    elif commit.unknown and said.path is None and commit.unknown != commit.doubt:
        lines.append(f"(trailers not judged: {commit.unknown})")
    lines.append(
        "Fix what failed, stage the fixes, and commit again; `fidelity preflight --staged` "
        "shows this report."
    )
    return Decision(BLOCK, "\n".join(lines) + "\n")


def answer_json(decision: Decision) -> str:
    """The decision in Claude Code's PreToolUse JSON format (for agents that read stdout);
    the exit code still blocks on its own."""
    output: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if decision.code == BLOCK:
        output |= {"permissionDecision": "deny", "permissionDecisionReason": decision.stderr}
    elif decision.stderr:
        output["additionalContext"] = decision.stderr
    return json.dumps({"hookSpecificOutput": output}) + "\n"


def main(
    stdin: BinaryIO,
    write_err: Callable[[str], object],
    write_out: Callable[[str], object] | None = None,
) -> int:
    """Read the event, decide, say why on stderr (and as JSON on stdout with write_out);
    the exit code. No event on a terminal is a usage error at once, never a wait."""
    if stdin.isatty():
        raise UsageError(USAGE)
    try:
        raw = stdin.read(MAX_EVENT_BYTES + 1)
    except OSError as exc:
        write_err(f"fidelity preflight: cannot read the hook event: {exc}; blocked\n")
        return BLOCK
    decision = decide(raw, Path(os.getcwd()))
    if decision.stderr:
        write_err(decision.stderr)
    if write_out is not None:
        write_out(answer_json(decision))
    return decision.code
