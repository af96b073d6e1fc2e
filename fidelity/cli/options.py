"""Options shared by several commands, each defined once, and the one writer of reports.

A report path is checked before the command runs, so a gate that holds never turns into an
error at the end because its report folder cannot be written; `-` means standard output.
A report replaces the file it names, but for the file `$GITHUB_STEP_SUMMARY` names: that
one GitHub expects appended to (earlier steps' summaries are in it), and within its 1 MiB.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from fidelity.errors import UsageError
from fidelity.markdown import STEP_SUMMARY_LIMIT
from fidelity.text import printable

STDOUT = Path("-")
_HELP = {
    "json": "also write the {what} as JSON ('-' for standard output only)",
    "markdown": "also write it as Markdown for a PR comment or a step summary: PATH is "
    "replaced, except the file $GITHUB_STEP_SUMMARY names, which is appended to (kept under "
    "GitHub's 1 MiB with what it holds); text from cases is escaped",
    "junit": "also write it as JUnit XML, one test case per {unit}",
}


FALSE = frozenset({"", "0", "false", "no", "off"})


def under_ci(environ: Mapping[str, str]) -> bool:
    """Running under CI: `CI` set to a true value, as GitHub Actions, GitLab CI, CircleCI,
    Travis, Buildkite and Jenkins' plugins set it (`CI=false` or `CI=0` is not CI)."""
    return environ.get("CI", "").strip().lower() not in FALSE


def partial(parser: argparse.ArgumentParser) -> None:
    """`--partial`: a run of some of the declared cases (`--case`, `--tag`) is meant."""
    parser.add_argument(
        "--partial",
        action="store_true",
        help="a partial run (some of the declared cases) is meant: under CI (the CI variable "
        "set to a true value) a partial run without it exits 3, so that it cannot pass for "
        "the full gate. Every report of a partial run says PARTIAL either way; a shard is "
        "exempt (its merge is the gate); no effect on a full run",
    )


def quiet(parser: argparse.ArgumentParser, default: object = argparse.SUPPRESS) -> None:
    """`-q` after the command as well as before it (`fidelity run -q`, `fidelity -q run`).
    Only the top level gives it a default (False): a command's `-q` left out must not
    overwrite the top level's."""
    if "--quiet" in parser._option_string_actions:
        return
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=default,
        help="plain output for CI logs: no progress, no colour, one record per line",
    )


def commands(parser: argparse.ArgumentParser) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command's and nested action's parser under `parser`, by the words that name it
    (`("cases", "list")`); aliases are left out."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, child in action.choices.items():
            if child not in found.values():
                found[(name,)] = child
                found |= {(name, *path): p for path, p in commands(child).items()}
    return found


def quiet_everywhere(parser: argparse.ArgumentParser) -> None:
    """`-q` after every command and nested action, meaning what it means before them: a
    command added later cannot forget it (tests/test_quiet.py walks them all)."""
    for command in commands(parser).values():
        quiet(command)


def repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="the repository (default: the one holding the working directory)",
    )


def json(parser: argparse.ArgumentParser, what: str = "report") -> None:
    parser.add_argument("--json", type=Path, metavar="PATH", help=_HELP["json"].format(what=what))


def reports(
    parser: argparse.ArgumentParser, what: str = "report", *, junit: str | None = None
) -> None:
    """--json and --markdown, and --junit when `junit` names what one test case stands for."""
    json(parser, what)
    parser.add_argument("--markdown", type=Path, metavar="PATH", help=_HELP["markdown"])
    if junit:
        parser.add_argument(
            "--junit", type=Path, metavar="PATH", help=_HELP["junit"].format(unit=junit)
        )


def html(parser: argparse.ArgumentParser, what: str = "verdict") -> None:
    """--html PATH: one self-contained page (fidelity.htmlreport)."""
    parser.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help=f"also write the {what} as one self-contained HTML page (no network access when "
        "opened; plots of what moved; text from cases escaped): a CI artifact to open",
    )


def whole_number(text: str, minimum: int) -> int:
    """An argparse value: a whole number of at least minimum, or ArgumentTypeError."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a time limit, finite, above 0 and at most 1e9 s (nan, inf and 0
    would each disable or break the limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 1e9:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1e9 seconds, not {text}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (`--jobs 0` would run nothing)."""
    return whole_number(text, 1)


def count(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return whole_number(text, 0)


def jobs(parser: argparse.ArgumentParser, default: int, help: str) -> None:
    parser.add_argument("--jobs", type=positive_int, default=default, metavar="N", help=help)


def to_stdout(path: Path | None) -> bool:
    return path == STDOUT


def check_writable(*paths: Path | None, evidence: Sequence[Path] = ()) -> None:
    """UsageError, before anything runs, for a report path that cannot be written, for
    two reports asked for in one place (`--json - --sarif -` wrote two documents, one after
    the other, on standard output: neither could be read), and for one inside a run
    directory in ``evidence``, whose run.json or outputs it could overwrite."""
    given = [path for path in paths if path is not None]
    twice = sorted({str(p) for p in given if given.count(p) > 1})
    if twice:
        where = "standard output ('-')" if twice == ["-"] else ", ".join(twice)
        raise UsageError(f"two reports are asked for in {where}; give each report its own path")
    for path in paths:
        if path is None or path == STDOUT:
            continue
        if path.is_dir():
            raise UsageError(f"report path {path} is a directory; name a file")
        inside = next((d for d in evidence if _within(path, d)), None)
        if inside is not None:
            raise UsageError(
                f"report path {path} is inside the run directory {inside}, whose files are "
                "the evidence it is judged from; write the report outside it"
            )
        folder = path.parent
        existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write the report {path}: {existing} is not a writable folder")


def _within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


class ReportError(UsageError):
    """A report file that could not be written (a full disk, a read-only folder): exit 2,
    naming the path; what was written before it is kept."""

    def __init__(self, path: Path, exc: OSError, after: str = "") -> None:
        self.path, self.error = path, exc
        why = exc.strerror or str(exc)
        super().__init__(
            f"cannot write the report {path}: {why}; free space or choose another path "
            f"(reports written before it are complete){after}"
        )


def save(path: Path, data: bytes, *, append: bool = False) -> None:
    """Write a report file, making its folder; ReportError for any OSError. A regular file
    is replaced whole (a temporary beside it, renamed), so that a failure leaves the old
    file, never half a report; a device, fifo or link (`/dev/stdout`) is written in place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if append or path.is_symlink() or (path.exists() and not path.is_file()):
            with path.open("ab" if append else "wb") as f:
                f.write(data)
            return
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise ReportError(path, exc) from exc
    finally:
        if not append:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


def write(path: Path | None, text: str) -> None:
    """Write a report, making its folder; `-` writes to standard output."""
    if path is None:
        return
    text = printable(text)
    if path == STDOUT:
        sys.stdout.write(text)
        return
    save(path, text.encode("utf-8"))


def step_summary(path: Path) -> bool:
    """path is the file $GITHUB_STEP_SUMMARY names (the same file, however it is spelt)."""
    named = os.environ.get("GITHUB_STEP_SUMMARY")
    if not named or path == STDOUT:
        return False
    try:
        return os.path.samefile(path, named)
    except OSError:  # not both there yet
        return path.absolute() == Path(named).absolute()


def _held(path: Path) -> tuple[int, str]:
    """The size of what the file holds, and what must come before an appended report: a
    blank line, so that no list, table or HTML block of an earlier step swallows it."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - 2))
            end = f.read()
    except FileNotFoundError:
        return 0, ""
    return size, "" if not size or end == b"\n\n" else "\n" if end.endswith(b"\n") else "\n\n"


def write_markdown(path: Path | None, render: Callable[[int], str]) -> None:
    """Write a Markdown report that `render(limit)` keeps under `limit` bytes: appended to
    the step summary in the room GitHub's 1 MiB leaves it, any other path replaced."""
    if path is None:
        return
    if not step_summary(path):
        write(path, render(STEP_SUMMARY_LIMIT))
        return
    size, gap = _held(path)
    room = STEP_SUMMARY_LIMIT - size - len(gap)
    text = render(room) if room > 0 else ""
    if not text:
        sys.stderr.write(
            f"fidelity: no Markdown report added to {path}: it already holds {size} bytes of "
            f"GitHub's {STEP_SUMMARY_LIMIT}; read the verdict in the log or write --json\n"
        )
        return
    save(path, (gap + printable(text)).encode("utf-8"), append=True)
