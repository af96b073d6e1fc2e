"""An output to compare, given as a file in the run directory or as bytes (in tests)."""

from __future__ import annotations

import io
import operator
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

Source = Path | bytes


@dataclass(frozen=True, slots=True)
class Neutral:
    """Each side's own paths ({out}, {cache}, {worktree}), to be read as their placeholders:
    a config dump that embeds its own output folder differs between sides by that alone."""

    base: tuple[tuple[str, str], ...] = ()  # (absolute path, placeholder), longest first
    cand: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(base: Mapping[str, str], cand: Mapping[str, str]) -> Neutral:
        def pairs(places: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
            found = [(path, "{" + name + "}") for name, path in places.items() if path]
            return tuple(sorted(found, key=lambda p: -len(p[0])))

        return Neutral(pairs(base), pairs(cand))

    def same(self, b: str, c: str) -> bool:
        """b and c are equal once each side's own paths are read as placeholders."""
        if not self.base and not self.cand:
            return False
        return _replace(b, self.base) == _replace(c, self.cand)

    def same_each(self, b: list[str], c: list[str]) -> list[bool]:
        """`same` for each pair, with each side's paths replaced once in all its texts
        joined by NUL (no path holds one, so no match crosses from one text to the next)."""
        if not self.base and not self.cand:
            return [False] * len(b)
        joined_b, joined_c = _JOIN.join(b), _JOIN.join(c)
        if not _holds(joined_b, self.base) and not _holds(joined_c, self.cand):
            return list(map(operator.eq, b, c))  # no path to replace
        if joined_b.count(_JOIN) != len(b) - 1 or joined_c.count(_JOIN) != len(c) - 1:
            return [self.same(x, y) for x, y in zip(b, c, strict=True)]
        split_b = _replace(joined_b, self.base).split(_JOIN)
        split_c = _replace(joined_c, self.cand).split(_JOIN)
        return [x == y for x, y in zip(split_b, split_c, strict=True)]


_JOIN = "\x00"


def _holds(text: str, pairs: tuple[tuple[str, str], ...]) -> bool:
    return any(path in text for path, _ in pairs)


def _replace(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for path, name in pairs:
        text = text.replace(path, name)
    return text


NO_PATHS = Neutral()


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
