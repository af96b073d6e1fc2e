"""Per-page results kept between runs, so that an unchanged tree is not parsed again.

A cache can only save time, never change a verdict. One file in a folder the caller names
(fidelity's command line passes ``.fidelity/cache/``, which git ignores), signed with a key
the caller keeps outside the repository (a keyed BLAKE2b): a file that does not carry this
key's signature (edited by hand, restored from another machine or branch) is ignored and
every page is checked. A file that is not a regular file (a FIFO, socket, device, folder or
symlink) or is over ``MAX_BYTES`` is refused from its ``lstat`` alone, never opened.

An authentic entry is used only when everything its result depends on is unchanged: the
salt (fidelity's version, the checkers' own source, the markdown-it-py, Python and Unicode
versions), the whole configuration, the page's path and bytes, and what its links found:
the kind of every path they probed, the anchors of every Markdown file they pointed into
(by that file's bytes) and the line counts of ``?plain=1`` targets. A change to any of them
re-checks the page. Ratchets are applied after the cache, every run. Why a cache was
ignored or not kept is in ``notes``, for the caller to say; it is never a finding.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import stat
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checkers import blake
from checkers.blake import blake2b, hex_digest, same
from checkers.findings import Code, Finding

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FILE = "check-docs.json"
FORMAT = 4
MAGIC = b"fidelity-check-docs-cache-4"  # 4: signed with a keyed BLAKE2b (3: HMAC-SHA256)
MAX_BYTES = 64 * 1024 * 1024  # 60 times the cache of 1,000 pages of 8 KB (1.1 MB measured)


def digest(data: bytes) -> str:
    """The content hash that keys a file's entries."""
    return hex_digest(data, 16)


@functools.cache
def code_salt() -> str:
    """The checkers' own source and what their answers depend on beyond it (markdown-it-py,
    Python and its Unicode tables, which the slugs use): a new build invalidates entries."""
    h = blake2b(digest_size=16)
    for name, data in _own_files():
        h.update(name.encode() + b"\0" + data)
    h.update(_markdown_it_source() + b"\0")
    for version in (sys.version, unicodedata.unidata_version):
        h.update(version.encode() + b"\0")
    return h.hexdigest()


def _name(item: Traversable) -> str:
    return item.name


def _own_files() -> list[tuple[str, bytes]]:
    """(name, bytes) of the checkers' ``.py`` files, then of their schemas, by name: read
    from the package's folder, else through importlib.resources (a zipped install; its
    imports, tempfile among them, cost about 4 ms of every run's start-up)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    schemas = os.path.join(folder, "schemas")
    if not os.path.isdir(schemas):
        from importlib import resources

        package = resources.files("checkers")
        code = sorted((p for p in package.iterdir() if p.name.endswith(".py")), key=_name)
        shipped = sorted(package.joinpath("schemas").iterdir(), key=_name)
        return [(item.name, item.read_bytes()) for item in (*code, *shipped)]
    found = []
    for where, names in ((folder, os.listdir(folder)), (schemas, os.listdir(schemas))):
        for name in sorted(names):
            path = os.path.join(where, name)
            if (where == schemas or name.endswith(".py")) and os.path.isfile(path):
                with open(path, "rb") as handle:
                    found.append((name, handle.read()))
    return found


def _markdown_it_source() -> bytes:
    """markdown-it-py's ``__init__.py`` (it holds ``__version__``), read without importing the
    package: a re-run answered from the cache then never loads markdown-it (~30 ms)."""
    spec = importlib.util.find_spec("markdown_it")
    if spec is not None and spec.origin and os.path.isfile(spec.origin):
        with open(spec.origin, "rb") as handle:
            return handle.read()
    import markdown_it  # a zipped or frozen install: its version, by importing it

    return markdown_it.__version__.encode()


_KINDS = (
    (stat.S_ISLNK, "a symlink"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


def _refusal(mode: int, size: int) -> str:
    """Why a file with this ``stat`` is not read as a cache, or "" when it may be."""
    for test, name in _KINDS:
        if test(mode):
            return f"is {name}, not a regular file"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    if size > MAX_BYTES:
        return f"is {size:,} bytes, over the cache's cap of {MAX_BYTES:,}"
    return ""


def read_bounded(path: Path) -> tuple[bytes | None, str]:
    """The bytes of a regular file of at most ``MAX_BYTES``; else None and why ("" when it
    does not exist). Looks with ``lstat`` before opening, and opens without following a
    symlink or blocking on a FIFO put there in between."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"cannot be examined ({exc.strerror})"
    why = _refusal(found.st_mode, found.st_size)
    if why:
        return None, why
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror})"
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(fd)
        why = _refusal(found.st_mode, found.st_size)
        data = b"" if why else handle.read(MAX_BYTES + 1)
    if why or len(data) > MAX_BYTES:
        return None, why or f"grew over the cache's cap of {MAX_BYTES:,} bytes while read"
    return data, ""


class Cache:
    """Entries for pages (findings, anchors, dependencies) and for link targets (anchors)."""

    def __init__(self, folder: Path, salt: str, fingerprint: str, key: bytes) -> None:
        self.path = folder / FILE
        self.key = f"{FORMAT}:{salt}:{code_salt()}:{fingerprint}"
        self.pages: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self.hits = 0
        self.dirty = False
        self.notes: list[str] = []
        self._secret = key
        data, why = read_bounded(self.path)
        if data is not None:
            data, why = self._verified(data)
        if why:
            after = (
                "remove that folder to keep a cache"
                if why.startswith("is a folder")
                else "a fresh cache replaces it"
            )
            self._note(f"ignored: {self.path} {why}; every page is checked ({after})")
        if not data:
            return
        try:
            loaded = json.loads(data)
        except ValueError:
            loaded = None  # signed by this key yet unreadable: a bug, or a new format
        if isinstance(loaded, dict) and loaded.get("key") == self.key:
            pages, anchors = loaded.get("pages"), loaded.get("anchors")
            self.pages = pages if isinstance(pages, dict) else {}
            self.anchors = anchors if isinstance(anchors, dict) else {}

    def _verified(self, data: bytes) -> tuple[bytes | None, str]:
        """The payload under a valid signature, else None and why."""
        header, _, payload = data.partition(b"\n")
        magic, _, signature = header.partition(b" ")
        if magic != MAGIC:
            return None, "is not a check-docs cache of this fidelity version"
        if not same(signature, blake.signature(self._secret, payload)):
            return None, (
                "is not signed with this machine's cache key (edited, or made on another "
                "machine or from another key)"
            )
        return payload, ""

    def _note(self, what: str) -> None:
        if not self.notes:  # one line per run: the first reason is the one that matters
            self.notes.append(f"check-docs cache {what}")

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
            "findings": [
                [f.line, f.col, str(f.code), f.message, f.subject, list(f.hint)] for f in findings
            ],
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
        """Sign and write atomically (replacing whatever the path held, never writing
        through it); False, with a note, when it is too large or cannot be written."""
        if not self.dirty:
            return True
        data = {"key": self.key, "pages": self.pages, "anchors": self.anchors}
        payload = json.dumps(data, separators=(",", ":")).encode()
        if len(payload) > MAX_BYTES:
            self._note(
                f"not kept: {len(payload):,} bytes, over its cap of {MAX_BYTES:,}; check fewer "
                "pages per run, or pass --no-cache"
            )
            return False
        import tempfile  # here: a run that changes nothing writes nothing

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".check-docs.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    signed = blake.signature(self._secret, payload)
                    handle.write(MAGIC + b" " + signed + b"\n" + payload)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            self._note(f"not kept: cannot write {self.path} ({exc.strerror}); remove what is there")
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
            and len(f) == 6
            and all(isinstance(v, int) and not isinstance(v, bool) for v in f[:2])
            and f[2] in _CODES
            and all(isinstance(v, str) for v in f[3:5])
            and isinstance(f[5], list)
            and all(isinstance(v, str) for v in f[5])
            for f in findings
        )
        and isinstance(anchors, list)
        and all(isinstance(a, str) for a in anchors)
        and isinstance(deps, dict)
        and all(isinstance(deps.get(k), dict) for k in ("kind", "anchors", "lines"))
    )


def findings_of(entry: dict[str, Any], path: str) -> list[Finding]:
    """An entry's findings, shown with this run's display path (a broken fragment's hint
    still to be worked out if it is shown: the entry keeps what it needs)."""
    return [
        Finding(path, line, col, Code(code), message, subject, hint=tuple(hint))
        for line, col, code, message, subject, hint in entry["findings"]
    ]
