"""Comparison specs of a case table: table-wide defaults resolved per case, and the compare
blocks that could not mean what they say.

`[matrix.compare."<output>"]` applies to every case that declares that output; a case's own
`[case.compare."<output>"]` replaces it for that case. TOML binds a `[case.compare."x"]`
block to the `[[case]]` above it, so one written once after the last case, meant for all,
belongs to the last case alone: that is refused, with the table-wide block to write.
Specs judge evidence and never produce it, so none of this is in a case's definition.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from fidelity.matrix.cases.outputs import Output, spec_problem

Spec = Mapping[str, Any]
Locate = Callable[[Mapping[str, Any], Sequence[str | int], str], str]
SHOWN_CASES = 3


def covers(key: str, name: str) -> bool:
    """A spec keyed `key` (a name or a glob) judges everything one keyed `name` would."""
    return key == name or fnmatchcase(name, key)


def effective(
    defaults: Mapping[str, Spec], own: Mapping[str, Spec], outputs: Sequence[Output]
) -> dict[str, dict[str, Any]]:
    """A case's specs: its own first (they win), then each table-wide default that names
    one of its outputs and that none of its own covers."""
    found = {name: dict(spec) for name, spec in own.items()}
    for name, spec in defaults.items():
        if spec_problem(name, outputs) is None and not any(covers(k, name) for k in own):
            found[name] = dict(spec)
    return found


def _kind_problems(
    raw: Mapping[str, Any], where: tuple[str | int, ...], locate: Locate
) -> list[str]:
    """What the block's kind finds in it: a key it does not read, an entry that can never
    match; each located. The kinds load here: a table with no compare block never needs them."""
    from fidelity.kinds import registry

    return [locate(raw, (*where, *at), why) for at, why in registry.problems(_at(raw, where))]


def _at(raw: Mapping[str, Any], where: Sequence[str | int]) -> Any:
    value: Any = raw
    for part in where:
        value = value[part]
    return value


def _cases(ids: Sequence[str]) -> str:
    more = f" (+{len(ids) - SHOWN_CASES} more)" if len(ids) > SHOWN_CASES else ""
    named = ", ".join(repr(i) for i in ids[:SHOWN_CASES]) + more
    return f"case {named} declares" if len(ids) == 1 else f"cases {named} declare"


def _trap(name: str, others: Sequence[str], what: str) -> str:
    quoted = json.dumps(name)
    return (
        f"{_cases(others)} {quoted} {what}: TOML binds a [case.compare.{quoted}] block to the "
        f"[[case]] above it, even one written after the last case; for every case that "
        f"declares {quoted}, write [matrix.compare.{quoted}]"
    )


def problems(raw: Mapping[str, Any], locate: Locate, trap: bool = True) -> list[str]:
    """Every compare block that names no output it could judge, and (with `trap`) a last
    case's block that other cases' same output lacks (the TOML trap); each located."""
    cases = raw["case"]
    outputs = [[Output.parse(o) for o in c.get("outputs", [])] for c in cases]
    defaults: Mapping[str, Spec] = raw.get("matrix", {}).get("compare", {})
    found: list[str] = []
    for name in defaults:
        where: tuple[str | int, ...] = ("matrix", "compare", name)
        if all(spec_problem(name, outs) for outs in outputs):
            found.append(locate(raw, where, "names no output of any case: it would never apply"))
        found += _kind_problems(raw, where, locate)
    last = len(cases) - 1
    for i, case in enumerate(cases):
        for name in case.get("compare", {}):
            where = ("case", i, "compare", name)
            found += _kind_problems(raw, where, locate)
            others = [
                c["id"]
                for j, c in enumerate(cases)
                if j != i and spec_problem(name, outputs[j]) is None
            ]
            why = spec_problem(name, outputs[i])
            if why:
                hint = f"; {_trap(name, others, 'too')}" if others else ""
                found.append(locate(raw, where, why + hint))
                continue
            bare = [cid for cid in others if not _judged(name, cases, cid, defaults)]
            if trap and i == last and bare:
                why = (
                    f"applies to this last case only, yet {_trap(name, bare, 'with no spec')}; "
                    "for this case alone, move the case above another [[case]]"
                )
                found.append(locate(raw, where, why))
    return found


def _judged(name: str, cases: Sequence[Mapping[str, Any]], case_id: str, defaults: Spec) -> bool:
    """Whether case `case_id` compares output `name` by some spec, its own or the table's."""
    own = next(c.get("compare", {}) for c in cases if c["id"] == case_id)
    return any(covers(key, name) for key in (*own, *defaults))
