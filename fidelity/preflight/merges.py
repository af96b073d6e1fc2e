"""The merges whose record rows the rows gate judges, found in git's state: those a range
brings, HEAD when it is one, and one waiting for its commit.

A merge waits in one of two ways. After a conflict (or `--no-commit`) git keeps MERGE_HEAD
and the user commits it. A merge git makes on its own (a clean text merge, `-X ours`,
`-s ours`) runs the `pre-merge-commit` hook before it writes MERGE_HEAD; what it merges is
then named only in the hook's environment, one `GITHEAD_<sha>=<name>` per head, in no
order; `GIT_REFLOG_ACTION` (`merge a b`) gives the order the names were given in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from fidelity.git import gitdir, log, objects
from fidelity.preflight.context import Merge

GITHEAD = re.compile(r"GITHEAD_([0-9a-f]{40}|[0-9a-f]{64})")
PENDING = "nothing is committed yet: put the rows back in the record, `git add` it and `git commit`"
AUTOMATIC = (
    f"{PENDING}; or `git merge --abort` and merge again without `-X ours`/`-s ours` (with the "
    "record driver, which `fidelity install-hooks` configures, rows merge by key)"
)
COMMITTED = (
    "restore the rows in a new commit (`git show PARENT:PATH` has them), or before pushing "
    "redo the merge (`git reset --hard HEAD^` on the merge, then merge again)"
)


def automatic_heads(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """(sha, name) of each head of a merge git is making on its own, as its pre-merge-commit
    hook sees them; () anywhere else. Ordered as GIT_REFLOG_ACTION names them (a `git pull`
    names them otherwise: then by sha, which matters only for an octopus)."""
    heads = {m.group(1): v for k, v in environ.items() if (m := GITHEAD.fullmatch(k))}
    words = environ.get("GIT_REFLOG_ACTION", "").split()

    def place(item: tuple[str, str]) -> tuple[int, str]:
        return (words.index(item[1]) if item[1] in words else len(words), item[0])

    return tuple(sorted(heads.items(), key=place))


def in_range(repo: Path, span: tuple[str, str]) -> tuple[Merge, ...]:
    """Every merge commit of `from..to`."""
    graph = log.graph(repo, [span[1]], [span[0]])
    return tuple(
        Merge(f"merge {sha[:12]}", tuple(ps), sha, remedy=COMMITTED)
        for sha, ps in graph
        if len(ps) > 1
    )


def at_head(
    repo: Path, everything: bool, pending: bool, automatic: tuple[tuple[str, str], ...]
) -> tuple[Merge, ...]:
    """HEAD when it is a merge (with `everything`), and with `pending` the merge, squash
    merge, cherry-pick or revert waiting to be committed in the judged index or work tree."""
    found = []
    head = objects.resolve(repo, "HEAD")
    if everything and head is not None:
        parents = log.parents(repo, head)
        if len(parents) > 1:
            found.append(Merge(f"merge {head[:12]} (HEAD)", tuple(parents), head, remedy=COMMITTED))
    if head is not None and pending:
        found += _pending(repo, head, automatic)
    return tuple(found)


def _pending(repo: Path, head: str, automatic: tuple[tuple[str, str], ...]) -> list[Merge]:
    """What git is in the middle of, as a merge of HEAD and what it brings in."""
    state = gitdir.state_files(
        repo, ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "SQUASH_MSG"]
    )
    heads = [line.strip() for line in state["MERGE_HEAD"].splitlines() if line.strip()]
    if heads:
        labels = ("HEAD", *(f"MERGE_HEAD ({h[:12]})" for h in heads))
        return [Merge("the merge being committed", (head, *heads), labels=labels, remedy=PENDING)]
    merged = tuple((sha, name) for sha, name in automatic if sha != head)
    if merged:
        labels = ("HEAD", *(f"{name} ({sha[:12]})" for sha, name in merged))
        parents = (head, *(sha for sha, _ in merged))
        return [Merge("the merge git made on its own", parents, labels=labels, remedy=AUTOMATIC)]
    return _picked(repo, head, state)


def _picked(repo: Path, head: str, state: dict[str, str]) -> list[Merge]:
    for name, what in (("CHERRY_PICK_HEAD", "cherry-pick"), ("REVERT_HEAD", "revert")):
        picked = state[name].strip()
        parent = objects.resolve(repo, f"{picked}^") if picked else None
        if picked and parent:
            theirs, base = (picked, parent) if what == "cherry-pick" else (parent, picked)
            labels = ("HEAD", f"{name} ({picked[:12]})")
            todo = f"{PENDING}, or `git {what} --abort`"
            return [
                Merge(f"the {what} being committed", (head, theirs), None, ((base,),), labels, todo)
            ]
    squashed = re.search(r"^commit ([0-9a-f]{40})", state["SQUASH_MSG"], re.M)
    if squashed:
        tip = squashed.group(1)
        labels = ("HEAD", f"the squashed branch ({tip[:12]})")
        return [
            Merge("the squash merge being committed", (head, tip), labels=labels, remedy=PENDING)
        ]
    return []
