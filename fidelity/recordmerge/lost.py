"""Did a range of commits keep every keyed record row? (pure; the history is given).

A merge is judged by `audit`; a row can also go without any merge: a rebase whose conflict
was resolved to one side (`git checkout --theirs` replays the commit's own file, without
the rows upstream added meanwhile) leaves a plain commit that deletes the row, and so does
a cherry-pick onto a newer base. Such a commit cannot be told from one that removes a row on
purpose by what it holds, so the rule is about how it removes it: a commit whose whole change
to the record is deleting rows (nothing added, changed or moved, no other line touched) means
it; any other commit that loses a row must name it (the caller reads `Removes-Row:`
trailers). A rebase's commit carries the edit that conflicted, so it is never a pure
deletion.

The rows judged are those of the range's base and those any commit in the range adds (a key
in a commit and in none of its parents). One that is not in the range's last commit was
lost; the newest commit that removed it (a parent has it, the commit not) answers for it. A
merge that removed it is left to `audit`, which knows whether the merge took a side's
deletion. Keys are the record's, across its keyed tables: a row moved to another table of
the record is not lost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from fidelity.recordmerge.audit import tables


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Lost:
    """A key the range lost, and the commit (not a merge, not a pure deletion) that removed
    it last."""

    key: str
    by: str
    before: str  # the parent of `by`, which still holds the row


def keys(text: str | None, key: str) -> tuple[str, ...]:
    """The record's keys in document order, each once."""
    found = (k for rows in tables(text, [key]).values() for k in rows.cells)
    return tuple(dict.fromkeys(found))


def only_deletes(before: str | None, after: str | None, key: str) -> bool:
    """`after` is `before` with some keyed rows deleted and nothing else changed (or the
    record itself deleted)."""
    if after is None:
        return True
    if before is None:
        return False
    gone = set(keys(before, key)) - set(keys(after, key))
    drop = {
        line
        for rows in tables(before, [key]).values()
        for k, lines in rows.lines.items()
        if k in gone
        for line in lines
    }
    kept = [t for n, t in enumerate(before.splitlines(keepends=True), 1) if n not in drop]
    return bool(gone) and "".join(kept) == after


def lost(
    commits: Sequence[Commit],
    base: str | None,
    end: str,
    texts: Mapping[str, str | None],
    key: str,
) -> list[Lost]:
    """Rows of the base or added in the range that `end` lacks, each with the commit that
    removed it, unless that commit is a merge or only deleted rows. `commits` children
    first (`rev-list --topo-order`); `texts` the record at every commit, parent and base."""

    @cache
    def parsed(text: str | None) -> tuple[str, ...]:  # one blob is shared by many revs
        return keys(text, key)

    @cache
    def at(rev: str) -> frozenset[str]:
        return frozenset(parsed(texts.get(rev)))

    present = dict.fromkeys(parsed(texts.get(base)) if base else ())
    for commit in reversed(commits):
        before = frozenset().union(*(at(p) for p in commit.parents))
        present.update(dict.fromkeys(k for k in parsed(texts.get(commit.sha)) if k not in before))
    found = []
    for k in present:
        if k in at(end):
            continue
        remover = _remover(commits, k, at)
        if remover is None or len(remover.parents) != 1:
            continue  # a merge: judged by `audit`
        if not only_deletes(texts.get(remover.parents[0]), texts.get(remover.sha), key):
            found.append(Lost(k, remover.sha, remover.parents[0]))
    return found


def _remover(
    commits: Sequence[Commit], k: str, at: Callable[[str], frozenset[str]]
) -> Commit | None:
    """The newest commit that removed k: a parent holds it, the commit does not."""
    for commit in commits:
        if k not in at(commit.sha) and any(k in at(p) for p in commit.parents):
            return commit
    return None


def rewrite_losses(
    old_parent: str | None, old: str | None, new_parent: str | None, new: str | None, key: str
) -> list[tuple[str, str]]:
    """(key, why) for each row a rewritten commit (a rebase's replay of `old` onto another
    parent) loses that the original did not: one its new parent holds that it removes
    though the original removed no such row, and one the original added that it lacks."""
    before, after = set(keys(old_parent, key)), set(keys(old, key))
    now = set(keys(new, key))
    found = [
        (k, "the rewritten commit removes it; the commit it replays did not")
        for k in keys(new_parent, key)
        if k not in now and not (k in before and k not in after)
    ]
    found += [
        (k, "the commit it replays added it; the rewritten commit does not have it")
        for k in keys(old, key)
        if k not in before and k not in now
    ]
    return found
