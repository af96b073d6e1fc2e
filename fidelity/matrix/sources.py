"""An output to compare, given as a file in the run directory or as bytes (in tests)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

Source = Path | bytes


def size(source: Source) -> int:
    return source.stat().st_size if isinstance(source, Path) else len(source)


@contextmanager
def opened(source: Source) -> Iterator[BinaryIO]:
    if isinstance(source, bytes):
        yield io.BytesIO(source)
        return
    with source.open("rb") as f:
        yield f


def read(source: Source) -> bytes:
    return source.read_bytes() if isinstance(source, Path) else source
