"""BLAKE2b for check-docs' hashes and its cache's signature, without loading OpenSSL.

``hashlib`` loads OpenSSL's library when it is imported, and ``hmac`` imports ``hashlib``:
about 4 ms of a one-page ``check-docs``, whose whole budget beyond Python's start-up is
60 ms (issue 39). Neither is needed: ``hashlib.blake2b`` is CPython's own
``_blake2.blake2b`` whichever library is loaded, and a keyed BLAKE2b is a MAC by design
(RFC 7693), so the cache is signed with it instead of HMAC-SHA256.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # another interpreter: hashlib's, whatever it loads
    from hashlib import blake2b
try:
    from _operator import _compare_digest as compare_digest  # what hmac falls back to
except ImportError:
    from hmac import compare_digest  # type: ignore[no-redef]

KEY_BYTES = 64  # the longest key BLAKE2b takes


def hex_digest(data: bytes, size: int) -> str:
    """``hashlib.blake2b(data, digest_size=size).hexdigest()``."""
    return str(blake2b(data, digest_size=size).hexdigest())


def signature(key: bytes, payload: bytes) -> bytes:
    """A keyed BLAKE2b of ``payload`` (32 bytes, as hex); a key over 64 bytes is hashed to
    64 first, as HMAC does with a key longer than its block."""
    if len(key) > KEY_BYTES:
        key = blake2b(key).digest()
    return blake2b(payload, key=key, digest_size=32).hexdigest().encode()


def same(a: bytes, b: bytes) -> bool:
    """``a == b`` in time that does not depend on where they differ."""
    return bool(compare_digest(a, b))


__all__ = ["blake2b", "hex_digest", "same", "signature"]
