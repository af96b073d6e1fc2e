"""`fidelity check-docs [PATHS]`: parse arguments, run the checkers, render.

Exit 0 when every page is clean, 1 on findings, 2 on bad configuration or paths, 3 when
nothing was checked (a gate never passes without having looked at something).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity import __version__
from fidelity.cli import options
from fidelity.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "check-docs",
        help="check Markdown records: caps, fences, links, headings, keyed tables, a baseline",
        description="Check Markdown pages against [tool.fidelity.docs] (reference: "
        "docs/check-docs.md). With no PATHS, checks the root's README.md, AGENTS.md and "
        "records/*.md (or [tool.fidelity.docs] paths). Folders are searched for Markdown, "
        "skipping hidden folders, exclude globs and what git ignores. Findings print as "
        "path:line:col: CODE message, one per line.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="files or folders")
    options.json(parser, "findings")
    parser.add_argument(
        "--sarif", type=Path, metavar="PATH", help="also write SARIF 2.1.0 ('-' for stdout only)"
    )
    parser.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="'github' prints GitHub Actions annotations (::error file=...,line=...,col=...::)",
    )
    parser.add_argument(
        "--root",
        "--repo",
        dest="root",
        type=Path,
        metavar="DIR",
        help="repository root holding pyproject.toml and the baseline (default: nearest "
        "ancestor with .git); --repo is the same option, as other commands spell it",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="read the configuration from FILE (the [tool.fidelity.docs] keys at its top "
        "level) instead of pyproject.toml",
    )
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument(
        "--update-baseline",
        "--update-ratchets",
        dest="update_baseline",
        action="store_true",
        help="remove fixed findings from the baseline file and convert count entries to "
        "fingerprints (never adds a finding); --update-ratchets is the old name",
    )
    baseline.add_argument(
        "--record-baseline",
        "--record-ratchets",
        dest="record_baseline",
        action="store_true",
        help="adopt on a repository with findings: also list today's findings for every "
        "page and code the baseline has no entry for (never adds to an entry); "
        "--record-ratchets is the old name",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or keep per-page results in .fidelity/cache/ under the root",
    )
    parser.set_defaults(handler=_check_docs)


def _say(line: str) -> None:
    """One line on standard error, as written (rich is not imported to print it)."""
    sys.stderr.write(f"fidelity check-docs: {line}\n")
    sys.stderr.flush()


def _cache(root: Path | None) -> tuple[Path | None, bytes | None]:
    """The cache folder and the machine's key that signs it; (None, None), said once, when
    either cannot be had (the check runs the same, only slower)."""
    from checkers import discover
    from fidelity import cachekey  # only when the cache is on

    top = root if root is not None else discover.find_root(Path.cwd())
    try:
        from fidelity import workdir  # a run with a cache alone: datetime, json, fcntl

        folder = workdir.cache(top, "check-docs")
    except (OSError, UsageError) as exc:
        _say(f"no cache ({exc}); checking every page")
        return None, None
    key, why = cachekey.load()
    if key is None:
        _say(f"no cache: {why}; checking every page")
        return None, None
    return folder, key


def _ignored(root: Path) -> list[str] | None:
    """git's ignored paths under root, imported when first asked (git's runner, subprocess
    and the process registry are not needed to check pages named on the command line)."""
    from fidelity.git import worktrees

    return worktrees.ignored_paths(root)


def _check_docs(args: argparse.Namespace, console: Console) -> int:
    """Prints straight to sys.stdout and sys.stderr, never through `console`: making it
    would import rich, which costs more than checking a small page."""
    # imported before the collector freezes what exists
    import checkers.report  # noqa: F401
    import checkers.tree  # noqa: F401

    with _fewer_collections():
        return _check_pages(args)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Parsing allocates many short-lived objects: keep the collector from re-scanning the
    modules just imported each time (measured: ~20% of the run on a 1,000-page tree).
    A page's tokens hold no reference cycles (they are freed as soon as the page is
    checked), so a larger first generation only makes the collector run less often:
    5,469 collections took 8% of a 1,000-page first run at 700, 4 at 10,000. The threshold
    is restored after, for a caller in the same process (a test, a hook); what was frozen
    stays frozen: unfreezing it made the collection at exit scan it (5 ms of an 85 ms
    one-page check)."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def _check_pages(args: argparse.Namespace) -> int:
    from checkers import report
    from checkers.tree import Options, check_tree

    options.check_writable(args.json, args.sarif)
    mode = "record" if args.record_baseline else "update" if args.update_baseline else "check"
    cache_dir, cache_key = (None, None) if args.no_cache else _cache(args.root)
    run = Options(
        root=args.root,
        config_file=args.config,
        ratchets=mode,
        ignored=_ignored,
        cache_dir=cache_dir,
        cache_key=cache_key,
        salt=__version__,
    )
    result = check_tree(args.paths, Path.cwd(), options=run)
    for note in result.notes:
        _say(note)
    if args.json is not None:  # built only when asked: each is a copy of every finding
        options.write(args.json, report.json_text(result))
    if args.sarif is not None:
        options.write(args.sarif, report.sarif_text(result, __version__))
    if not (options.to_stdout(args.json) or options.to_stdout(args.sarif)):
        if args.format == "github":
            from fidelity import github

            notes = [
                github.Annotation(str(f.code), f.message, f.path, f.line, f.col)
                for f in result.findings
            ]
            github.emit(sys.stdout, notes)
            report.render_summary(result, sys.stdout)
        else:
            report.render(result, sys.stdout)
    sys.stdout.flush()
    return 1 if result.findings else 0
