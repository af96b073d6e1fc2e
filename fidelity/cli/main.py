"""Command line: parse arguments, call a command function, turn errors into exit codes.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``handler(args, console) -> int``. Handlers unpack the namespace into plain values; nothing
below them sees argparse. Heavy imports (pandas, the runner) happen inside handlers so that
``fidelity --help`` and the checkers start fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checkers.errors import ConfigError, NothingToCheck
from fidelity import __version__
from fidelity.cli import console, options
from fidelity.errors import INTERRUPTED, SIGNALLED, Exit, FidelityError, exit_summary

if TYPE_CHECKING:
    from rich.console import Console

# each module of `fidelity.cli` that registers commands, in the order the help lists them,
# and the commands it registers (a test holds this to what each one adds): a command line
# that names a command imports and registers its module alone
FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("matrix", ("run", "merge", "compare", "verify", "cases")),
    ("html", ("report",)),
    ("demo", ("demo",)),
    ("docs", ("check-docs",)),
    ("history", ("stale", "landed", "trailers")),
    ("ab", ("ab",)),
    ("controls", ("controls", "failset")),
    ("preflight", ("preflight", "install-hooks")),
    ("records", ("merge-records",)),
    ("gc", ("gc",)),
)
# the gates that annotate their verdicts under GitHub Actions, and so their errors too; in
# the order the top-level help names them
ANNOTATED = ("run", "merge", "compare", "verify", "stale", "landed", "trailers", "preflight")


def _listed(names: tuple[str, ...]) -> str:
    return f"{', '.join(names[:-1])} and {names[-1]}"


def named_command(argv: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option (the
    top-level options take no value), or None (`--help` before it, `--version`, nothing:
    `fidelity -h gc` prints the top-level help, which lists every command)."""
    for word in argv:
        if word in ("--", "-h", "--help"):
            return None
        if not word.startswith("-"):
            return word
    return None


def families(command: str | None = None) -> list[str]:
    """The modules to register for `command`: its own, or every one (help, an unknown
    command: the error lists every choice)."""
    own = [module for module, names in FAMILIES if command in names]
    return own or [module for module, _ in FAMILIES]


def _columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (with zlib, bz2 and
    lzma: about 2 ms of every start, for argparse's formatter alone)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no standard output, or no terminal
        return 80


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    """argparse's parser with `_Formatter` (a subcommand's parser too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with ``command``, only the parsers of its module (importing
    and registering the others cost about 8 ms: `check-docs` on one page starts in a few
    tens)."""
    parser = _Parser(
        prog="fidelity",
        description="Turn the claims a change makes into evidence that can fail.",
        epilog=f"{exit_summary()} Under GitHub Actions (GITHUB_ACTIONS=true), "
        f"{_listed(ANNOTATED)} also print ::error annotations when their gate does not hold; "
        "check-docs does with --format github.",
    )
    parser.add_argument("--version", action="version", version=f"fidelity {__version__}")
    options.quiet(parser, default=False)
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    for module in families(command):
        importlib.import_module(f"fidelity.cli.{module}").register(sub)
    options.quiet_everywhere(parser)  # `fidelity cases list -q` as well as `fidelity -q ...`
    for name in ANNOTATED:
        if name not in sub.choices:
            continue
        sub.choices[name].epilog = (
            "Under GitHub Actions (GITHUB_ACTIONS=true), a gate that does not hold also prints "
            "::error annotations on standard output, at the file and line of the cause where "
            "there is one (README.md, 'In GitHub Actions')."
        )
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a cancelled CI job), unwound like Ctrl-C so that cleanup runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


class _Interrupt:
    """Ctrl-C once unwinds like KeyboardInterrupt; again while cleaning up is ignored (and
    said), so that worktrees and processes are still removed. Ctrl-\\ still kills."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.seen:
            sys.stderr.write("fidelity: cleaning up (processes, worktrees); one moment\n")
            return
        self.seen = True
        raise KeyboardInterrupt


def _exit_code(exc: BaseException) -> int | None:
    """The exit code of an error that is the user's to fix or the evidence's to lack."""
    if isinstance(exc, FidelityError):
        return exc.exit_code
    if isinstance(exc, ConfigError):
        return Exit.USAGE
    if isinstance(exc, NothingToCheck):
        return Exit.UNTRUSTED
    from fidelity import procargs  # on an error only

    if isinstance(exc, procargs.Unstartable):
        return Exit.USAGE
    return None


def _error_console(quiet: bool) -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, no_color=quiet, soft_wrap=True)


def _annotate(command: str, code: int, message: str) -> None:
    """An error that ended a gate before it had a verdict to annotate, as an annotation."""
    from fidelity import github  # not at start-up: dataclasses and inspect, ~20 ms

    if command in ANNOTATED and github.active():
        what = "usage or configuration error" if code == 2 else "cannot be trusted"
        sys.stdout.write(github.error(None, None, f"fidelity {command}: {what}", message) + "\n")
        sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 must not crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser(named_command(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    out = console.lazy_stdout(args.quiet)  # rich only when something prints
    err = console.lazy(lambda: _error_console(args.quiet))
    previous = {}
    interrupt = _Interrupt()
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, _terminate) for s in (signal.SIGTERM, signal.SIGHUP)}
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, interrupt)
    try:
        code: int = args.handler(args, out)
        return code
    except KeyboardInterrupt as exc:
        from fidelity import proc, worktree

        proc.kill_all()
        left = worktree.open_checkouts()
        said = (
            f"{len(left)} worktree(s) could not be removed ({', '.join(map(str, left))}); the "
            "next fidelity run removes them"
            if left
            else "worktrees removed"
        )
        err.print(f"fidelity: interrupted; child processes killed; {said}", markup=False)
        run_dir = getattr(exc, "run_dir", None)
        if run_dir is not None:
            from fidelity.matrix.run.ledger import finished

            done = finished(run_dir)
            kept = (
                f"the evidence of {done} finished case run(s) is kept"
                if done
                else "no case had finished"
            )
            err.print(
                f"fidelity: {kept} in {run_dir}; finish the run with "
                f"`fidelity run --resume {run_dir}`",
                markup=False,
                soft_wrap=True,
            )
        return SIGNALLED + exc.signum if isinstance(exc, Terminated) else INTERRUPTED
    except Exception as exc:
        known = _exit_code(exc)
        if known is not None:
            err.print(f"fidelity {args.command}: {exc}", markup=False, soft_wrap=True)
            _annotate(args.command, known, str(exc))
            return known
        from fidelity import proc

        proc.kill_all()  # a crash is not "the evidence says no": it is untrusted
        err.print_exception()
        advice = "The evidence cannot be trusted; please report it with the command line."
        err.print(f"fidelity {args.command}: internal error (above). {advice}")
        _annotate(
            args.command, Exit.UNTRUSTED, f"internal error ({type(exc).__name__}: {exc}). {advice}"
        )
        return Exit.UNTRUSTED
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if previous and interrupt.seen:  # more Ctrl-C on the way out must not crash the exit
            signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
