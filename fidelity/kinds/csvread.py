"""A CSV/TSV output read in chunks of rows, each a 2-D array of cell texts.

Two readers give the same cells. The plain one serves the common file (no quote, carriage
return, NUL or byte-order mark, no blank line, every line with the header's number of
fields, unique non-empty column names): it splits whole chunks at C speed and needs no
pandas. Anything else goes to pandas' C parser, as before. The plain reader gives up
(`NotPlain`) at the first chunk it cannot read the way pandas would; the caller then
starts over with pandas, so a file is read by one reader from its first row to its last.
Both yield `CHUNK_ROWS` rows a chunk (the last may be shorter), so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import numpy as np

from fidelity.kinds.sources import Source, opened

CHUNK_ROWS = 50_000

Chunk = tuple[tuple[str, ...], np.ndarray[Any, Any]]  # column names, rows x columns of str


class NotPlain(Exception):
    """The file needs pandas' parser: quoting, ragged rows, blank lines and such."""


_REFUSED = (b'"', b"\r", b"\x00")


def _cells(lines: list[bytes], sep: str, width: int) -> np.ndarray[Any, Any]:
    if not lines:
        return np.empty((0, width), dtype=object)
    data = b"".join(lines)
    if any(mark in data for mark in _REFUSED) or b"\n\n" in data or data.startswith(b"\n"):
        raise NotPlain
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise NotPlain from None
    body = text[:-1] if text.endswith("\n") else text
    if not _rectangular(data[:-1] if data.endswith(b"\n") else data, sep, width):
        raise NotPlain
    flat = body.replace("\n", sep).split(sep)
    return np.array(flat, dtype=object).reshape(-1, width)


def _rectangular(data: bytes, sep: str, width: int) -> bool:
    """Every line of `data` (no final newline) holds `width - 1` separators, counted with
    array operations rather than line by line."""
    raw = np.frombuffer(data, dtype=np.uint8)
    seps = np.flatnonzero(raw == ord(sep))
    before = np.searchsorted(seps, np.flatnonzero(raw == 10))  # separators before each end
    per_line = np.diff(before, prepend=0, append=len(seps))
    return bool((per_line == width - 1).all())


def plain_chunks(source: Source, sep: str) -> Iterator[Chunk]:
    """The plain reader; NotPlain when the file is not one it can read as pandas would."""
    with opened(source) as f:
        head = f.readline()
        if not head:
            return
        if head.startswith(b"\xef\xbb\xbf") or head in (b"\n", b"\r\n"):
            raise NotPlain
        columns = tuple(str(c) for c in _cells([head], sep, head.count(sep.encode()) + 1)[0])
        if len(set(columns)) != len(columns) or "" in columns or len(columns) < 2:
            raise NotPlain
        yield columns, _cells(list(islice(f, CHUNK_ROWS)), sep, len(columns))
        while len(rows := _cells(list(islice(f, CHUNK_ROWS)), sep, len(columns))):
            yield columns, rows
            del rows  # not held while the next chunk is read


def pandas_chunks(source: Source, sep: str) -> Iterator[Chunk]:
    """pandas' C parser, every cell read as text, nothing taken for a missing value."""
    import pandas as pd  # only for a file the plain reader cannot read

    with opened(source) as f:
        if not f.read(1):
            return
        f.seek(0)
        reader = pd.read_csv(f, sep=sep, dtype=str, keep_default_na=False, chunksize=CHUNK_ROWS)
        for frame in reader:
            yield tuple(str(c) for c in frame.columns), frame.to_numpy(dtype=object)


def chunks(source: Source, sep: str, plain: bool) -> Iterator[Chunk]:
    return plain_chunks(source, sep) if plain else pandas_chunks(source, sep)
