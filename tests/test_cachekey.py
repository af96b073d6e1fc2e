"""The machine's cache key: made once outside the repository, refused when it is not a
plain file holding a secret, so that a cache is never signed with a guessable key."""

from __future__ import annotations

import os
from pathlib import Path

from fidelity.cachekey import ENV, MIN_BYTES, key_path, load


def test_the_key_lives_where_the_environment_says(tmp_path: Path) -> None:
    assert key_path({ENV: str(tmp_path / "k")}) == tmp_path / "k"
    assert key_path({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "fidelity" / "cache.key"
    relative = {"XDG_CACHE_HOME": "rel", "HOME": str(tmp_path)}  # XDG says: ignore it
    assert key_path(relative) == tmp_path / ".cache" / "fidelity" / "cache.key"


def test_the_key_is_made_once_and_then_kept(tmp_path: Path) -> None:
    env = {ENV: str(tmp_path / "deep" / "cache.key")}
    first, why = load(env)
    assert first is not None and len(first) == 64 and why == ""
    assert load(env) == (first, "")
    assert oct((tmp_path / "deep" / "cache.key").stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["cache.key"]  # no temp left


def test_a_short_key_or_a_special_file_is_refused_without_blocking(tmp_path: Path) -> None:
    short = tmp_path / "short.key"
    short.write_text("x" * (MIN_BYTES - 1) + "\n")
    key, why = load({ENV: str(short)})
    assert key is None
    assert why == (
        f"the cache key {short} must hold 16 to 4,096 bytes; delete it (a new one is made) "
        f"or set {ENV} to a file of your own to keep a cache"
    )
    short.write_text("x" * MIN_BYTES + "\n")
    assert load({ENV: str(short)}) == (b"x" * MIN_BYTES, "")
    fifo = tmp_path / "fifo.key"
    os.mkfifo(fifo)
    key, why = load({ENV: str(fifo)})  # opened without blocking, then refused
    assert key is None and "not a regular file" in why
