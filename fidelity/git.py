"""The one module that talks to git, hardened against the user's setup.

Every call drops inherited ``GIT_*`` variables (a hook or an IDE may have set GIT_DIR or
GIT_INDEX_FILE), disables hooks, pagers, external diff drivers and fsmonitor, and uses
``--no-optional-locks`` so that read-only commands never refresh the user's index file.
GitPython is not used to spawn here because its ``Git.execute`` always starts from
``os.environ`` and cannot drop inherited variables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fidelity import proc
from fidelity.errors import UntrustedError, UsageError

GIT_TIMEOUT_S = 300.0
_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "diff.external=",
    "advice.detachedHead=false",
    "core.pager=cat",
)
_HARDENING = (
    *(arg for setting in _CONFIG for arg in ("-c", setting)),
    "--no-pager",
    "--no-optional-locks",
)


class GitError(UntrustedError):
    """A git command failed where the run cannot go on without it."""


def clean_env() -> dict[str, str]:
    env = proc.child_env()
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def git(cwd: Path | str, *args: str, check: bool = True, stdin: bytes | None = None) -> bytes:
    """Run ``git args`` in cwd and return stdout; raise GitError when check and it fails."""
    result = proc.run(
        ["git", *_HARDENING, *args],
        cwd=cwd,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
        stdin=stdin,
    )
    if result.status is proc.ProcStatus.NOT_FOUND:
        raise GitError("git was not found. Is it installed and on PATH?")
    if check and result.status is not proc.ProcStatus.OK:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {msg}")
    return result.stdout


def _ok(cwd: Path | str, *args: str) -> bool:
    result = proc.run(
        ["git", *_HARDENING, *args], cwd=cwd, env=clean_env(), timeout_s=GIT_TIMEOUT_S
    )
    return result.status is proc.ProcStatus.OK


def toplevel(path: Path | str) -> Path:
    """The top of the work tree that holds path; UsageError outside a repository."""
    try:
        out = git(path, "rev-parse", "--show-toplevel")
    except GitError as exc:
        raise UsageError(
            f"{path} is not inside a git repository. Run fidelity from your repository's "
            "work tree, or pass --repo."
        ) from exc
    return Path(out.decode().strip())


def rev_parse(repo: Path, rev: str) -> str:
    """The full commit sha for rev; UsageError naming the revision when it is unknown."""
    if rev.startswith("-"):
        raise UsageError(f"revision {rev!r} looks like an option; name a commit or branch")
    out = proc.run(
        [
            "git",
            *_HARDENING,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
        ],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    if out.status is not proc.ProcStatus.OK:
        raise UsageError(
            f"unknown revision {rev!r} in {repo}. Check the name with `git log --oneline`, "
            "or fetch it first."
        )
    return out.stdout.decode().strip()


def show_file(repo: Path, sha: str, path: str) -> bytes | None:
    """The bytes of path at commit sha, or None when the commit has no such file."""
    if not _ok(repo, "cat-file", "-e", f"{sha}:{path}"):
        return None
    return git(repo, "cat-file", "blob", f"{sha}:{path}")


def blob_id(repo: Path, sha: str, path: str) -> str | None:
    """The git blob id of path at sha, or None when absent."""
    result = proc.run(
        ["git", *_HARDENING, "rev-parse", "--verify", "--quiet", f"{sha}:{path}"],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    return result.stdout.decode().strip() if result.status is proc.ProcStatus.OK else None


def hash_object(data: bytes) -> str:
    """The blob id git would give these bytes (without writing them)."""
    return git(".", "hash-object", "--stdin", stdin=data).decode().strip()


def dirty_paths(worktree: Path | str, paths: Sequence[str] = ()) -> list[str]:
    """Modified, staged, deleted or untracked paths (ignored files excluded), sorted."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=none",
        "--",
        *paths,
    )
    entries = out.split(b"\0")
    found: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        code, name = entry[:2], entry[3:].decode(errors="surrogateescape")
        found.append(name)
        if code[:1] in (b"R", b"C"):
            i += 1  # the rename source follows as its own NUL-terminated field
    return sorted(found)


def status_entries(worktree: Path | str, untracked: bool = True) -> list[tuple[str, str]]:
    """(two-letter status, path) for every changed path; untracked too unless told not."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        f"--untracked-files={'all' if untracked else 'no'}",
        "--ignore-submodules=none",
    )
    entries = out.split(b"\0")
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if not entry:
            continue
        found.append((entry[:2].decode(), entry[3:].decode(errors="surrogateescape")))
        if entry[:1] in (b"R", b"C"):
            i += 1
    return found


def head_state(repo: Path | str) -> str:
    """HEAD's commit and, when on a branch, the branch: `<sha> refs/heads/main`."""
    sha = git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).decode().strip()
    branch = git(repo, "symbolic-ref", "--quiet", "HEAD", check=False).decode().strip()
    return f"{sha or '(no commit)'} {branch or '(detached)'}"


def index_listing(repo: Path | str) -> bytes:
    """What the index stages (mode, blob, stage, path), not its stat cache."""
    return git(repo, "ls-files", "--stage", "-z")


def refs(repo: Path | str) -> dict[str, str]:
    """Every ref and the object it names."""
    out = git(repo, "for-each-ref", "--format=%(objectname) %(refname)")
    pairs = (line.split(" ", 1) for line in out.decode(errors="replace").splitlines() if line)
    return {name: sha for sha, name in pairs}


def common_dir(repo: Path | str) -> Path:
    """The repository's shared .git directory (config, hooks, refs), absolute."""
    out = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(out.decode().strip())


def refresh_index(worktree: Path) -> None:
    """Re-hash every file of one of our own worktrees, so that status trusts no stat cache."""
    git(worktree, "update-index", "-q", "--really-refresh", check=False)


def worktree_add(repo: Path, dest: Path, sha: str) -> None:
    git(repo, "worktree", "add", "--detach", str(dest), sha)


def worktree_remove(repo: Path, dest: Path) -> bool:
    """Remove the worktree and prune its record; True when nothing is left behind."""
    removed = _ok(repo, "worktree", "remove", "--force", "--force", str(dest))
    _ok(repo, "worktree", "prune")
    return removed and not dest.exists()


def worktree_add_locked(repo: Path, dest: Path, sha: str, reason: str) -> None:
    """Add a detached worktree locked with reason, so that `git worktree prune` (ours or
    another process's) keeps it, and a later run can read who made it."""
    git(repo, "worktree", "add", "--detach", "--lock", "--reason", reason, str(dest), sha)


def worktree_unlock(repo: Path, dest: Path) -> bool:
    """Unlock a worktree (so that prune may drop its record); True when git agreed."""
    return _ok(repo, "worktree", "unlock", str(dest))


@dataclass(frozen=True, slots=True)
class WorktreeEntry:
    """One record of `git worktree list --porcelain`; `locked` is the reason, None if unlocked."""

    path: Path
    head: str = ""
    locked: str | None = None
    prunable: bool = False


def worktree_entries(repo: Path) -> list[WorktreeEntry]:
    """Every worktree git knows of, the main one first, with lock reasons and HEADs."""
    out = git(repo, "worktree", "list", "--porcelain", "-z")
    entries: list[WorktreeEntry] = []
    fields: dict[str, str] = {}
    for raw in [*out.split(b"\0"), b""]:
        if raw:
            key, _, value = raw.decode(errors="surrogateescape").partition(" ")
            fields[key] = value
            continue
        if "worktree" in fields:
            entries.append(
                WorktreeEntry(
                    Path(fields["worktree"]),
                    fields.get("HEAD", ""),
                    fields.get("locked"),
                    "prunable" in fields,
                )
            )
        fields = {}
    return entries


def worktree_list(repo: Path) -> list[Path]:
    out = git(repo, "worktree", "list", "--porcelain", "-z")
    return [
        Path(field[len(b"worktree ") :].decode())
        for field in out.split(b"\0")
        if field.startswith(b"worktree ")
    ]


# --- history queries (stale, landed, trailers) ---


def resolve(repo: Path, rev: str) -> str | None:
    """The full commit sha for rev, or None when it names no commit (never raises for it)."""
    if not rev or rev.startswith("-"):
        return None
    out = proc.run(
        [
            "git",
            *_HARDENING,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
        ],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    return out.stdout.decode().strip() if out.status is proc.ProcStatus.OK else None


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    """Whether ancestor is reachable from descendant (a commit is its own ancestor)."""
    result = proc.run(
        ["git", *_HARDENING, "merge-base", "--is-ancestor", ancestor, descendant],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
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
    out = git(repo, "log", "-z", "--format=%H%x1f%s", *flags, *revs, "--", *paths)
    found = []
    for record in out.decode(errors="replace").split("\0"):
        if record.strip():
            sha, _, subject = record.strip("\n").partition("\x1f")
            found.append((sha, subject))
    return found


def count_commits(repo: Path, revs: Sequence[str], paths: Sequence[str] = ()) -> int:
    """How many commits `git rev-list revs -- paths` lists."""
    return int(git(repo, "rev-list", "--count", *revs, "--", *paths).decode().strip() or 0)


def patch_ids(repo: Path, revs: Sequence[str]) -> dict[str, str]:
    """commit sha -> stable patch-id for the non-merge commits in revs (empty diffs omitted).

    `--stable` makes the id independent of hunk order, so a squash or cherry-pick of the
    same change is found whatever order its files were diffed in.
    """
    diff = git(
        repo,
        "log",
        "-p",
        "--no-merges",
        "--no-ext-diff",
        "--no-color",
        "--format=commit %H",
        *revs,
        "--",
    )
    if not diff.strip():
        return {}
    out = git(repo, "patch-id", "--stable", stdin=diff).decode()
    ids = {}
    for line in out.splitlines():
        pid, _, sha = line.partition(" ")
        ids[sha] = pid
    return ids


def pickaxe(repo: Path, ref: str, needle: str) -> list[tuple[str, str, int]]:
    """(sha, subject, net occurrences added) for commits on ref that change needle's count."""
    out = git(
        repo,
        "log",
        "-p",
        "--no-ext-diff",
        "--no-color",
        "--no-merges",
        "-S",
        needle,
        "--format=%x00%H%x1f%s",
        ref,
        "--",
    )
    found = []
    for record in out.decode(errors="replace").split("\0")[1:]:
        head, _, body = record.partition("\n")
        sha, _, subject = head.partition("\x1f")
        net = 0
        for line in body.splitlines():
            if line.startswith("+") and not line.startswith("+++ "):
                net += line.count(needle)
            elif line.startswith("-") and not line.startswith("--- "):
                net -= line.count(needle)
        found.append((sha, subject, net))
    return found


def grep_files(repo: Path, rev: str, needle: str) -> list[str]:
    """Paths in rev's tree whose content holds needle as a fixed string."""
    result = proc.run(
        ["git", *_HARDENING, "grep", "-z", "-l", "-F", "-I", "-e", needle, rev, "--"],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
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
    for line in out.decode(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            found.append((key.strip(), value.strip()))
    return found


def commit_message(repo: Path, sha: str) -> bytes:
    """The raw message of a commit (subject, body and trailers)."""
    return git(repo, "log", "-1", "--format=%B", sha, "--")


_FIELD, _TRAILER, _KV = "\x1f", "\x1e", "\x1d"
_SEPARATORS = (_FIELD, _TRAILER, _KV)


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


def object_ids(repo: Path, names: Sequence[str]) -> list[str | None]:
    """The object id each name (`rev^{commit}`, `rev:path`) resolves to, or None, answered
    by one `git cat-file --batch-check` for all of them."""
    usable = [n for n in names if n and "\n" not in n and not n.startswith("-")]
    if not usable:
        return [None] * len(names)
    out = git(
        repo,
        "cat-file",
        "--batch-check=%(objectname)",
        stdin="".join(f"{n}\n" for n in usable).encode(),
    )
    answers = iter(out.decode(errors="replace").splitlines())
    found: list[str | None] = []
    for name in names:
        if name in usable:
            line = next(answers, "")
            found.append(line if line and " " not in line else None)
        else:
            found.append(None)
    return found


def path_in_tree(repo: Path, rev: str | None, path: str) -> bool:
    """Whether path (file or directory) exists at rev, or in the index when rev is None."""
    if rev is None:
        return bool(git(repo, "ls-files", "-z", "--", path).strip(b"\0"))
    return _ok(repo, "cat-file", "-e", f"{rev}:{path.strip('/')}")


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


def merge_base(repo: Path, a: str, b: str) -> str | None:
    """The best common ancestor of a and b, or None when their histories are unrelated."""
    result = proc.run(
        ["git", *_HARDENING, "merge-base", a, b],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    return result.stdout.decode().strip() if result.status is proc.ProcStatus.OK else None


def diff_patch_id(repo: Path, base: str, tip: str) -> str | None:
    """The stable patch-id of the whole diff base..tip (what a squash of it would carry)."""
    diff = git(repo, "diff", "--no-ext-diff", "--no-color", "--no-renames", base, tip, "--")
    if not diff.strip():
        return None
    out = git(repo, "patch-id", "--stable", stdin=diff).decode().split()
    return out[0] if out else None


def merge_bases(repo: Path, shas: Sequence[str]) -> list[str]:
    """Every best common ancestor of all of shas at once (`merge-base --octopus --all`);
    empty when they share no history. Ancestors of these are ancestors of every sha."""
    if len(shas) < 2:
        return list(shas)
    result = proc.run(
        ["git", *_HARDENING, "merge-base", "--octopus", "--all", *shas],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    return result.stdout.decode().split() if result.status is proc.ProcStatus.OK else []


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
        "--format=%H%x1f%s",
        tip,
        *(f"^{e}" for e in exclude),
        "--",
        *paths,
    )
    found = []
    for record in out.decode(errors="replace").split("\0"):
        if record:
            sha, _, subject = record.partition("\x1f")
            found.append((sha, subject))
    return found


def changed_paths(repo: Path, tip: str, exclude: Sequence[str]) -> dict[str, frozenset[str]]:
    """sha -> the paths its change touches, for the non-merge commits reachable from tip and
    not from exclude (`log --name-only --no-renames`: tree diffs only, no content)."""
    out = git(
        repo,
        "log",
        "-z",
        "--no-merges",
        "--no-renames",
        "--name-only",
        "--format=%x01%H",
        tip,
        *(f"^{e}" for e in exclude),
        "--",
    )
    found = {}
    for chunk in out.decode(errors="surrogateescape").split("\x01"):
        if not chunk:
            continue
        sha, _, rest = chunk.partition("\0")
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
        "--format=%x01%H",
        "--stdin",
        stdin="".join(f"{sha}\n" for sha in shas).encode(),
    )
    found: dict[str, frozenset[str]] = {sha: frozenset() for sha in shas}
    for chunk in out.decode(errors="surrogateescape").split("\x01"):
        sha, _, rest = chunk.partition("\0")
        if sha in found:
            found[sha] = frozenset(p for p in rest.lstrip("\n").split("\0") if p)
    return found


def _patch_ids(repo: Path, diff: bytes) -> dict[str, str]:
    if not diff.strip():
        return {}
    out = git(repo, "patch-id", "--stable", stdin=diff).decode()
    ids = {}
    for line in out.splitlines():
        pid, _, sha = line.partition(" ")
        ids[sha] = pid
    return ids


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
        "--no-renames",
        "--no-ext-diff",
        "--no-color",
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
    common = ("diff-tree", "--stdin", "--no-renames", "--no-ext-diff", "--no-color", "-r")
    forward = _patch_ids(repo, git(repo, *common, "-p", stdin=lines))
    backward = _patch_ids(repo, git(repo, *common, "-p", "-R", stdin=lines))
    out = git(repo, *common, "--name-only", "-z", stdin=lines)
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


def blobs(repo: Path, names: Sequence[str]) -> list[bytes | None]:
    """The contents of `rev:path` names from one `git cat-file --batch`; None when missing."""
    if not names:
        return []
    out = git(repo, "cat-file", "--batch", stdin="".join(f"{n}\n" for n in names).encode())
    found: list[bytes | None] = []
    pos = 0
    for _ in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit() or header[1] == b"missing":
            found.append(None)  # "<name> missing" (a name may hold spaces)
            continue
        size = int(header[2])
        found.append(out[pos : pos + size])
        pos += size + 1
    return found


# --- controls (worktrees with edits, trees from two revisions) ---

_TEMP_IDENTITY = ("-c", "user.name=fidelity", "-c", "user.email=fidelity@fidelity.invalid")


def _git_index(cwd: Path | str, index: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run git with GIT_INDEX_FILE pointing at a temporary index, never the user's."""
    env = clean_env()
    env["GIT_INDEX_FILE"] = str(index)
    result = proc.run(
        ["git", *_HARDENING, *args], cwd=cwd, env=env, timeout_s=GIT_TIMEOUT_S, stdin=stdin
    )
    if result.status is not proc.ProcStatus.OK:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {msg}")
    return result.stdout


def _commit_tree(repo: Path, tree: str, parent: str, message: str) -> str:
    """An unreferenced commit (garbage once unused) so a worktree can check the tree out."""
    out = git(repo, *_TEMP_IDENTITY, "commit-tree", tree, "-p", parent, "-m", message)
    return out.decode().strip()


def snapshot_uncommitted(repo: Path, parent: str, scratch: Path) -> str:
    """A commit of the work tree as it is (tracked and untracked, not ignored), on parent.

    Built in a copy of the index under scratch, so the user's index file is never written.
    """
    index = scratch / "index"
    source = Path(repo, git(repo, "rev-parse", "--git-path", "index").decode().strip())
    if source.is_file():
        index.write_bytes(source.read_bytes())
    _git_index(repo, index, "add", "-A", "--", ":/")
    tree = _git_index(repo, index, "write-tree").decode().strip()
    return _commit_tree(repo, tree, parent, "fidelity: uncommitted changes")


def _under(path: bytes, prefixes: Sequence[str]) -> bool:
    name = path.decode(errors="surrogateescape")
    return any(name == p or name.startswith(p + "/") for p in prefixes)


def overlay_commit(repo: Path, base: str, overlay: str, paths: Sequence[str], scratch: Path) -> str:
    """A commit of base's tree with everything under paths taken from overlay instead."""
    prefixes = [p.strip("/") for p in paths]
    entries = []
    for sha, keep_inside in ((base, False), (overlay, True)):
        out = git(repo, "ls-tree", "-r", "-z", "--full-tree", sha)
        for entry in out.split(b"\0"):
            if entry and _under(entry.partition(b"\t")[2], prefixes) is keep_inside:
                entries.append(entry + b"\0")
    index = scratch / "overlay-index"
    _git_index(repo, index, "update-index", "-z", "--index-info", stdin=b"".join(entries))
    tree = _git_index(repo, index, "write-tree").decode().strip()
    return _commit_tree(repo, tree, base, f"fidelity: {', '.join(prefixes)} from {overlay[:12]}")


def apply_patch(worktree: Path, patch: bytes) -> str:
    """Apply a unified diff to one of our own worktrees; '' on success, else git's reason."""
    result = proc.run(
        ["git", *_HARDENING, "apply", "--whitespace=nowarn", "-"],
        cwd=worktree,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
        stdin=patch,
    )
    if result.status is proc.ProcStatus.OK:
        return ""
    return result.stderr.decode(errors="replace").strip() or result.error or "git apply failed"


def changed_files(repo: Path, base: str, tip: str) -> list[str]:
    """Paths the change from the merge base of base and tip to tip touches."""
    out = git(
        repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", f"{base}...{tip}", "--"
    )
    return sorted(p.decode(errors="surrogateescape") for p in out.split(b"\0") if p)


# --- preflight: the content a commit would record, hooks, merge drivers ---

# the empty tree's id (`git hash-object -t tree /dev/null`): the base of a root commit
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _git_with(cwd: Path | str, index: Path | None, *args: str, stdin: bytes | None = None) -> bytes:
    """Run git, reading the given index file instead of the repository's own when one is named
    (a hook for `git commit -a` or `git commit PATH` is handed a temporary index)."""
    return (
        git(cwd, *args, stdin=stdin)
        if index is None
        else _git_index(cwd, index, *args, stdin=stdin)
    )


def _name_status(out: bytes) -> list[tuple[str, str]]:
    fields = out.split(b"\0")
    found = []
    for status, name in zip(fields[0::2], fields[1::2], strict=False):
        if status and name:
            found.append((status.decode()[:1], name.decode(errors="surrogateescape")))
    return found


def _untracked(repo: Path) -> list[str]:
    out = git(repo, "ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", ":/")
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


def staged_changes(repo: Path, base: str, index: Path | None = None) -> list[tuple[str, str]]:
    """(A|M|D|T, path) for every path the index changes against base (a commit or tree)."""
    out = _git_with(
        repo,
        index,
        "diff",
        "--cached",
        "--name-status",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        base,
        "--",
    )
    return _name_status(out)


def worktree_changes(repo: Path, base: str) -> list[tuple[str, str]]:
    """(A|M|D|T, path) for every path the work tree changes against base, untracked as A."""
    out = git(repo, "diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", base, "--")
    return _name_status(out) + [("A", p) for p in _untracked(repo)]


def unstaged_paths(repo: Path, index: Path | None = None) -> frozenset[str]:
    """Paths whose work-tree file is not what the index holds: modified, deleted, untracked."""
    out = _git_with(repo, index, "diff", "--name-only", "-z", "--no-ext-diff", "--")
    tracked = {p.decode(errors="surrogateescape") for p in out.split(b"\0") if p}
    return frozenset(tracked | set(_untracked(repo)))


def index_entries(repo: Path, index: Path | None = None) -> dict[str, str]:
    """path -> blob id for every file the index stages (stage 0; submodules left out)."""
    listing = _git_with(repo, index, "ls-files", "--stage", "-z", "--full-name", "--", ":/")
    entries = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[2] == b"0" and parts[0] != b"160000":
            entries[name.decode(errors="surrogateescape")] = parts[1].decode()
    return entries


def cat_blobs(repo: Path, blobs: Sequence[str]) -> list[bytes]:
    """The bytes of each blob id, in order, read by one `git cat-file --batch`."""
    if not blobs:
        return []
    out = git(repo, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in blobs).encode())
    contents, pos = [], 0
    for blob in blobs:
        header_end = out.index(b"\n", pos)
        sha, kind, *size = out[pos:header_end].decode().split()
        if sha != blob or kind != "blob" or len(size) != 1:
            raise GitError(f"git cat-file --batch answered {sha} {kind} for blob {blob}")
        start = header_end + 1
        contents.append(out[start : start + int(size[0])])
        pos = start + int(size[0]) + 1
    return contents


def checkout_index(repo: Path, dest: Path, index: Path | None = None) -> None:
    """Write every staged file under dest (which must exist); the index is only read."""
    _git_with(repo, index, "checkout-index", "--all", "--force", f"--prefix={dest}/")


def apply_check(cwd: Path, patch: bytes) -> str:
    """'' when the unified diff would apply to the files under cwd, else git's reason; nothing
    is written."""
    result = proc.run(
        ["git", *_HARDENING, "apply", "--check", "--whitespace=nowarn", "-"],
        cwd=cwd,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
        stdin=patch,
    )
    if result.status is proc.ProcStatus.OK:
        return ""
    return result.stderr.decode(errors="replace").strip() or result.error or "git apply failed"


def merge_file(
    cwd: Path, ours: Path, base: Path, theirs: Path, labels: Sequence[str], marker_size: int = 7
) -> tuple[bytes, int]:
    """git's own three-way merge of three files: (result, number of conflicts); nothing is
    written."""
    result = proc.run(
        [
            "git",
            *_HARDENING,
            "merge-file",
            "-p",
            f"--marker-size={marker_size}",
            *(arg for label in labels for arg in ("-L", label)),
            str(ours),
            str(base),
            str(theirs),
        ],
        cwd=cwd,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    code = result.returncode
    if code is None or not 0 <= code < 128:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git merge-file failed in {cwd}: {msg}")
    return result.stdout, code


def hooks_dir(repo: Path) -> Path:
    """Where git looks for this repository's hooks: core.hooksPath when the user set one
    (our own hardening turns hooks off, so it is left out of this one query), else the
    common directory's hooks/."""
    result = proc.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "--no-pager",
            "--no-optional-locks",
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "hooks",
        ],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    if result.status is not proc.ProcStatus.OK:
        raise GitError(f"git rev-parse --git-path hooks failed in {repo}")
    return Path(result.stdout.decode().strip())


def config_local(repo: Path, key: str) -> str | None:
    """The value of key in the repository's own config file, or None when it is unset."""
    result = proc.run(
        ["git", *_HARDENING, "config", "--local", "--get", key],
        cwd=repo,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    return result.stdout.decode().rstrip("\n") if result.status is proc.ProcStatus.OK else None


def set_config_local(repo: Path, key: str, value: str) -> None:
    """Write key = value into the repository's own config file."""
    git(repo, "config", "--local", key, value)


def ignored_paths(root: Path) -> list[str] | None:
    """Untracked paths git ignores under root (folders end in ``/``), relative to root;
    None when root is not inside a git work tree."""
    result = proc.run(
        [
            "git",
            *_HARDENING,
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
        cwd=root,
        env=clean_env(),
        timeout_s=GIT_TIMEOUT_S,
    )
    if result.status is not proc.ProcStatus.OK:
        return None
    return [p.decode("utf-8", errors="surrogateescape") for p in result.stdout.split(b"\0") if p]


def tree_files(repo: Path, sha: str) -> list[str]:
    """Every file path in the tree of commit sha."""
    out = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", sha)
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


def leftovers(worktree: Path) -> list[str]:
    """What a run left in one of our own worktrees: changed tracked files, untracked and
    ignored files; `__pycache__` folders aside (their staleness is handled by mtimes)."""
    out = git(
        worktree,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--ignore-submodules=none",
    )
    found = []
    for entry in out.split(b"\0"):
        name = entry[3:].decode(errors="surrogateescape")
        if len(entry) > 3 and entry[:1] in b"MADRCU?! " and "__pycache__" not in name.split("/"):
            found.append(entry[:2].decode() + " " + name)
    return found


def reset_worktree(worktree: Path) -> bool:
    """Put one of our own worktrees back to its commit: tracked files reset, every untracked
    and ignored file removed except `__pycache__`. True when a tracked file had changed."""
    changed = bool(git(worktree, "status", "--porcelain", "-z", "--untracked-files=no").strip())
    git(worktree, "reset", "-q", "--hard")
    git(worktree, "clean", "-f", "-f", "-d", "-x", "-q", "-e", "__pycache__")
    return changed


def patch_applies(repo: Path, sha: str, patch: bytes, scratch: Path) -> str:
    """'' when patch applies to the tree of sha (checked in a scratch index), else why not."""
    index = scratch / "check-index"
    _git_index(repo, index, "read-tree", sha)
    env = clean_env()
    env["GIT_INDEX_FILE"] = str(index)
    result = proc.run(
        ["git", *_HARDENING, "apply", "--cached", "--check", "--whitespace=nowarn", "-"],
        cwd=repo,
        env=env,
        timeout_s=GIT_TIMEOUT_S,
        stdin=patch,
    )
    if result.status is proc.ProcStatus.OK:
        return ""
    return result.stderr.decode(errors="replace").strip() or result.error or "git apply failed"


def diff_text(repo: Path, old: str, new: str, paths: Sequence[str] = ()) -> str:
    """The unified diff (3 lines of context) that turns old into new, text files only."""
    out = git(
        repo, "diff", "--no-ext-diff", "--no-color", "--no-renames", "-U3", old, new, "--", *paths
    )
    return out.decode("utf-8", errors="surrogateescape")
