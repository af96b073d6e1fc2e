"""Apply a control's edits to its own worktree; an edit that does not apply is a reason, not
an exception, because it makes the control unviable rather than the run untrusted."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fidelity.controls.inplace import in_place
from fidelity.controls.table import Edit
from fidelity.git import patches


def replace_once(text: str, find: str, replace: str) -> tuple[str, str]:
    """(new text, '') when find occurs exactly once, else (text, why not)."""
    count = text.count(find)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        return text, f"find {find!r} {where}; it must match exactly once"
    return text.replace(find, replace, 1), ""


def _inside(root: Path, name: str) -> Path | None:
    target = (root / name).resolve()
    return target if target.is_relative_to(root.resolve()) else None


def _apply_one(root: Path, edit: Edit) -> str:
    if edit.patch is not None:
        why = patches.apply_patch(root, edit.patch.encode())
        return f"patch for {edit.file} does not apply: {why}" if why else ""
    target = _inside(root, edit.file)
    if target is None or not target.is_file():
        return f"{edit.file}: no such file in the tree"
    try:  # bytes in and out: line endings stay exactly as committed
        text = target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return f"{edit.file}: not UTF-8 text; use a patch edit"
    find = edit.find or ""
    new, why = replace_once(text, find, in_place(edit.file, text, find, edit.replace or ""))
    if why:
        return f"{edit.file}: {why}"
    target.write_bytes(new.encode("utf-8"))
    return ""


def apply(root: Path, edits: Sequence[Edit]) -> str:
    """Apply every edit in order; '' when all applied, else why the first one did not."""
    for edit in edits:
        why = _apply_one(root, edit)
        if why:
            return why
    return ""
