"""Command line: parse arguments, call a command function, turn errors into exit codes.

Each command module exposes ``register(subparsers)``, which adds its parser and sets
``handler(args, console) -> int``. Handlers unpack the namespace into plain values; nothing
below them sees argparse. Heavy imports (pandas, the runner) happen inside handlers so that
``fidelity --help`` and the checkers start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Sequence

from rich.console import Console

from fidelity import __version__, proc
from fidelity.errors import FidelityError

COMMAND_MODULES = (
    "fidelity.cli_matrix",
    "checkers.cli",
    "fidelity.cli_evidence",
    "fidelity.cli_controls",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fidelity",
        description="Turn the claims a change makes into evidence that can fail.",
        epilog="Exit codes: 0 the gate holds; 1 the evidence says no; "
        "2 usage or configuration error; 3 the evidence cannot be trusted.",
    )
    parser.add_argument("--version", action="version", version=f"fidelity {__version__}")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="plain output for CI logs: no progress, no colour",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for command in sub.choices.values():  # `fidelity run -q` works as well as `fidelity -q run`
        with contextlib.suppress(argparse.ArgumentError):
            command.add_argument(
                "-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                help="plain output for CI logs",
            )  # fmt: skip
    return parser


def make_console(quiet: bool) -> Console:
    if quiet:
        return Console(no_color=True, highlight=False, soft_wrap=True, force_terminal=False)
    return Console(highlight=False, soft_wrap=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a cancelled CI job), unwound like Ctrl-C so that cleanup runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    console = make_console(args.quiet)
    err = Console(stderr=True, highlight=False, no_color=args.quiet)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, _terminate) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        code: int = args.handler(args, console)
        return code
    except FidelityError as exc:
        err.print(f"fidelity {args.command}: {exc}", markup=False)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        proc.kill_all()
        err.print("fidelity: interrupted; child processes killed and worktrees removed")
        return 128 + exc.signum if isinstance(exc, Terminated) else 130
    except Exception:  # a crash is not "the evidence says no": it is untrusted
        proc.kill_all()
        err.print_exception()
        err.print(
            f"fidelity {args.command}: internal error (above). The evidence cannot be trusted; "
            "please report it with the command line."
        )
        return 3
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
