"""What "landed" means, once, for `landed` and `stale`: a commit's work is on the ref.

A commit C has landed on a ref R when C is an ancestor of R (merged, fast-forwarded), or
when a commit V on R that is not an ancestor of C carries C's patch: V's stable patch-id
equals that of C's own change (a cherry-pick or rebase) or of the whole branch diff from
merge-base(C, R) to C (a squash-merge of the branch that ended at C). It was reverted when,
after it landed, a commit on R carries the reverse of that patch (what `git revert`
commits) or says `This reverts commit X` of C or of V; a later commit carrying the patch
again lands it again. The newest of these events on R decides.

Equivalence is textual and uses git cherry's prefilter: a candidate must change exactly
the same files; a squash edited while merging is reported unlanded, never guessed. All
claims are answered together from one walk of the history they share (`rev-list
--parents`), one listing of changed paths and a few batched patch-id runs.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fidelity.errors import UntrustedError
from fidelity.git import log


class Status(enum.StrEnum):
    LANDED = "landed"  # an ancestor of the ref
    LANDED_AS = "landed-as"  # not an ancestor, but its patch landed under another sha
    REVERTED = "reverted"  # landed, then undone on the ref
    UNLANDED = "unlanded"


@dataclass(frozen=True, slots=True)
class Landing:
    sha: str
    status: Status
    via: str | None = None  # the commit on the ref that carries the patch (landed-as), or
    # that landed it again after a revert
    squash: bool = False  # via matches the branch's whole diff, not the commit alone
    reverted_by: str | None = None

    @property
    def holds(self) -> bool:
        return self.status in (Status.LANDED, Status.LANDED_AS)


def refuse_shallow(repo: Path) -> None:
    """UntrustedError in a shallow clone: ancestry and history would be partial."""
    if log.is_shallow(repo):
        raise UntrustedError(
            "the repository is a shallow clone: history before its cut is missing, so "
            "ancestry, landings, reverts and counts would be partial. Fetch full history "
            "(git fetch --unshallow, or actions/checkout with fetch-depth: 0)."
        )


@dataclass(frozen=True, slots=True)
class Walk:
    """The commits reachable from the ref or any claim and not from their common bases,
    children before parents, with their parents inside the walk."""

    ref: str
    order: tuple[str, ...]
    parents: Mapping[str, tuple[str, ...]]
    bases: tuple[str, ...]

    @classmethod
    def of(
        cls, repo: Path, ref: str, shas: Sequence[str], bases: Sequence[str] | None = None
    ) -> Walk:
        tips = list(dict.fromkeys([ref, *shas]))
        found = tuple(log.merge_bases(repo, tips) if bases is None else bases)
        edges = log.graph(repo, tips, found)
        inside = {sha for sha, _ in edges}
        parents = {sha: tuple(p for p in ps if p in inside) for sha, ps in edges}
        return cls(ref, tuple(sha for sha, _ in edges), parents, found)

    def position(self) -> dict[str, int]:
        """sha -> index in the walk; a larger index is older."""
        return {sha: i for i, sha in enumerate(self.order)}

    def reachable(self, start: str) -> set[str]:
        """Commits of the walk reachable from start (start included)."""
        seen, todo = set(), [start]
        while todo:
            sha = todo.pop()
            if sha in seen or sha not in self.parents:
                continue
            seen.add(sha)
            todo.extend(self.parents[sha])
        return seen

    def is_ancestor_of_ref(self, sha: str, on_ref: set[str]) -> bool:
        return sha in on_ref or sha in self.bases

    def merge_base(self, sha: str, on_ref: set[str], position: Mapping[str, int]) -> str | None:
        """A best common ancestor of sha and the ref, as `git merge-base` picks one: walk
        sha's own history down to the first commits on the ref; the newest of those in
        topological order has no other common ancestor above it."""
        frontier, seen, todo = set(), set(), [sha]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in on_ref:
                frontier.add(current)
            elif current in self.parents:
                todo.extend(self.parents[current])
        if frontier:
            return min(frontier, key=position.__getitem__)
        return self.bases[0] if self.bases else None  # every base is a common ancestor

    def masks(self, bits: Mapping[str, int], targets: Iterable[str]) -> dict[str, int]:
        """For each target, the OR of the bits of the commits it reaches in the walk (itself
        included): one pass, parents first, each mask dropped once its children are done."""
        wanted = set(targets)
        children: dict[str, int] = {}
        for sha in self.order:
            for p in self.parents[sha]:
                children[p] = children.get(p, 0) + 1
        done: dict[str, int] = {}
        found = {}
        for sha in reversed(self.order):
            mask = bits.get(sha, 0)
            for p in self.parents[sha]:
                mask |= done[p]
                children[p] -= 1
                if children[p] == 0 and p not in wanted:
                    del done[p]
            done[sha] = mask
            if sha in wanted:
                found[sha] = mask
        return found


def find(
    repo: Path, ref_sha: str, shas: Sequence[str], walk: Walk | None = None
) -> dict[str, Landing]:
    """The landing of each commit sha (full shas that exist) on ref_sha."""
    claims = list(dict.fromkeys(shas))
    if not claims:
        return {}
    bases = walk.bases if walk else tuple(log.merge_bases(repo, [ref_sha, *claims]))
    with ThreadPoolExecutor(max_workers=4) as pool:  # independent reads of one history
        walking = pool.submit(Walk.of, repo, ref_sha, claims, bases) if walk is None else None
        listing = pool.submit(log.changed_paths, repo, ref_sha, bases)
        naming = pool.submit(log.revert_messages, repo, ref_sha, bases)
        own_paths = log.commit_paths(repo, claims)
        walked = walking.result() if walking else walk
        changed, reverts = listing.result(), naming.result()
    assert walked is not None
    walk = walked
    on_ref = walk.reachable(ref_sha)
    position = walk.position()
    ancestors = {c for c in claims if walk.is_ancestor_of_ref(c, on_ref)}
    branch = [
        (base, c)
        for c in claims
        if c not in ancestors and (base := walk.merge_base(c, on_ref, position)) is not None
    ]
    fwd_branch, rev_branch, branch_paths = log.pair_diffs(repo, branch)
    wanted = {c: {own_paths[c], branch_paths.get(c, frozenset())} - {frozenset()} for c in claims}
    by_shape: dict[frozenset[str], list[str]] = {}
    for sha, paths in changed.items():
        by_shape.setdefault(paths, []).append(sha)
    bit: dict[str, int] = {}
    for shape in set().union(*wanted.values()):
        for sha in by_shape.get(shape, ()):
            bit[sha] = 1 << len(bit)
    reach = walk.masks(bit, claims)  # which candidates each claim already contains
    candidates = {
        c: [
            v
            for shape in wanted[c]
            for v in by_shape.get(shape, ())
            if v != c and not reach.get(c, 0) & bit[v]
        ]
        for c in claims
    }
    needed = sorted({v for vs in candidates.values() for v in vs})
    looked = [c for c in claims if candidates[c]]
    pids = log.commit_patch_ids(repo, needed)
    own = log.commit_patch_ids(repo, looked)
    undo = log.commit_patch_ids(repo, looked, reverse=True)
    found = {}
    for c in claims:
        pairs = ((fwd_branch.get(c), True), (own.get(c), False))  # the own patch wins a tie
        lands = {pid: squash for pid, squash in pairs if pid}
        undos = {pid for pid in (undo.get(c), rev_branch.get(c)) if pid}
        events = []  # (position, kind, sha, squash), oldest first once sorted
        if c in ancestors:
            events.append((position.get(c, len(position)), "land", c, False))
        for v in candidates[c]:
            if pids.get(v) in lands:
                events.append((position[v], "land", v, lands[pids[v]]))
            elif pids.get(v) in undos:
                events.append((position[v], "undo", v, False))
        found[c] = _decide(c, c in ancestors, events, reverts, position=position, on_ref=on_ref)
    return found


def _decide(
    claim: str,
    ancestor: bool,
    events: list[tuple[int, str, str, bool]],
    reverts: Sequence[tuple[str, list[str]]],
    *,
    position: Mapping[str, int],
    on_ref: set[str],
) -> Landing:
    landed_shas = {sha for _, kind, sha, _ in events if kind == "land"}
    for sha, named in reverts:
        names_one = any(t.startswith(n) for n in named for t in landed_shas)
        if sha in on_ref and names_one and all(e[2] != sha for e in events):
            events.append((position[sha], "undo", sha, False))
    state: Landing = Landing(claim, Status.UNLANDED)
    for _, kind, sha, squash in sorted(events, key=lambda e: -e[0]):
        if kind == "land":  # an ancestor re-landed after a revert is still `landed`
            status = Status.LANDED if ancestor else Status.LANDED_AS
            state = Landing(claim, status, None if sha == claim else sha, squash)
        elif state.status is not Status.UNLANDED:
            state = Landing(claim, Status.REVERTED, state.via, state.squash, sha)
    return state
