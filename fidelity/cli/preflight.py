"""`fidelity preflight` and `fidelity install-hooks`: parse, call the preflight package, render."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.cli import options

if TYPE_CHECKING:
    from rich.console import Console

    from fidelity.preflight.run import Request

PREFLIGHT_HELP = """\
Runs every gate that applies to a change: case tables, control tables (their edits must
still apply), prediction files, failing-set baselines, the Markdown checkers and ratchets,
stale rows in touched records, record rows a merge or a range must keep, and commit messages'
trailers. What is judged: the work tree (default), the index (--staged), everything (--all),
the last commit of a range (--from-ref/--to-ref), each range a push brings (--pre-push, git's
pre-push hook), or what the pre-commit framework names (--pre-commit, the hook's entry). One
line per gate, then `N gates ok, M failed`. Configure in [tool.fidelity.preflight]; without
it every gate whose own configuration exists runs.
Exit 0 when every gate that ran holds (also when none applies to the change), 1 when one
fails, 2 on usage or configuration errors, 3 when a gate could not judge or nothing is
configured. With --agent-hook: read a coding agent's pre-tool-use event (JSON) on stdin and
exit 2 to block a call that could create a commit and fails (reasons on stderr), 0 to
allow; anything but the documented event, and any error on a commit, blocks too."""


def register(sub: Any) -> None:
    _register_preflight(sub)
    _register_install(sub)


def _register_preflight(sub: Any) -> None:
    p = sub.add_parser(
        "preflight",
        help="every gate that applies to the change, before you commit",
        description=PREFLIGHT_HELP,
    )
    p.add_argument(
        "--staged",
        action="store_true",
        help="judge the index (what `git commit` records), not the work tree; inside a git "
        "hook, the index git names in GIT_INDEX_FILE",
    )
    p.add_argument(
        "--commit-msg",
        type=Path,
        metavar="FILE",
        help="also judge this commit message's trailers ([tool.fidelity.trailers])",
    )
    p.add_argument(
        "--list", action="store_true", help="say which gates would run and why; run none"
    )
    p.add_argument(
        "--all",
        action="store_true",
        dest="everything",
        help="judge everything configured, as if every file had changed (CI)",
    )
    p.add_argument(
        "--base",
        metavar="REV",
        help="the change is the difference from REV (default HEAD), e.g. origin/main in CI",
    )
    p.add_argument(
        "--from-ref",
        metavar="REV",
        help="with --to-ref: judge the commit --to-ref names, its change being the range's "
        "(from the merge base of the two), every merge in the range (record rows) and every "
        "commit message in it (trailers); pre-commit's `--from-ref/--to-ref` and pre-push",
    )
    p.add_argument("--to-ref", metavar="REV", help="the commit a --from-ref range ends at")
    p.add_argument(
        "--pre-commit",
        action="store_true",
        dest="pre_commit",
        help="as a hook of the pre-commit framework, given the files it passes: a range when "
        "pre-commit names one (PRE_COMMIT_FROM_REF/TO_REF), the index when the files are "
        "what is staged (a commit), else the work tree with those files as the change "
        "(`--all-files`, `--files`)",
    )
    p.add_argument(
        "--pre-push",
        metavar="REMOTE",
        help="as git's pre-push hook (its first argument): read the pushed refs on stdin and "
        "judge each as --from-ref/--to-ref does, from what REMOTE already has (a new branch: "
        "from its first commit no REMOTE/* branch holds); exit non-zero stops the push",
    )
    p.add_argument(
        "--post-rewrite",
        metavar="KIND",
        help="as git's post-rewrite hook (KIND: its first argument, `rebase` or `amend`): read "
        "the rewritten commits on stdin and name each record row a rebase's commit lost that "
        "the commit it replays kept; exit 1 says so (git cannot undo the rebase for it)",
    )
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="with --pre-commit: the files pre-commit passes (write them after `--`)",
    )
    p.add_argument(
        "--agent-hook",
        action="store_true",
        help="speak the coding-agent hook protocol: event JSON on stdin, exit 2 blocks "
        "(reasons on stderr), 0 allows; anything but the documented event blocks",
    )
    p.add_argument(
        "--json-decision",
        action="store_true",
        help="with --agent-hook: also write the decision to stdout in Claude Code's "
        "PreToolUse JSON format (hookSpecificOutput.permissionDecision); the exit code "
        "still blocks, so an agent that ignores stdout stays safe",
    )
    options.json(p)
    options.repo(p)
    p.set_defaults(handler=_preflight)


def _index_file() -> Path | None:
    """The index a git hook names (a temporary one for `commit -a` or `commit PATH`)."""
    name = os.environ.get("GIT_INDEX_FILE")
    return Path(os.getcwd(), name) if name else None


def _request(args: argparse.Namespace, repo: Path) -> Request:
    """What the options ask to judge; UsageError for combinations that judge two things."""
    from fidelity.errors import UsageError
    from fidelity.preflight.hookmode import pre_commit_request
    from fidelity.preflight.merges import automatic_heads
    from fidelity.preflight.run import Request

    if bool(args.from_ref) != bool(args.to_ref):
        raise UsageError("--from-ref and --to-ref go together: name both ends of the range")
    if args.files and not args.pre_commit:
        raise UsageError(
            f"unexpected arguments {args.files!r}: file names are taken only with --pre-commit"
        )
    span = (args.from_ref, args.to_ref) if args.from_ref else None
    modes = [
        m
        for m, on in (
            ("--staged", args.staged),
            ("--all", args.everything),
            ("--from-ref", span),
            ("--pre-commit", args.pre_commit),
            ("--pre-push", args.pre_push is not None),
            ("--post-rewrite", args.post_rewrite is not None),
        )
        if on
    ]
    if len(modes) > 1:
        raise UsageError(f"{' and '.join(modes)} each say what to judge; give one")
    if args.pre_commit:
        return pre_commit_request(repo, tuple(args.files), os.environ, args.commit_msg)
    return Request(
        repo=repo,
        staged=args.staged,
        index=_index_file() if args.staged else None,
        automatic=automatic_heads(os.environ) if args.staged else (),
        base=args.base,
        everything=args.everything,
        message=args.commit_msg,
        span=span,
    )


def _preflight(args: argparse.Namespace, console: Console) -> int:
    if args.agent_hook:
        from fidelity.preflight import agent

        out = sys.stdout.write if args.json_decision else None
        return agent.main(sys.stdin.buffer, sys.stderr.write, out)
    import json

    from fidelity.cli import annotate
    from fidelity.git import worktrees
    from fidelity.preflight import render
    from fidelity.preflight.run import plan, run

    options.check_writable(args.json)
    repo = worktrees.toplevel(args.repo)
    request = _request(args, repo)
    if args.pre_push is not None:
        return _pre_push(repo, args, console)
    if args.post_rewrite is not None:
        return _post_rewrite(repo, args.post_rewrite, console)
    if args.list:
        for line in render.plan_lines(plan(request)):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return 0
    report = run(request)
    options.write(args.json, json.dumps(report.to_json(), indent=2) + "\n")
    if not options.to_stdout(args.json):
        for line in render.lines(report):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    annotate.emit(console, args.json, annotate.preflight(report))
    return report.exit_code()


def _pre_push(repo: Path, args: argparse.Namespace, console: Console) -> int:
    """Each pushed ref judged as its own range; the worst exit code stops the push."""
    from fidelity.errors import UsageError
    from fidelity.preflight import pushed, render
    from fidelity.preflight.run import plan, run

    if args.json is not None:
        raise UsageError("--json writes one report; --pre-push judges one per pushed ref")
    pushes = pushed.requests(repo, args.pre_push, sys.stdin.read())
    if not pushes:
        console.print("nothing to judge: the push deletes refs or brings no new commit")
    code = 0
    for push in pushes:
        console.print(f"{push.label}:", markup=False, highlight=False, soft_wrap=True)
        if args.list:
            shown = render.plan_lines(plan(push.request))
        else:
            report = run(push.request)
            shown, code = render.lines(report), max(code, report.exit_code())
        for line in shown:
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    return code


def _post_rewrite(repo: Path, kind: str, console: Console) -> int:
    """Rows a rebase lost, named right after it; an amend is the user's own edit."""
    from fidelity.preflight import rewritten

    text = sys.stdin.read()
    lost = rewritten.findings(repo, rewritten.pairs(text)) if kind == "rebase" else []
    if not lost:
        return 0
    console.print("fidelity: the rebase lost record rows:", markup=False, highlight=False)
    for line in (*lost, f"what to do: {rewritten.REMEDY}"):
        console.print(f"    {line}", markup=False, highlight=False, soft_wrap=True)
    return 1


def _register_install(sub: Any) -> None:
    p = sub.add_parser(
        "install-hooks",
        help="write plain git hooks, the record merge driver and the agent hook; --uninstall",
        description="Writes .git/hooks/pre-commit and pre-merge-commit (`fidelity preflight "
        "--staged`), commit-msg (`fidelity trailers`, when [tool.fidelity.trailers] exists), "
        "pre-push (`fidelity preflight --pre-push`: each pushed range, as CI judges it), "
        "post-rewrite (`--post-rewrite`: a record row a rebase lost) "
        "and the `fidelity-records` merge driver into the repository's git config; with "
        "--agent, also a coding agent's pre-tool-use hook (Claude Code's settings format) "
        "running `fidelity preflight --agent-hook`. Every hook runs the interpreter fidelity "
        "is installed in, by its path. Never overwrites a hook or setting it did not write: "
        "exit 2, nothing written. Rerun to update; --uninstall removes all of it.",
    )
    p.add_argument(
        "--agent",
        action="store_true",
        help="also install the coding-agent hook: a script in the git folder and its entry in "
        "the agent's settings (default .claude/settings.local.json, a file for this machine)",
    )
    p.add_argument(
        "--agent-settings",
        type=Path,
        metavar="FILE",
        help="the agent settings file to write or clean (e.g. .claude/settings.json to share "
        "the entry, ~/.claude/settings.json for every project)",
    )
    p.add_argument(
        "--uninstall",
        action="store_true",
        help="remove every hook, the merge driver and the agent entry fidelity installed; "
        "foreign ones are named and left",
    )
    options.repo(p)
    p.set_defaults(handler=_install)


def _refuse_unconfigured(repo: Path) -> None:
    """UsageError when no gate is configured here: the hooks would stop every commit
    (preflight exits 3 when nothing is judged), which nobody installs them for."""
    from fidelity.errors import UsageError
    from fidelity.preflight import run
    from fidelity.preflight.outcome import Status

    plans = run.plan(run.Request(repo, everything=True))
    if all(plan.skip is Status.NOT_CONFIGURED for _, _, plan in plans):
        raise UsageError(
            "not installed: no gate is configured in this repository, so every commit would "
            "stop (preflight judges nothing: exit 3). Configure one first (a case table, "
            "[tool.fidelity.docs], [[tool.fidelity.records]]; `fidelity preflight --list` says "
            "what each gate needs), then rerun"
        )


def _install(args: argparse.Namespace, console: Console) -> int:
    from fidelity.git import worktrees
    from fidelity.preflight import hooks

    repo = worktrees.toplevel(args.repo)
    settings = args.agent_settings
    if settings is not None and not settings.is_absolute():
        settings = Path.cwd() / settings
    if args.uninstall:
        done = hooks.uninstall(repo, settings)
    else:
        agent = args.agent or settings is not None
        wanted = (settings or repo / hooks.DEFAULT_AGENT_SETTINGS) if agent else None
        _refuse_unconfigured(repo)
        done = hooks.install(repo, agent=wanted)
    for item in done:
        note = f" ({item.why})" if item.why else ""
        console.print(
            f"{item.action:<9} {item.what}: {item.where}{note}", markup=False, soft_wrap=True
        )
    return 0
