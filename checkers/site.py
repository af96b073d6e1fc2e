"""The files a page and its links point into: read once per run, never outside the root.

The only checker module that opens files. Paths are root-relative POSIX strings; a path
whose real location (symlinks followed) is outside the repository root is reported, never
opened. Reads are bounded by ``max_page_bytes``: a larger file is not parsed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkers.blake import hex_digest
from checkers.cache import Cache, digest
from checkers.linkcheck import DEFERRED, Anchors, Deferred, Kind, Unreadable
from checkers.parsed import Parsed, ParserFailed, TooDense
from checkers.slugs import anchors

MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Source:
    """A page's bytes decoded, or why it could not be read (``text`` is then None)."""

    text: str | None
    problem: str = ""
    digest: str = ""
    bad_utf8: tuple[int, int] | None = None  # line and column of the first bad byte


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and character column of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", errors="replace"))
    return data.count(b"\n", 0, offset) + 1, column + 1


def not_parsed(exc: ParserFailed) -> str:
    """Why a page's anchors are unknown when the parser failed on it."""
    return f"could not be parsed (markdown-it-py raised {exc})"


def anchors_key(value: Anchors) -> str:
    """A short stable text for an anchors answer, recorded as a cache dependency."""
    if value is None:
        return "none"
    if isinstance(value, Deferred):
        return "deferred"  # never recorded: a deferred answer is resolved before it is kept
    if isinstance(value, Unreadable):
        return "unreadable:" + value.reason
    return hex_digest("\n".join(sorted(value)).encode(), 16)


BYTES_PER_TOKEN = 8  # a page at the cap must average 8 bytes a token (ours: 5 to 14)
MIN_TOKENS = 1_000


class Site:
    """A repository root with memos for what links ask: kinds, anchors and line counts.

    With a cache, anchors of unchanged link targets come from it, and ``watch`` records
    what a page's check asked (its dependencies) so that ``unchanged`` can tell later.
    """

    def __init__(self, root: Path, max_bytes: int = 4_000_000, cache: Cache | None = None) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.max_bytes = max_bytes
        self.cache = cache
        self._kinds: dict[str, Kind] = {}
        self._anchors: dict[str, Anchors] = {}
        self._anchor_keys: dict[str, str] = {}  # anchors_key per file: it sorts and hashes
        self._lines: dict[str, int | None] = {}
        self._log: dict[str, dict[str, Any]] | None = None
        self.pending: set[str] = set()  # pages this run parses later: their anchors wait
        self._digests: dict[str, str | None] = {}

    @property
    def token_budget(self) -> int:
        """Tokens a page may push: one per BYTES_PER_TOKEN bytes of max_page_bytes, and
        MIN_TOKENS at least (a small cap is about size, not density)."""
        return max(self.max_bytes // BYTES_PER_TOKEN, MIN_TOKENS)

    def too_dense(self) -> str:
        return (
            f"holds more than {self.token_budget:,} Markdown tokens (one per "
            f"{BYTES_PER_TOKEN} bytes of max_page_bytes {self.max_bytes:,})"
        )

    def watch(self) -> None:
        """Start recording the dependencies of one page's check."""
        self._log = {"kind": {}, "anchors": {}, "lines": {}}

    def watched(self) -> dict[str, dict[str, Any]]:
        """Stop recording and return what was asked, with the answers."""
        log, self._log = self._log or {}, None
        return log

    def unchanged(self, deps: dict[str, dict[str, Any]]) -> bool:
        """Whether every recorded answer is still the same."""
        try:
            return (
                all(self.kind(rel).value == v for rel, v in deps["kind"].items())
                and all(self._anchors_now(rel) == v for rel, v in deps["anchors"].items())
                and all(self.line_count(rel) == v for rel, v in deps["lines"].items())
            )
        except (KeyError, AttributeError, TypeError):
            return False

    def kind(self, rel: str) -> Kind:
        """File, folder, missing, or a path that leaves the repository through a symlink."""
        if rel not in self._kinds:
            self._kinds[rel] = self._kind(rel)
        if self._log is not None:
            self._log["kind"][rel] = self._kinds[rel].value
        return self._kinds[rel]

    def _kind(self, rel: str) -> Kind:
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            return Kind.OUTSIDE
        real = os.path.realpath(self.root / rel)
        if not _within(real, self.real_root):
            return Kind.OUTSIDE
        try:
            mode = os.stat(real).st_mode
        except (OSError, ValueError):
            return Kind.MISSING
        return Kind.DIR if (mode & 0o170000) == 0o040000 else Kind.FILE

    def read(self, rel: str) -> Source:
        """A page's text; never reads outside the root or more than ``max_bytes``."""
        kind = self.kind(rel)
        if kind is Kind.OUTSIDE:
            return Source(None, "is a symlink to outside the repository; it is not read")
        if kind is not Kind.FILE:
            return Source(None, "cannot be read (a folder, a broken link or a symlink loop)")
        try:
            with open(self.root / rel, "rb") as handle:
                data = handle.read(self.max_bytes + 1)
        except OSError as exc:
            return Source(None, f"cannot be read: {exc.strerror}")
        if len(data) > self.max_bytes:
            size = os.path.getsize(self.root / rel)
            return Source(None, f"is {size:,} bytes, over max_page_bytes {self.max_bytes:,}")
        content = digest(data) if self.cache is not None else ""
        data = data.removeprefix(BOM)  # GitHub does not render it; a heading after it is one
        try:
            return Source(data.decode("utf-8"), digest=content)
        except UnicodeDecodeError as exc:
            return Source(
                data.decode("utf-8", errors="replace"),
                bad_utf8=_position(data, exc.start),
                digest=content,
            )

    def digest_of(self, rel: str) -> str | None:
        """The content hash of a readable file within ``max_bytes`` (read once), else None."""
        if rel not in self._digests:
            self._digests[rel] = None
            if self.kind(rel) is Kind.FILE:
                try:
                    with open(self.root / rel, "rb") as handle:
                        data = handle.read(self.max_bytes + 1)
                except OSError:
                    return None
                if len(data) <= self.max_bytes:
                    self._digests[rel] = digest(data)
        return self._digests[rel]

    def remember(self, rel: str, parsed: Parsed | frozenset[str] | Unreadable) -> None:
        """Seed the anchors memo with a page already parsed (or found in the cache), or
        that could not be: links into it then say why its anchors are unknown."""
        self._anchors[rel] = parsed if not isinstance(parsed, Parsed) else anchors(parsed)
        self._anchor_keys.pop(rel, None)

    def _anchors_now(self, rel: str) -> str:
        self.anchors_of(rel, defer=False)
        return self._anchors_key(rel)

    def anchors_of(self, rel: str, defer: bool = True) -> Anchors:
        """Anchors of a Markdown file; None for other files (their fragments go unchecked);
        DEFERRED for a page this run has yet to parse (parsing it twice would cost more)."""
        if defer and rel in self.pending and rel not in self._anchors:
            return DEFERRED
        if rel not in self._anchors:
            log, self._log = self._log, None  # reading a target is not the page's dependency
            try:
                self._anchors[rel] = self._read_anchors(rel)
            finally:
                self._log = log
        if self._log is not None:
            self._log["anchors"][rel] = self._anchors_key(rel)
        return self._anchors[rel]

    def _anchors_key(self, rel: str) -> str:
        """``anchors_key`` of a file's anchors, once per file: it was worked out on every
        link into it (60,000 links into a page of 2,000 anchors: 10 CPU-s more with the
        cache)."""
        if rel not in self._anchor_keys:  # remember() drops it when the anchors are replaced
            self._anchor_keys[rel] = anchors_key(self._anchors[rel])
        return self._anchor_keys[rel]

    def _read_anchors(self, rel: str) -> Anchors:
        if not rel.lower().endswith(MARKDOWN_SUFFIXES) or self.kind(rel) is not Kind.FILE:
            return None
        if self.cache is not None:
            content = self.digest_of(rel)
            known = self.cache.target_anchors(rel, content) if content else None
            if known is not None:
                return known
        source = self.read(rel)
        if source.text is None:
            return Unreadable(source.problem)
        from checkers.markdown import parse_headings  # as check.parse: only when parsing

        try:
            found = anchors(parse_headings(source.text, self.token_budget))
        except TooDense:
            return Unreadable(self.too_dense())
        except ParserFailed as exc:
            return Unreadable(not_parsed(exc))
        if self.cache is not None:
            self.cache.put_anchors(rel, source.digest, found)
        return found

    def line_count(self, rel: str) -> int | None:
        """Lines of a file, as GitHub numbers them (``#L5``); None if it cannot be read."""
        if rel not in self._lines:
            self._lines[rel] = self._count_lines(rel)
        if self._log is not None:
            self._log["lines"][rel] = self._lines[rel]
        return self._lines[rel]

    def _count_lines(self, rel: str) -> int | None:
        if self.kind(rel) is not Kind.FILE:
            return None
        count, last = 0, b"\n"
        try:
            with open(self.root / rel, "rb") as handle:
                while chunk := handle.read(1 << 20):
                    count += chunk.count(b"\n")
                    last = chunk[-1:]
        except OSError:
            return None
        return count + (last != b"\n")

    def anchor_files(self) -> tuple[str, ...]:
        """Files whose anchors were read or remembered so far (for reports and benchmarks)."""
        return tuple(self._anchors)
