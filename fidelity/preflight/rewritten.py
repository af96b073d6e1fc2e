"""git's post-rewrite hook after a rebase: each rewritten commit should do to the keyed
record rows what the commit it replays did. One that removes a row its new parent holds
(a conflict resolved with `git checkout --theirs`, which is the replayed commit's side) or
lacks a row the original added (resolved with `--ours`, upstream's side) is named at once,
with the way back. The rebase has already happened, and git ignores this hook's exit code,
so it can only say so; `pre-push` and CI stop the first kind, and only this hook sees the
second (the row never was in the rewritten history). Commits squashed into one are judged
together, from the first one's parent to the last one. `amend` rewrites are the user's own
edit and are not judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fidelity import config
from fidelity.errors import UsageError
from fidelity.git import objects
from fidelity.preflight.rangerows import record_texts
from fidelity.recordmerge.lost import rewrite_losses

PYPROJECT = "pyproject.toml"
REMEDY = (
    "the rebase is done: put the rows back and amend or add a commit, or undo the whole "
    "rebase with `git reset --hard ORIG_HEAD` (right after it; `git reflog` names the old "
    "tip later) and resolve the conflict keeping both rows"
)


def pairs(text: str) -> list[tuple[tuple[str, ...], str]]:
    """(original commits, rewritten commit) from git's `<old> <new> [<extra>]` lines,
    consecutive olds that became one new commit (a squash) together."""
    grouped: dict[str, list[str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            grouped.setdefault(fields[1], []).append(fields[0])
    return [(tuple(olds), new) for new, olds in grouped.items()]


def _specs(repo: Path, head: str) -> list[Any]:
    from fidelity.history import stale

    data = objects.show_file(repo, head, PYPROJECT)
    section = config.parse(data, f"{PYPROJECT} at {head[:12]}").get("records") if data else None
    return stale.specs_from_config(section, PYPROJECT) if section is not None else []


def findings(repo: Path, rewritten: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """One line per row a rewritten commit lost that the commit it replays kept."""
    head = objects.resolve(repo, "HEAD")
    if head is None or not rewritten:
        return []
    try:
        specs = _specs(repo, head)
    except UsageError as exc:
        return [str(exc)]
    found = []
    for spec in specs:
        revs = [r for olds, new in rewritten for r in (f"{olds[0]}^", olds[-1], f"{new}^", new)]
        texts = record_texts(repo, revs, spec.path)
        for olds, new in rewritten:
            old_parent, old, new_parent = f"{olds[0]}^", olds[-1], f"{new}^"
            losses = rewrite_losses(
                texts[old_parent], texts[old], texts[new_parent], texts[new], spec.key
            )
            found += [
                f"{spec.path}: row {k!r}: {new[:12]} (rewritten from {old[:12]}): {why}"
                for k, why in losses
            ]
    return found
