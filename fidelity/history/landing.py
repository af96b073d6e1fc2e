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
from dataclasses import dataclass
from pathlib import Path

from fidelity import git
from fidelity.errors import UntrustedError


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
    if git.is_shallow(repo):
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
    def of(cls, repo: Path, ref: str, shas: Sequence[str]) -> Walk:
        tips = list(dict.fromkeys([ref, *shas]))
        bases = tuple(git.merge_bases(repo, tips))
        edges = git.graph(repo, tips, bases)
        inside = {sha for sha, _ in edges}
        parents = {sha: tuple(p for p in ps if p in inside) for sha, ps in edges}
        return cls(ref, tuple(sha for sha, _ in edges), parents, bases)

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


def _branch_ids(
    repo: Path, ref_sha: str, shas: Sequence[str]
) -> tuple[dict[str, str], dict[str, str], dict[str, frozenset[str]]]:
    """Forward and reverse patch-ids of the branch diff merge-base(sha, ref)..sha, and its
    paths, for commits that are not ancestors of the ref."""
    forward, backward, paths = {}, {}, {}
    for sha in shas:
        base = git.merge_base(repo, sha, ref_sha)
        if base is None:
            continue
        pid = git.diff_patch_id(repo, base, sha)
        if pid is None:
            continue
        forward[sha] = pid
        backward[sha] = git.diff_patch_id(repo, sha, base) or ""
        paths[sha] = frozenset(git.changed_files(repo, base, sha))
    return forward, backward, paths


def find(
    repo: Path, ref_sha: str, shas: Sequence[str], walk: Walk | None = None
) -> dict[str, Landing]:
    """The landing of each commit sha (full shas that exist) on ref_sha."""
    claims = list(dict.fromkeys(shas))
    if not claims:
        return {}
    walk = walk or Walk.of(repo, ref_sha, claims)
    on_ref = walk.reachable(ref_sha)
    position = walk.position()
    ancestors = [c for c in claims if walk.is_ancestor_of_ref(c, on_ref)]
    others = [c for c in claims if c not in ancestors]
    changed = git.changed_paths(repo, ref_sha, walk.bases)  # non-merge commits on the ref's side
    own_paths = git.commit_paths(repo, claims)
    fwd_branch, rev_branch, branch_paths = _branch_ids(repo, ref_sha, others)
    wanted = {c: {own_paths[c], branch_paths.get(c, frozenset())} - {frozenset()} for c in claims}
    pool = {sha for sha, paths in changed.items() if any(paths in w for w in wanted.values())}
    bit = {sha: 1 << i for i, sha in enumerate(sorted(pool))}
    reach = walk.masks(bit, claims)  # which candidates each claim already contains
    candidates = {
        c: [v for v in pool if changed[v] in wanted[c] and not reach.get(c, 0) & bit[v] and v != c]
        for c in claims
    }
    needed = sorted({v for vs in candidates.values() for v in vs})
    pids = git.commit_patch_ids(repo, needed)
    own = git.commit_patch_ids(repo, [c for c in claims if candidates[c]])
    undo = git.commit_patch_ids(repo, [c for c in claims if candidates[c]], reverse=True)
    reverts = git.revert_messages(repo, ref_sha, walk.bases)
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
        found[c] = _decide(c, c in ancestors, events, reverts, position, on_ref)
    return found


def _decide(
    claim: str,
    ancestor: bool,
    events: list[tuple[int, str, str, bool]],
    reverts: Sequence[tuple[str, list[str]]],
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
