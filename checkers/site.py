"""The files links point into: existence and anchors, read once per run.

The only checker module that reads files other than the page being checked; everything
else is pure over a parse. Paths are root-relative POSIX strings.
"""

from __future__ import annotations

from pathlib import Path

from checkers.links import MARKDOWN_SUFFIXES
from checkers.markdown import Parsed, parse_headings
from checkers.slugs import anchors


class Site:
    """A repository root with caches for ``exists`` and ``anchors_of``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._exists: dict[str, bool] = {}
        self._anchors: dict[str, frozenset[str] | None] = {}

    def exists(self, rel: str) -> bool:
        if rel not in self._exists:
            self._exists[rel] = (self.root / rel).exists()
        return self._exists[rel]

    def remember(self, rel: str, parsed: Parsed) -> None:
        """Seed the anchor cache with a page already parsed for checking."""
        self._anchors[rel] = anchors(parsed)

    def anchors_of(self, rel: str) -> frozenset[str] | None:
        """Anchors of a Markdown file; None for other files (their fragments go unchecked)."""
        if rel not in self._anchors:
            path = self.root / rel
            if path.suffix.lower() in MARKDOWN_SUFFIXES and path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                self._anchors[rel] = anchors(parse_headings(text))
            else:
                self._anchors[rel] = None
        return self._anchors[rel]

    def anchor_files(self) -> tuple[str, ...]:
        """Files whose anchors were read or remembered so far (for reports and benchmarks)."""
        return tuple(self._anchors)
