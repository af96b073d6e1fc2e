"""Every comparator kind, by the name a case table gives it: one row each.

A new kind is a module meeting `base.Kind` and a row in `KINDS`, plus its name in the
schemas' `kind` enum (tests/test_kinds.py ties the two). Everything else asks a kind
through `of`: what a spec of it may say, how it explains two outputs, how a spread, the
words of a report and the HTML page treat it.
"""

from __future__ import annotations

from collections.abc import Mapping

from fidelity.kinds import delimited, jsontree, npyarray, rawbytes, textdiff
from fidelity.kinds.base import Kind, Problem, Spec, unread
from fidelity.kinds.diffs import OutputDiff
from fidelity.kinds.sources import NO_PATHS, Neutral, Source

ROWS: tuple[Kind, ...] = (
    rawbytes.KIND,
    delimited.CSV,
    delimited.TSV,
    jsontree.KIND,
    textdiff.KIND,
    npyarray.KIND,
)
KINDS: Mapping[str, Kind] = {k.name: k for k in ROWS}
DEFAULT = rawbytes.KIND  # an output no spec names is compared by its bytes


def of(name: str) -> Kind:
    """The kind of that name; the schemas let no other into a table or a run."""
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(KINDS)
        raise ValueError(f"unknown comparator kind {name!r}: use one of {known}") from None


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
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = f"bytes differ and not parseable as {kind.name}: {first}"
        return OutputDiff(path, kind.name, False, why)
