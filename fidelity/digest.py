"""The sha256 of a small text (a case table, one case's definition) without OpenSSL.

`hashlib` loads OpenSSL's library on import: 2.4 ms of a command whose whole budget beyond
Python's start-up is 60 ms (`cases list`, issue 39). CPython's own sha256, which `hashlib`
itself falls back to, hashes a few kilobytes as fast; large files are still hashed through
`hashlib` (`matrix.cases.files.sha256_file`), where OpenSSL is the faster.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.cache
def _sha256() -> Callable[[bytes], Any]:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # CPython 3.12 on
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11
        except ImportError:  # another interpreter: hashlib's, whatever it loads
            from hashlib import sha256
    return sha256  # type: ignore[no-any-return]


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest()."""
    return str(_sha256()(data).hexdigest())
