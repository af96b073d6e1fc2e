"""`check-docs` over a tree: find the root and its configuration, the pages, then check."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from checkers import discover
from checkers.cache import Cache
from checkers.check import Result, check_pages
from checkers.config import DocsConfig, load
from checkers.errors import NothingToCheck

Ignored = Callable[[Path], Sequence[str] | None]


@dataclass(frozen=True, slots=True)
class Options:
    """How to run: where, with which configuration, what to do with ratchets and the cache.

    ``ignored(root)`` lists what the version control ignores (folders end in ``/``), or
    None; ``cache_dir`` keeps results between runs, signed with ``cache_key`` (a secret
    kept outside the repository: no key, no cache); ``salt`` is the caller's version.
    """

    root: Path | None = None
    config_file: Path | None = None
    ratchets: str = "check"
    ignored: Ignored | None = None
    cache_dir: Path | None = None
    cache_key: bytes | None = None
    salt: str = ""


def _excluder(root: Path, config: DocsConfig, ignored: Ignored | None) -> discover.Excluded:
    """What the configuration excludes and the version control ignores. The ignored list
    (a git process) is asked for on the first question only: files named on the command
    line are checked whatever it says, and a one-page check starts without it."""
    listed: list[tuple[frozenset[str], tuple[str, ...]]] = []

    def excluded(rel: str) -> bool:
        if not listed:
            found = ignored(root) if ignored is not None and config.gitignore else None
            listed.append(
                (
                    frozenset(p for p in found or () if not p.endswith("/")),
                    tuple(p for p in found or () if p.endswith("/")),
                )
            )
        files, folders = listed[0]
        if rel in files or (folders and (rel + "/").startswith(folders)):
            return True
        return config.excluded(rel)

    return excluded


def check_tree(
    paths: Sequence[str],
    cwd: Path,
    root: Path | None = None,
    update_ratchets: bool = False,
    options: Options | None = None,
) -> Result:
    """The pages named (or configured) under root; NothingToCheck when there are none."""
    options = options or Options(root=root, ratchets="update" if update_ratchets else "check")
    top = (options.root or discover.find_root(cwd)).resolve()
    config = load(top, options.config_file)
    excluded = _excluder(top, config, options.ignored)
    pages = discover.pages(top, cwd, paths, config.paths, excluded)
    if not pages:
        named = ", ".join(paths) if paths else ", ".join(config.paths)
        raise NothingToCheck(
            f"nothing to check: no Markdown files among {named} under {top}; "
            "pass PATHS or set [tool.fidelity.docs] paths"
        )
    cache = None
    if options.cache_dir is not None and options.cache_key:
        cache = Cache(options.cache_dir, options.salt, config.fingerprint, options.cache_key)
    return check_pages(top, pages, config, cache=cache, ratchet_mode=options.ratchets)
