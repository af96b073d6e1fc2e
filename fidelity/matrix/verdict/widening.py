"""Has the harness loosened a comparison since the baseline's own table?

A gate must not be widened silently to let one change through: a larger rtol/atol, a newly
ignored column, or a tolerant comparator kind (`Kind.tolerant`) where bytes were compared
before all let more differences pass, and each is named.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from fidelity.kinds import registry

Spec = Mapping[str, Any]
Specs = Mapping[str, Spec]  # output name or glob -> comparison spec


def _tolerances(spec: Spec) -> dict[tuple[str, str], float]:
    found = {("*", name): float(spec.get(name, 0.0)) for name in ("rtol", "atol")}
    for column, own in spec.get("columns", {}).items():
        for name in ("rtol", "atol"):
            found[(column, name)] = float(own.get(name, spec.get(name, 0.0)))
    return found


def widened(output: str, harness: Spec | None, own: Spec | None) -> list[str]:
    """Reasons the harness spec lets more through than the baseline's own spec; [] if none."""
    if harness is None:
        return []
    kind = registry.of_spec(harness)
    if own is None or not registry.of_spec(own).tolerant:
        earlier = "bytes" if own is None else registry.of_spec(own).name
        return [f"{output}: now compared as {kind.name}, was {earlier}"] if kind.tolerant else []
    reasons = []
    if own.get("own_paths") == "literal" and harness.get("own_paths") != "literal":
        reasons.append(f"{output}: now reads the side's own paths as placeholders, was literal")
    new_ignored = sorted(set(harness.get("ignore", [])) - set(own.get("ignore", [])))
    if new_ignored:
        reasons.append(f"{output}: now ignores {', '.join(new_ignored)}")
    was = _tolerances(own)
    for (column, name), value in sorted(_tolerances(harness).items()):
        before = was.get((column, name), was[("*", name)])
        if value > before:
            where = "" if column == "*" else f" for column {column}"
            reasons.append(f"{output}: {name}{where} widened from {before:g} to {value:g}")
    key = list(harness.get("key", []))
    if key and key != list(own.get("key", [])):  # none: rows by position, which is stricter
        reasons.append(f"{output}: key changed from {own.get('key', [])} to {key}")
    return reasons


def _own_spec(output: str, own: Specs) -> Spec | None:
    """The baseline's spec for the output a harness spec is keyed by, though the two tables
    key it differently (`m.csv` in one, `*.csv` in the other)."""
    if output in own:
        return own[output]
    return next(
        (s for key, s in own.items() if fnmatchcase(output, key) or fnmatchcase(key, output)),
        None,
    )


def case_widenings(harness: Specs, own: Specs | None) -> list[str]:
    """Every widening of one case's effective comparison specs (its own and the table-wide
    ones, as `table` resolves them); nothing when the side had no table."""
    if own is None:
        return []
    return [
        r for output, spec in harness.items() for r in widened(output, spec, _own_spec(output, own))
    ]
