"""The rows gate over a range (`--from-ref A --to-ref B`, pre-push): every keyed record row
the range's base holds or one of its commits adds is in its last commit, unless a commit in
the range removed it deliberately (`recordmerge.lost` says what counts). Merges are judged
row by row on their own (`rows`); this catches the row a rebase or cherry-pick dropped,
which leaves no merge behind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fidelity.git import log, objects
from fidelity.recordmerge.lost import Commit, Lost, keys, lost

TRAILER = "Removes-Row"
REVERTS = re.compile(r"This reverts commit ([0-9a-f]{40}|[0-9a-f]{64})")
REMEDY = (
    "put each lost row back in a new commit, or before you push in the commit that dropped it "
    f"(`git rebase -i`); a commit that means to remove a row while changing others says so in "
    f"its message, one trailer per row: `{TRAILER}: KEY`"
)


def _decode(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


def record_texts(repo: Path, revs: list[str], path: str) -> dict[str, str | None]:
    """The record's text at each rev (None where it is not), each distinct blob read once."""
    ids = objects.object_ids(repo, [f"{rev}:{path}" for rev in revs])
    unique = list(dict.fromkeys(i for i in ids if i))
    read = {i: _decode(data) for i, data in zip(unique, objects.blobs(repo, unique), strict=True)}
    return {rev: read.get(i) if i else None for rev, i in zip(revs, ids, strict=True)}


def _lost(repo: Path, span: tuple[str, str], specs: list[Any]) -> list[tuple[Any, Lost]]:
    """(record spec, row) for every row the range lost, before asking whether it was meant."""
    start, end = span
    graph = log.graph(repo, [end], [start])
    if not graph:
        return []
    bases = log.merge_bases(repo, [start, end])
    commits = [Commit(sha, tuple(parents)) for sha, parents in graph]
    parents = (p for c in commits for p in c.parents)
    revs = list(dict.fromkeys([*bases[:1], *(c.sha for c in commits), *parents]))
    found: list[tuple[Any, Lost]] = []
    for spec in specs:
        texts = record_texts(repo, revs, spec.path)
        base = bases[0] if bases else None
        found += [(spec, item) for item in lost(commits, base, end, texts, spec.key)]
    return found


def _meant(repo: Path, spec: Any, item: Lost, message: str) -> bool:
    """The commit names the row in a trailer, or is `git revert` of the commit that added
    it (its message says `This reverts commit SHA.`)."""
    trailers = log.parse_trailers(repo, message.encode())
    if item.key in {v for k, v in trailers if k.lower() == TRAILER.lower()}:
        return True
    reverted = REVERTS.search(message)
    if reverted is None:
        return False
    sha = reverted.group(1)
    then, before = objects.blobs(repo, [f"{sha}:{spec.path}", f"{sha}^:{spec.path}"])
    added = set(keys(_decode(then), spec.key)) - set(keys(_decode(before), spec.key))
    return item.key in added


def lost_rows(repo: Path, span: tuple[str, str], specs: list[Any]) -> list[str]:
    """One line per row the range lost without a commit that meant it."""
    found = _lost(repo, span, specs)
    messages = log.messages(repo, list(dict.fromkeys(item.by for _, item in found)))
    problems = []
    for spec, item in found:
        message = messages.get(item.by, "")
        if _meant(repo, spec, item, message):
            continue
        subject = message.strip().partition("\n")[0]
        problems.append(
            f"{spec.path}: row {item.key!r}: lost by {item.by[:12]} ({subject!r}), which "
            "removed it along with other changes to the record, as a rebase or cherry-pick "
            f"whose conflict was resolved to one side does; `git show "
            f"{item.before[:12]}:{spec.path}` has it, and no `{TRAILER}: {item.key}` trailer "
            "says the removal was meant"
        )
    return problems
