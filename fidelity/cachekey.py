"""The machine's secret that signs what fidelity caches inside a repository.

A cache under the repository can be edited by hand or restored from another branch or
machine; fidelity must only trust what it wrote itself. So cached results are signed with a
key kept outside every repository: the file ``$FIDELITY_CACHE_KEY_FILE`` names, else
``$XDG_CACHE_HOME/fidelity/cache.key``, else ``~/.cache/fidelity/cache.key``, made with mode
0600 on first use. Without a key there is no cache, and nothing else changes. Not a defence
against someone who can read the key file (the same user, or root).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

ENV = "FIDELITY_CACHE_KEY_FILE"
NAME = "cache.key"
MIN_BYTES = 16
MAX_BYTES = 4096


def key_path(environ: Mapping[str, str]) -> Path:
    """Where the key is kept: the override, else the XDG cache folder, else ~/.cache."""
    if environ.get(ENV):
        return Path(environ[ENV])
    xdg = environ.get("XDG_CACHE_HOME", "")
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    base = Path(xdg) if os.path.isabs(xdg) else home / ".cache"
    return base / "fidelity" / NAME


def _read(path: Path) -> bytes:
    """The key file's bytes (a regular file, symlinks followed: secret mounts are links)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(0, "not a regular file")
        return handle.read(MAX_BYTES + 1)


def _make(path: Path) -> None:
    """Write a new random key with mode 0600, appearing whole or not at all (a concurrent
    first run keeps whichever key was linked first)."""
    import tempfile  # here: the key is made once, read on every other run

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cache.key.")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(os.urandom(32).hex() + "\n")  # secrets.token_hex(32), without OpenSSL
        with contextlib.suppress(FileExistsError):  # another run made it first: use that one
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


def load(environ: Mapping[str, str] | None = None) -> tuple[bytes | None, str]:
    """The key, made on first use; else None and a sentence saying why and what to do."""
    hint = f"set {ENV} to a file of your own to keep a cache"
    try:
        path = key_path(os.environ if environ is None else environ)
    except RuntimeError as exc:  # Path.home() with no HOME and no password entry
        return None, f"no home folder for the cache key ({exc}); {hint}"
    try:
        try:
            data = _read(path)
        except FileNotFoundError:
            _make(path)
            data = _read(path)
    except OSError as exc:
        return None, f"cannot read or make the cache key {path} ({exc.strerror or exc}); {hint}"
    key = data.strip()
    if len(data) > MAX_BYTES or len(key) < MIN_BYTES:
        return None, (
            f"the cache key {path} must hold {MIN_BYTES} to {MAX_BYTES:,} bytes; delete it "
            f"(a new one is made) or {hint}"
        )
    return key, ""
