"""The coding-agent hook: a pre-tool-use event in, allow (0) or block (2) out.

Agents such as Claude Code hand the hook a JSON event on stdin (`tool_name`,
`tool_input.command`, `cwd`) before a tool runs, block the call when the hook exits 2
(showing its stderr to the model) and treat every other non-zero code as a warning that
lets the call through. So this hook fails closed: on a commit, an internal error or a
reason it cannot judge is exit 2 too. Anything that is not a `git commit` is allowed at
once, without a look at the repository.

A commit is judged on the index; when the line would stage more first (`git add` earlier
in the line, `commit -a`, paths), the work tree is judged as well. `--amend` is judged
against HEAD's parent. A message the line states (`-m`, a `cat <<EOF` message, `-F FILE`)
is judged by the trailers gate.
"""

from __future__ import annotations

import json
import os
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity import git
from fidelity.errors import FidelityError, UsageError
from fidelity.preflight import render, shell
from fidelity.preflight.outcome import Report, Status
from fidelity.preflight.run import Request, run

ALLOW, BLOCK = 0, 2


@dataclass(frozen=True, slots=True)
class Decision:
    code: int  # ALLOW or BLOCK
    stderr: str = ""


def _command(event: Any) -> str | None:
    """The shell command of a tool call, or None for a tool that runs none."""
    if not isinstance(event, dict) or not isinstance(event.get("tool_input"), dict):
        return None
    command = event["tool_input"].get("command")
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        return " ".join(_quote(w) for w in command)  # agents that pass argv lists
    return command if isinstance(command, str) else None


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def decide(raw: bytes, default_cwd: Path) -> Decision:
    """The verdict on one hook event; never raises (fails closed on a commit)."""
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if b"commit" in raw:
            return Decision(
                BLOCK,
                f"fidelity preflight: unreadable hook event ({exc}); a "
                "commit may be in it, so it is blocked. Check the agent's hook setup.\n",
            )
        return Decision(ALLOW)
    command = _command(event)
    if command is None:
        return Decision(ALLOW)
    cwd = event.get("cwd") if isinstance(event, dict) else None
    cwd = cwd if isinstance(cwd, str) and cwd else str(default_cwd)
    found = shell.commits(command, cwd)
    if not found:
        return Decision(ALLOW)
    try:
        return _judge_all(found)
    except Exception as exc:  # fail closed: no error lets a commit through
        detail = str(exc) if isinstance(exc, FidelityError) else traceback.format_exc()
        return Decision(
            BLOCK,
            f"fidelity preflight could not judge this commit, so it is "
            f"blocked:\n{detail.rstrip()}\n",
        )


def _judge_all(found: list[shell.Commit]) -> Decision:
    messages = []
    for commit in found:
        decision = _judge(commit)
        if decision.code == BLOCK:
            return decision
        messages.append(decision.stderr)
    return Decision(ALLOW, "".join(messages))


def _judge(commit: shell.Commit) -> Decision:
    if not commit.cwd_known:
        return Decision(
            BLOCK,
            "fidelity preflight: this commit runs in a directory named by "
            "a shell variable, so its repository cannot be known; it is blocked. "
            "Run the commit with a literal path (cd /path && git commit ...).\n",
        )
    where = Path(commit.cwd)
    if not where.is_dir():
        return Decision(ALLOW, f"fidelity preflight: {where} does not exist yet; not judged\n")
    try:
        repo = git.toplevel(where)
    except UsageError:
        return Decision(ALLOW, f"fidelity preflight: {where} is not in a git repository\n")
    with tempfile.TemporaryDirectory(prefix="fidelity-agent-") as scratch:
        message = _message_file(commit, Path(scratch))
        reports = [run(Request(repo, staged=True, amend=commit.amend, message=message))]
        if commit.stages:
            reports.append(run(Request(repo, amend=commit.amend, message=message)))
    return _verdict(repo, commit, reports)


def _message_file(commit: shell.Commit, scratch: Path) -> Path | None:
    if commit.message is not None:
        path = scratch / "COMMIT_EDITMSG"
        path.write_text(commit.message, encoding="utf-8")
        return path
    if commit.message_file not in (None, "-"):
        path = Path(commit.cwd, commit.message_file or "")
        return path if path.is_file() else None
    return None


def _verdict(repo: Path, commit: shell.Commit, reports: list[Report]) -> Decision:
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
    if commit.unknown and commit.message is None:
        lines.append(f"(trailers not judged: {commit.unknown})")
    lines.append(
        "Fix what failed, stage the fixes, and commit again; `fidelity preflight --staged` "
        "shows this report."
    )
    return Decision(BLOCK, "\n".join(lines) + "\n")


def main(read: Callable[[], bytes], write_err: Callable[[str], object]) -> int:
    """Read the event, decide, say why on stderr; the exit code."""
    try:
        raw = read()
    except OSError as exc:
        write_err(f"fidelity preflight: cannot read the hook event: {exc}; blocked\n")
        return BLOCK
    decision = decide(raw, Path(os.getcwd()))
    if decision.stderr:
        write_err(decision.stderr)
    return decision.code
