"""Every comparator kind, by the name a case table gives it: one row each.

A new kind is a module meeting `base.Kind` and a row in `_WHERE`, plus its name in the
schemas' `kind` enum (tests/test_kinds.py ties the two). Everything else asks a kind
through `of`: what a spec of it may say, how it explains two outputs, how a spread, the
words of a report and the HTML page treat it. A kind's module is imported when a kind of
that name is first asked for: listing or checking a table that names only some kinds does
not import the others (pandas' CSV reader, the text diff).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from fidelity.kinds import rawbytes
from fidelity.kinds.base import Kind, Problem, Spec, unread
from fidelity.kinds.sources import NO_PATHS, Neutral, Source

if TYPE_CHECKING:
    from fidelity.kinds.diffs import OutputDiff

# name: (module under fidelity.kinds, its attribute), in the schemas' order
_WHERE: Mapping[str, tuple[str, str]] = {
    "bytes": ("rawbytes", "KIND"),
    "csv": ("delimited", "CSV"),
    "tsv": ("delimited", "TSV"),
    "json": ("jsontree", "KIND"),
    "text": ("textdiff", "KIND"),
    "npy": ("npyarray", "KIND"),
}


class _Kinds(Mapping[str, Kind]):
    """Every kind by name, each module imported on first use."""

    def __getitem__(self, name: str) -> Kind:
        module, attr = _WHERE[name]
        kind: Kind = getattr(importlib.import_module(f"fidelity.kinds.{module}"), attr)
        return kind

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


KINDS: Mapping[str, Kind] = _Kinds()
DEFAULT = rawbytes.KIND  # an output no spec names is compared by its bytes


def rows() -> tuple[Kind, ...]:
    """Every kind, each module imported."""
    return tuple(KINDS.values())


def of(name: str) -> Kind:
    """The kind of that name; the schemas let no other into a table or a run."""
    if name not in _WHERE:
        known = ", ".join(KINDS)
        raise ValueError(f"unknown comparator kind {name!r}: use one of {known}")
    return KINDS[name]


def of_spec(spec: Spec) -> Kind:
    return of(spec["kind"]) if "kind" in spec else DEFAULT


def _readers(key: str) -> str:
    names = [k.name for k in KINDS.values() if key in k.reads]
    return ", ".join(names) if names else "no kind"


def problems(spec: Spec) -> list[Problem]:
    """What in one compare spec could never mean what it says, each with where under the
    spec: a key its kind does not read, then the kind's own problems."""
    kind = of_spec(spec)
    found: list[Problem] = [
        (
            (key,),
            f"kind {kind.name} does not read `{key}` (read by {_readers(key)}): remove it, "
            "or change the kind",
        )
        for key in unread(spec, kind.reads)
    ]
    return found + kind.problems(spec)


def explain(
    path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral = NO_PATHS
) -> OutputDiff:
    """Two outputs whose bytes differ, explained by the spec's kind (by bytes with none).
    Unless the spec says `own_paths = "literal"`, each side's own paths are placeholders."""
    kind = of_spec(spec)
    if spec.get("own_paths", "placeholder") == "literal":
        neutral = NO_PATHS
    try:
        return kind.explain(path, base, cand, spec, neutral)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        from fidelity.kinds.diffs import OutputDiff

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = f"bytes differ and not parseable as {kind.name}: {first}"
        return OutputDiff(path, kind.name, False, why)
