"""git history queries for `stale`, `landed`, `trailers` and preflight's record gates:
ancestry, logs, trailers, patch ids, the commit graph. Each answers in one walk or one
batch, never one process per commit, and runs through `fidelity.git.command`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fidelity import proc
from fidelity.git.command import GitError, answer, attempt, git, succeeds


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    """Whether ancestor is reachable from descendant (a commit is its own ancestor)."""
    result = attempt(repo, "merge-base", "--is-ancestor", ancestor, descendant)
    if result.status is proc.ProcStatus.OK:
        return True
    if result.returncode == 1:
        return False
    raise GitError(f"git merge-base --is-ancestor {ancestor} {descendant} failed in {repo}")


def is_shallow(repo: Path) -> bool:
    """Whether history is truncated (a CI shallow clone), so ancestry cannot be trusted."""
    return git(repo, "rev-parse", "--is-shallow-repository").strip() == b"true"


def log_commits(
    repo: Path, revs: Sequence[str], paths: Sequence[str] = (), *, no_merges: bool = False
) -> list[tuple[str, str]]:
    """(sha, subject) of the commits `git log revs -- paths` lists, newest first."""
    flags = ["--no-merges"] if no_merges else []
    out = git(repo, "log", "-z", f"--format={_SUBJECTS}", *flags, *revs, "--", *paths)
    return _subjects(out)


_SUBJECTS = "%H%x1f%s"


def _subjects(out: bytes) -> list[tuple[str, str]]:
    """(sha, subject) of each record of `git log -z --format=%H%x1f%s`, in order: the one
    reader of that format (`log_commits` and `touching` ask for it)."""
    found = []
    for record in out.decode(errors="replace").split("\0"):
        if record.strip():
            sha, _, subject = record.strip("\n").partition("\x1f")
            found.append((sha, subject))
    return found


def grep_files(repo: Path, rev: str, needle: str) -> list[str]:
    """Paths in rev's tree whose content holds needle as a fixed string."""
    result = attempt(repo, "grep", "-z", "-l", "-F", "-I", "-e", needle, rev, "--")
    if result.returncode == 1:
        return []
    if result.status is not proc.ProcStatus.OK:
        raise GitError(f"git grep {needle!r} {rev} failed in {repo}")
    prefix = f"{rev}:"
    names = result.stdout.decode(errors="surrogateescape").split("\0")
    return [n.removeprefix(prefix) for n in names if n]


def parse_trailers(repo: Path | str, message: bytes) -> list[tuple[str, str]]:
    """(key, value) trailers of a message as `git log --format=%(trailers)` reads them.

    `--no-divider` because git log does not stop at a `---` line (a pasted diff, a bot's
    separator) while `interpret-trailers` does by default; the last paragraph only,
    continuation lines unfolded, comments and the scissors line ignored.
    """
    out = git(
        repo,
        "-c",
        "trailer.separators=:",
        "interpret-trailers",
        "--parse",
        "--no-divider",
        stdin=message,
    )
    found = []
    for line in out.decode(errors="replace").split("\n"):  # git's lines: not splitlines'
        key, sep, value = line.partition(":")
        if sep:
            found.append((key.strip(), value.strip()))
    return found


def commit_message(repo: Path, sha: str) -> bytes:
    """The raw message of a commit (subject, body and trailers)."""
    return git(repo, "log", "-1", "--format=%B", sha, "--")


_FIELD, _TRAILER, _KV = "\x1f", "\x1e", "\x1d"


def _split_record(record: str) -> tuple[str, str, list[tuple[str, str]]] | None:
    fields = record.split(_FIELD)
    if len(fields) != 3:
        return None  # a separator inside the subject or a trailer: ask git for this one alone
    sha, subject, raw = fields
    trailers = []
    if raw:
        for item in raw.split(_TRAILER):
            key, sep, value = item.partition(_KV)
            if not sep or _KV in value:
                return None
            trailers.append((key.strip(), value.strip()))
    return sha.strip(), subject, trailers


def log_trailers(repo: Path, revs: Sequence[str]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(sha, subject, trailers) of every non-merge commit in revs, newest first, from one
    `git log`; trailers as its `%(trailers:only,unfold)` reads them (messages are not read:
    `messages` fetches the few that a finding needs)."""
    fmt = "%H%x1f%s%x1f%(trailers:only,unfold,separator=%x1e,key_value_separator=%x1d)"
    out = git(
        repo,
        "-c",
        "trailer.separators=:",
        "log",
        "-z",
        "--no-merges",
        f"--format={fmt}",
        *revs,
        "--",
    )
    found = []
    for record in out.decode(errors="replace").split("\0"):
        if not record.strip():
            continue
        parsed = _split_record(record)
        if parsed is None:
            sha = record.partition(_FIELD)[0].strip()
            raw = commit_message(repo, sha)
            subject = raw.decode(errors="replace").strip().partition("\n")[0]
            parsed = (sha, subject, parse_trailers(repo, raw))
        found.append(parsed)
    return found


def messages(repo: Path, shas: Sequence[str]) -> dict[str, str]:
    """sha -> full message for the given commits, from one `git log --no-walk --stdin`."""
    if not shas:
        return {}
    out = git(
        repo,
        "log",
        "-z",
        "--no-walk=unsorted",
        "--format=%H%n%B",
        "--stdin",
        stdin="".join(f"{sha}\n" for sha in shas).encode(),
    )
    found = {}
    for record in out.decode(errors="replace").split("\0"):
        sha, _, message = record.partition("\n")
        if sha.strip():
            found[sha.strip()] = message
    return found


def path_in_tree(repo: Path, rev: str | None, path: str) -> bool:
    """Whether path (literal, never a pattern) is at rev, or in the index when rev is None."""
    if rev is None:
        return bool(git(repo, "ls-files", "-z", "--", f":(literal){path.strip('/')}").strip(b"\0"))
    return succeeds(repo, "cat-file", "-e", f"{rev}:{path.strip('/')}")


def diff_size(repo: Path, base: str, tip: str) -> tuple[int, int]:
    """(files changed, lines added + deleted) from the merge base of base and tip to tip.

    Binary files count as files with no lines, as `--numstat` reports them.
    """
    out = git(
        repo, "diff", "--numstat", "-z", "--no-ext-diff", "--no-renames", f"{base}...{tip}", "--"
    )
    files = lines = 0
    for record in out.decode(errors="surrogateescape").split("\0"):
        if not record.strip():
            continue
        added, deleted, *_ = record.split("\t")
        files += 1
        lines += int(added) if added.isdigit() else 0
        lines += int(deleted) if deleted.isdigit() else 0
    return files, lines


def merge_bases(repo: Path, shas: Sequence[str]) -> list[str]:
    """Every best common ancestor of all of shas at once (`merge-base --octopus --all`);
    empty when they share no history. Ancestors of these are ancestors of every sha."""
    if len(shas) < 2:
        return list(shas)
    return (answer(attempt(repo, "merge-base", "--octopus", "--all", *shas)) or "").split()


def bases_against(repo: Path, one: str, others: Sequence[str]) -> list[str]:
    """Every best common ancestor of `one` and the merge of `others`, as git's octopus merge
    asks it (`merge-base --all ONE OTHERS...`); empty when they share no history."""
    return (answer(attempt(repo, "merge-base", "--all", one, *others)) or "").split()


def renamed_from(
    repo: Path, rev: str, reference: str | None, path: str, index: Path | None = None
) -> str | None:
    """The path at rev of the file that is `path` at reference (None: in the index), when
    git sees a rename."""
    sides = [rev, reference] if reference else ["--cached", rev]
    out = answer(
        attempt(repo, "diff", "--find-renames", "--name-status", "-z", *sides, index=index)
    )
    fields = (out or "").split("\0")
    for i, status in enumerate(fields):
        if status.startswith("R") and i + 2 < len(fields) and fields[i + 2] == path:
            return fields[i + 1]
    return None


def parents(repo: Path, sha: str) -> list[str]:
    """The parents of commit sha, first parent first."""
    line = git(repo, "rev-list", "--parents", "-n", "1", sha, "--").decode().split()
    return line[1:]


def graph(repo: Path, tips: Sequence[str], exclude: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(sha, parents) of every commit reachable from tips and not from exclude, children
    before parents (`rev-list --topo-order --parents`): one walk, no diffs."""
    out = git(
        repo, "rev-list", "--topo-order", "--parents", *tips, *(f"^{e}" for e in exclude), "--"
    )
    found = []
    for line in out.decode().splitlines():
        sha, *parents = line.split()
        found.append((sha, parents))
    return found


def unpushed(repo: Path, tip: str, remote: str) -> list[str]:
    """The commits reachable from tip and from no remote-tracking branch of remote, oldest
    first (what a push of tip brings to a remote that lacks the branch)."""
    out = git(repo, "rev-list", "--topo-order", "--reverse", tip, "--not", f"--remotes={remote}")
    return out.decode().split()


def touching(
    repo: Path, tip: str, exclude: Sequence[str], paths: Sequence[str]
) -> list[tuple[str, str]]:
    """(sha, subject) of the non-merge commits reachable from tip and not from exclude whose
    change touches paths (every one when paths is empty), newest first; `--full-history`, so
    no side branch is pruned by history simplification."""
    out = git(
        repo,
        "log",
        "-z",
        "--no-merges",
        "--full-history",
        f"--format={_SUBJECTS}",
        tip,
        *(f"^{e}" for e in exclude),
        "--",
        *paths,
    )
    return _subjects(out)


def last_change(repo: Path, rev: str, path: str) -> str | None:
    """The commit that last changed path in rev's history, as `git log -1 -- path` names it
    (history simplified: a side branch that brought the same bytes names its own commit);
    None when no commit there touched it."""
    out = git(repo, "log", "-1", "--format=%H", rev, "--", path).decode().strip()
    return out or None


def descendants(repo: Path, ancestor: str, tip: str) -> frozenset[str]:
    """The commits that descend from ancestor and are ancestors of tip (tip included,
    ancestor not): `rev-list --ancestry-path ancestor..tip`."""
    out = git(repo, "rev-list", "--ancestry-path", f"{ancestor}..{tip}", "--")
    return frozenset(out.decode().split())


def changed_paths(
    repo: Path, tip: str, exclude: Sequence[str], *, merges: bool = False
) -> dict[str, frozenset[str]]:
    """sha -> the paths its change touches, for the non-merge commits reachable from tip and
    not from exclude (`log --name-only --no-renames`: tree diffs only, no content). With
    `merges`, merges too, children before parents: a merge's own change is what it holds
    that none of its parents did (`--cc`), so a clean merge changes nothing of its own."""
    flags = ("--cc", "--topo-order") if merges else ("--no-merges",)
    out = git(
        repo,
        "log",
        "-z",
        *flags,
        "--no-renames",
        "--name-only",
        f"--format={_PATHS}",
        tip,
        *(f"^{e}" for e in exclude),
        "--",
    )
    return _paths(out)


_PATHS = "%x01%H"


def _paths(out: bytes) -> dict[str, frozenset[str]]:
    """sha -> paths of each record of `git log -z --name-only --format=%x01%H`: the one reader
    of that format (`changed_paths` and `commit_paths` ask for it)."""
    found = {}
    for chunk in out.decode(errors="surrogateescape").split("\x01"):
        sha, _, rest = chunk.partition("\0")
        if sha:
            found[sha] = frozenset(p for p in rest.lstrip("\n").split("\0") if p)
    return found


def commit_paths(repo: Path, shas: Sequence[str]) -> dict[str, frozenset[str]]:
    """sha -> the paths its change touches against its first parent, for the given commits."""
    if not shas:
        return {}
    out = git(
        repo,
        "log",
        "-z",
        "--no-walk=unsorted",
        "--no-renames",
        "--name-only",
        "--first-parent",
        "-m",
        f"--format={_PATHS}",
        "--stdin",
        stdin="".join(f"{sha}\n" for sha in shas).encode(),
    )
    listed = _paths(out)
    return {sha: listed.get(sha, frozenset()) for sha in shas}


def _patch_ids(repo: Path, diff: bytes) -> dict[str, str]:
    if not diff.strip():
        return {}
    out = git(repo, "patch-id", "--stable", stdin=diff).decode()
    ids = {}
    for line in out.splitlines():
        pid, _, sha = line.partition(" ")
        ids[sha] = pid
    return ids


# patch ids' diffs: as committed (no user's textconv), no a/ b/ prefixes (-R swaps them)
_PATCH_FLAGS = ("--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--no-prefix")


def commit_patch_ids(repo: Path, shas: Sequence[str], *, reverse: bool = False) -> dict[str, str]:
    """sha -> stable patch-id of each non-merge commit's change (of its undoing, with
    reverse: what `git revert` would commit); two git processes for all of them."""
    if not shas:
        return {}
    diff = git(
        repo,
        "log",
        "-p",
        "--no-walk=unsorted",
        "--no-merges",
        *_PATCH_FLAGS,
        *(["-R"] if reverse else []),
        "--format=commit %H",
        "--stdin",
        stdin="".join(f"{sha}\n" for sha in shas).encode(),
    )
    return _patch_ids(repo, diff)


def pair_diffs(
    repo: Path, pairs: Sequence[tuple[str, str]]
) -> tuple[dict[str, str], dict[str, str], dict[str, frozenset[str]]]:
    """For (base, tip) commit pairs: tip -> stable patch-id of the diff base..tip, of its
    reverse, and the paths it touches; five git processes for all pairs (`diff-tree
    --stdin`, which prints each diff under its tip's id)."""
    if not pairs:
        return {}, {}, {}
    lines = "".join(f"{tip} {base}\n" for base, tip in pairs).encode()
    common = ("diff-tree", "--stdin", "-r")
    forward = _patch_ids(repo, git(repo, *common, *_PATCH_FLAGS, "-p", stdin=lines))
    backward = _patch_ids(repo, git(repo, *common, *_PATCH_FLAGS, "-p", "-R", stdin=lines))
    out = git(repo, *common, "--no-renames", "--name-only", "-z", stdin=lines)
    tips = {tip for _, tip in pairs}
    current: str | None = None
    found: dict[str, set[str]] = {}
    for field in out.decode(errors="surrogateescape").split("\0"):
        name = field.strip("\n")
        if name in tips and name not in found:  # each diff starts with its tip's id
            current = name
            found[current] = set()
        elif name and current is not None:
            found[current].add(name)
    paths = {tip: frozenset(names) for tip, names in found.items()}
    return forward, backward, paths


def revert_messages(repo: Path, tip: str, exclude: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(sha, reverted shas as written) for commits whose message says `This reverts commit
    X` (git revert's wording), reachable from tip and not from exclude."""
    out = git(
        repo,
        "log",
        "-z",
        "--no-merges",
        "--format=%H%x1f%B",
        "--fixed-strings",
        "--grep=This reverts commit",
        tip,
        *(f"^{e}" for e in exclude),
        "--",
    )
    found = []
    for record in out.decode(errors="replace").split("\0"):
        sha, _, body = record.partition("\x1f")
        named = re.findall(r"This reverts commit ([0-9a-fA-F]{7,64})", body)
        if sha.strip() and named:
            found.append((sha.strip(), [n.lower() for n in named]))
    return found


def symbol_changes(repo: Path, ref: str, needles: Sequence[str]) -> list[tuple[str, str, bytes]]:
    """(sha, subject, patch) of the non-merge commits on ref whose added or removed lines
    contain any needle as a substring (`-G`, one walk for all needles); the caller counts
    whole identifiers in the patch."""
    pattern = "|".join(re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", n) for n in needles)
    out = git(
        repo,
        "log",
        "-p",
        "--no-ext-diff",
        "--no-textconv",  # -G would search the text a user's driver wrote, not the commit's
        "--no-color",
        "--no-merges",
        "--no-renames",
        f"-G{pattern}",  # one argument: a pattern starting with '-' stays a pattern
        "--format=%x00%H%x1f%s",
        ref,
        "--",
    )
    found = []
    for record in out.split(b"\0")[1:]:
        head, _, body = record.partition(b"\n")
        sha, _, subject = head.decode(errors="replace").partition("\x1f")
        found.append((sha, subject, body))
    return found
