"""`--in-diff BASE`: the controls a change since BASE can affect, and an explicit skip when
there are none.

A control is selected when the change touches a file it edits or a test file it expects, or
when its own entry in the control table is new or differs from the table at BASE; every
control is selected when the table's `[controls]` settings changed, or the table is new. A
change that selects nothing (a docs-only pull request) is a skip: exit 0, and the report
says what was compared and why nothing was judged.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path

from fidelity.controls.table import Control, ControlTable, parse
from fidelity.errors import UsageError
from fidelity.git import objects, patches


@dataclass(frozen=True, slots=True)
class Picked:
    controls: tuple[Control, ...]
    why: dict[str, str] = field(default_factory=dict)  # control id -> why it was selected
    skip: str = ""  # when nothing was selected: why, for the report
    notes: tuple[str, ...] = ()


def _header(table: ControlTable) -> tuple[object, ...]:
    return (table.command, table.import_check, table.timeout_s, dict(table.env), table.setup)


def _table_changes(
    repo: Path, table: ControlTable, base: str, controls: Sequence[Control]
) -> tuple[dict[str, str], str]:
    """(control id -> why its entry counts as changed, why every control counts)."""
    try:
        rel = Path(table.source).resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return {}, ""
    old_bytes = objects.show_file(repo, base, rel)
    if old_bytes is None:
        return {}, f"the control table {rel} is new since {base[:10]}"
    try:
        old = parse(old_bytes, f"{rel} at {base[:10]}")
    except UsageError:
        return {}, f"the control table {rel} did not parse at {base[:10]}"
    if _header(old) != _header(table):
        return {}, f"the [controls] settings of {rel} changed since {base[:10]}"
    before = {c.id: c for c in old.controls}
    why = {}
    for c in controls:
        if c.id not in before:
            why[c.id] = "its entry is new in the table"
        elif before[c.id] != c:
            why[c.id] = "its entry in the table changed"
    return why, ""


def touched(control: Control, changed: Set[str]) -> list[str]:
    """The changed files the control edits, or that hold one of its expected tests."""
    return sorted(changed & {*control.files, *(t.split("::")[0] for t in control.caught_by)})


def select(
    repo: Path, table: ControlTable, sha: str, base_rev: str, controls: Sequence[Control]
) -> Picked:
    base = objects.rev_parse(repo, base_rev)
    changed = set(patches.changed_files(repo, base, sha))
    entry_why, all_why = _table_changes(repo, table, base, controls)
    if all_why:
        return Picked(tuple(controls), {c.id: all_why for c in controls}, notes=(all_why,))
    why: dict[str, str] = {}
    for c in controls:
        if c.id in entry_why:
            why[c.id] = entry_why[c.id]
        elif hit := touched(c, changed):
            why[c.id] = f"the change touches {', '.join(hit)}"
    chosen = tuple(c for c in controls if c.id in why)
    if chosen:
        listed = "; ".join(f"{cid}: {w}" for cid, w in why.items())
        return Picked(chosen, why, notes=(f"--in-diff {base_rev} selected {listed}",))
    skip = (
        f"--in-diff {base_rev}: the {len(changed)} changed file(s) touch no file a control "
        f"edits, no test file a control expects, and no entry of the control table; "
        "nothing to judge, so nothing ran"
    )
    return Picked((), {}, skip)
