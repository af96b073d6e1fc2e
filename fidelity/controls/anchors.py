"""Table mistakes found before anything runs: anchors that do not match the tree, expected
tests that name none of the collected ones. Each is located as `table:line: control 'id'`,
and any of them makes the command a usage error (exit 2), never a verdict."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from fidelity.controls.edit import replace_once
from fidelity.controls.table import Control, ControlTable
from fidelity.errors import UsageError
from fidelity.git import objects, patches
from fidelity.plugins import fidelity_testids as testids


def where(table: ControlTable, control: Control) -> str:
    line = table.lines.get(control.id)
    return f"{table.source}:{line}: control {control.id!r}" if line else f"control {control.id!r}"


def _edit_problems(repo: Path, sha: str, control: Control, scratch: Path) -> list[str]:
    texts: dict[str, str] = {}
    found = []
    for number, edit in enumerate(control.edits, 1):
        label = f"edit #{number} ({edit.file})"
        if edit.patch is not None:
            if edit.file in texts:
                continue  # applies on top of an earlier edit: checked when it runs
            why = patches.patch_applies(repo, sha, edit.patch.encode(), scratch)
            if why:
                why = "; ".join(x.strip() for x in why.splitlines() if x.strip())
                found.append(f"{label}: the patch does not apply at {sha[:10]}: {why}")
            continue
        if edit.file not in texts:
            data = objects.show_file(repo, sha, edit.file)
            if data is None:
                found.append(f"{label}: no such file at {sha[:10]}")
                continue
            if objects.is_link(repo, sha, edit.file):  # its blob is the path it points to
                found.append(f"{label}: a symbolic link at {sha[:10]}; edit the file itself")
                continue
            try:
                texts[edit.file] = data.decode("utf-8")
            except UnicodeDecodeError:
                found.append(f"{label}: not UTF-8 text; use a patch edit")
                continue
        new, why = replace_once(texts[edit.file], edit.find or "", edit.replace or "")
        if why:
            found.append(f"{label}: {why}")
        texts[edit.file] = new
    return found


def edit_problems(
    repo: Path, sha: str, table: ControlTable, controls: Sequence[Control], scratch: Path
) -> list[str]:
    """Every edit that would not apply to the tree at sha, located."""
    return [
        f"{where(table, c)}: {p}" for c in controls for p in _edit_problems(repo, sha, c, scratch)
    ]


def id_problems(
    table: ControlTable, controls: Sequence[Control], known: Sequence[str]
) -> list[str]:
    """Every expected test that names no test the unmodified tree collected, located."""
    found = []
    for c in controls:
        for expected, hits in testids.expand(c.caught_by, known).items():
            if not hits:
                found.append(f"{where(table, c)}: caught_by names no collected test: {expected}")
    return found


def raises_problems(
    table: ControlTable, controls: Sequence[Control], unknown: Collection[str]
) -> list[str]:
    """Every `raises` name that is no exception class the collected tests can see, located:
    a misspelt name would never match, and the control would read `caught-by-error`."""
    return [
        f"{where(table, c)}: raises names {name!r}, which is no built-in exception and no "
        "exception class of that name in a module the tests import; fix the spelling, or give "
        "its dotted path (package.module.Class)"
        for c in controls
        for name in c.raises
        if name in unknown
    ]


def refuse(
    problems: Sequence[str], what: str, fix: str = "Fix the table (or the tree), then run again."
) -> None:
    """UsageError listing every problem, when there are any."""
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise UsageError(f"{what}:\n{lines}\n{fix}")
