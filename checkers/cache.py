"""Per-page results kept between runs, so that an unchanged tree is not parsed again.

One JSON file in a folder the caller names (fidelity's command line passes
``.fidelity/cache/``, which git ignores). An entry is used only when everything its result
depends on is unchanged: the salt (fidelity's version, the checkers' own source, the
markdown-it-py version), the whole configuration, the page's path and bytes, and what its
links found: the kind of every path they probed, the anchors of every Markdown file they
pointed into (by that file's bytes) and the line counts of ``?plain=1`` targets. A change
to any of them re-checks the page. Ratchets are applied after the cache, every run.
A cache that cannot be read is ignored; one that cannot be written is not kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import markdown_it

from checkers.findings import Code, Finding

FILE = "check-docs.json"
FORMAT = 1


def digest(data: bytes) -> str:
    """The content hash that keys a file's entries."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@functools.cache
def code_salt() -> str:
    """The checkers' own source and the parser's version: a new build invalidates entries."""
    h = hashlib.blake2b(digest_size=16)
    package = resources.files("checkers")
    for item in sorted(package.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".py"):
            h.update(item.name.encode() + b"\0" + item.read_bytes())
    for item in sorted(package.joinpath("schemas").iterdir(), key=lambda p: p.name):
        h.update(item.name.encode() + b"\0" + item.read_bytes())
    h.update(markdown_it.__version__.encode())
    return h.hexdigest()


class Cache:
    """Entries for pages (findings, anchors, dependencies) and for link targets (anchors)."""

    def __init__(self, folder: Path, salt: str, fingerprint: str) -> None:
        self.path = folder / FILE
        self.key = f"{FORMAT}:{salt}:{code_salt()}:{fingerprint}"
        self.pages: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self.hits = 0
        self.dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("key") == self.key:
            pages, anchors = data.get("pages"), data.get("anchors")
            self.pages = pages if isinstance(pages, dict) else {}
            self.anchors = anchors if isinstance(anchors, dict) else {}

    def page(self, rel: str, content: str) -> dict[str, Any] | None:
        """The page's entry when it was made from these bytes and is well-formed."""
        entry = self.pages.get(rel)
        if isinstance(entry, dict) and entry.get("digest") == content and _valid(entry):
            return entry
        return None

    def put_page(
        self,
        rel: str,
        content: str,
        findings: list[Finding],
        anchors: frozenset[str],
        deps: dict[str, dict[str, Any]],
    ) -> None:
        self.pages[rel] = {
            "digest": content,
            "findings": [[f.line, f.col, str(f.code), f.message] for f in findings],
            "anchors": sorted(anchors),
            "deps": deps,
        }
        self.put_anchors(rel, content, anchors)
        self.dirty = True

    def target_anchors(self, rel: str, content: str) -> frozenset[str] | None:
        entry = self.anchors.get(rel)
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and entry[0] == content
            and isinstance(entry[1], list)
            and all(isinstance(a, str) for a in entry[1])
        ):
            return frozenset(entry[1])
        return None

    def put_anchors(self, rel: str, content: str, anchors: frozenset[str]) -> None:
        if self.target_anchors(rel, content) != anchors:
            self.anchors[rel] = [content, sorted(anchors)]
            self.dirty = True

    def save(self) -> bool:
        """Write atomically; False when the folder cannot be written (the run goes on)."""
        if not self.dirty:
            return True
        data = {"key": self.key, "pages": self.pages, "anchors": self.anchors}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".check-docs.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle, separators=(",", ":"))
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return False
        return True


_CODES = frozenset(str(c) for c in Code)


def _valid(entry: dict[str, Any]) -> bool:
    """Shape check, so that a damaged cache file is a miss rather than a crash."""
    findings, anchors, deps = entry.get("findings"), entry.get("anchors"), entry.get("deps")
    return (
        isinstance(findings, list)
        and all(
            isinstance(f, list)
            and len(f) == 4
            and all(isinstance(v, int) and not isinstance(v, bool) for v in f[:2])
            and f[2] in _CODES
            and isinstance(f[3], str)
            for f in findings
        )
        and isinstance(anchors, list)
        and all(isinstance(a, str) for a in anchors)
        and isinstance(deps, dict)
        and all(isinstance(deps.get(k), dict) for k in ("kind", "anchors", "lines"))
    )


def findings_of(entry: dict[str, Any], path: str) -> list[Finding]:
    """An entry's findings, shown with this run's display path."""
    return [
        Finding(path, line, col, Code(code), message)
        for line, col, code, message in entry["findings"]
    ]
