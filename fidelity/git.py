"""The one module that starts git, hardened against the user's setup (the history queries
in `gitlog` run through `attempt` and `git` here).

Every call drops inherited ``GIT_*`` variables (a hook or an IDE may have set GIT_DIR or
GIT_INDEX_FILE), disables hooks, pagers, external diff drivers and fsmonitor, and uses
``--no-optional-locks`` so that read-only commands never refresh the user's index file.
GitPython is not used to spawn here because its ``Git.execute`` always starts from
``os.environ`` and cannot drop inherited variables.
"""

from __future__ import annotations

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


def attempt(
    cwd: Path | str, *args: str, stdin: bytes | None = None, index: Path | None = None
) -> proc.ProcResult:
    """``git args`` hardened, in a clean environment; with index, reading and writing that
    index file instead of the repository's own (never the user's)."""
    env = clean_env()
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return proc.run(
        ["git", *_HARDENING, *args], cwd=cwd, env=env, timeout_s=GIT_TIMEOUT_S, stdin=stdin
    )


def answer(result: proc.ProcResult) -> str | None:
    """The stripped output of a query that succeeded, None when it did not."""
    return result.stdout.decode().strip() if result.status is proc.ProcStatus.OK else None


def _reason(result: proc.ProcResult, what: str) -> str:
    """'' when git succeeded, else its own words (or what failed)."""
    if result.status is proc.ProcStatus.OK:
        return ""
    return result.stderr.decode(errors="replace").strip() or result.error or f"{what} failed"


def git(
    cwd: Path | str,
    *args: str,
    check: bool = True,
    stdin: bytes | None = None,
    index: Path | None = None,
) -> bytes:
    """Run ``git args`` in cwd and return stdout; raise GitError when check and it fails.
    index: a temporary index file to use instead of the repository's (see `_run`)."""
    result = attempt(cwd, *args, stdin=stdin, index=index)
    if result.status is proc.ProcStatus.NOT_FOUND:
        raise GitError("git was not found. Is it installed and on PATH?")
    if check and result.status is not proc.ProcStatus.OK:
        msg = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {msg}")
    return result.stdout


def succeeds(cwd: Path | str, *args: str) -> bool:
    return attempt(cwd, *args).status is proc.ProcStatus.OK


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
    sha = resolve(repo, rev)
    if sha is None:
        raise UsageError(
            f"unknown revision {rev!r} in {repo}. Check the name with `git log --oneline`, "
            "or fetch it first."
        )
    return sha


def show_file(repo: Path, sha: str, path: str) -> bytes | None:
    """The bytes of path at commit sha, or None when the commit has no such file."""
    if not succeeds(repo, "cat-file", "-e", f"{sha}:{path}"):
        return None
    return git(repo, "cat-file", "blob", f"{sha}:{path}")


def blob_id(repo: Path, sha: str, path: str) -> str | None:
    """The git blob id of path at sha, or None when absent."""
    return answer(attempt(repo, "rev-parse", "--verify", "--quiet", f"{sha}:{path}"))


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
    removed = succeeds(repo, "worktree", "remove", "--force", "--force", str(dest))
    succeeds(repo, "worktree", "prune")
    return removed and not dest.exists()


def worktree_add_locked(repo: Path, dest: Path, sha: str, reason: str) -> None:
    """Add a detached worktree locked with reason, so that `git worktree prune` (ours or
    another process's) keeps it, and a later run can read who made it."""
    git(repo, "worktree", "add", "--detach", "--lock", "--reason", reason, str(dest), sha)


def worktree_unlock(repo: Path, dest: Path) -> bool:
    """Unlock a worktree (so that prune may drop its record); True when git agreed."""
    return succeeds(repo, "worktree", "unlock", str(dest))


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


def resolve(repo: Path, rev: str) -> str | None:
    """The full commit sha for rev, or None when it names no commit (never raises for it)."""
    if not rev or rev.startswith("-"):
        return None
    return answer(
        attempt(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    )


# --- controls (worktrees with edits, trees from two revisions) ---

_TEMP_IDENTITY = ("-c", "user.name=fidelity", "-c", "user.email=fidelity@fidelity.invalid")


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
    git(repo, "add", "-A", "--", ":/", index=index)
    tree = git(repo, "write-tree", index=index).decode().strip()
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
    git(repo, "update-index", "-z", "--index-info", stdin=b"".join(entries), index=index)
    tree = git(repo, "write-tree", index=index).decode().strip()
    return _commit_tree(repo, tree, base, f"fidelity: {', '.join(prefixes)} from {overlay[:12]}")


def apply_patch(worktree: Path, patch: bytes) -> str:
    """Apply a unified diff to one of our own worktrees; '' on success, else git's reason."""
    return _reason(attempt(worktree, "apply", "--whitespace=nowarn", "-", stdin=patch), "git apply")


def changed_files(repo: Path, base: str, tip: str) -> list[str]:
    """Paths the change from the merge base of base and tip to tip touches."""
    out = git(
        repo, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", f"{base}...{tip}", "--"
    )
    return sorted(p.decode(errors="surrogateescape") for p in out.split(b"\0") if p)


# --- preflight: the content a commit would record, hooks, merge drivers ---

# the empty tree's id (`git hash-object -t tree /dev/null`): the base of a root commit
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


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
    out = git(
        repo,
        "diff",
        "--cached",
        "--name-status",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        base,
        "--",
        index=index,
    )
    return _name_status(out)


def worktree_changes(repo: Path, base: str) -> list[tuple[str, str]]:
    """(A|M|D|T, path) for every path the work tree changes against base, untracked as A."""
    out = git(repo, "diff", "--name-status", "-z", "--no-renames", "--no-ext-diff", base, "--")
    return _name_status(out) + [("A", p) for p in _untracked(repo)]


def unstaged_paths(repo: Path, index: Path | None = None) -> frozenset[str]:
    """Paths whose work-tree file is not what the index holds: modified, deleted, untracked."""
    out = git(repo, "diff", "--name-only", "-z", "--no-ext-diff", "--", index=index)
    tracked = {p.decode(errors="surrogateescape") for p in out.split(b"\0") if p}
    return frozenset(tracked | set(_untracked(repo)))


def staged_files(repo: Path, index: Path | None = None) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) for every file the index stages (stage 0; submodules left
    out); mode 120000 is a symbolic link."""
    listing = git(repo, "ls-files", "--stage", "-z", "--full-name", "--", ":/", index=index)
    entries = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[2] == b"0" and parts[0] != b"160000":
            entries[name.decode(errors="surrogateescape")] = (parts[0].decode(), parts[1].decode())
    return entries


def index_entries(repo: Path, index: Path | None = None) -> dict[str, str]:
    """path -> blob id for every file the index stages (stage 0; submodules left out)."""
    return {path: blob for path, (_, blob) in staged_files(repo, index).items()}


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


def read_tree(repo: Path, sha: str, index: Path) -> None:
    """Write commit sha's tree into the index file `index` (a scratch one, never the
    user's), so the tree can be judged as a staged content."""
    git(repo, "read-tree", f"{sha}^{{tree}}", index=index)


def state_files(repo: Path, names: Sequence[str]) -> dict[str, str]:
    """The text of each file git keeps while an operation waits for its commit (MERGE_HEAD,
    CHERRY_PICK_HEAD, REVERT_HEAD, SQUASH_MSG), '' for one that is not there; one git call
    finds where all of them live (a linked worktree keeps its own)."""
    args = [arg for name in names for arg in ("--git-path", name)]
    where = (answer(attempt(repo, "rev-parse", "--path-format=absolute", *args)) or "").split("\n")
    texts = {}
    for name, path in zip(names, where, strict=False):
        try:
            texts[name] = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            texts[name] = ""
    return {name: texts.get(name, "") for name in names}


def merge_heads(repo: Path) -> list[str]:
    """The commits being merged into HEAD while a merge waits for its commit (MERGE_HEAD),
    or [] when no merge is in progress."""
    text = state_files(repo, ["MERGE_HEAD"])["MERGE_HEAD"]
    return [line.strip() for line in text.splitlines() if line.strip()]


def checkout_index(repo: Path, dest: Path, index: Path | None = None) -> None:
    """Write every staged file under dest (which must exist); the index is only read."""
    git(repo, "checkout-index", "--all", "--force", f"--prefix={dest}/", index=index)


def apply_check(cwd: Path, patch: bytes) -> str:
    """'' when the unified diff would apply to the files under cwd, else git's reason; nothing
    is written."""
    result = attempt(cwd, "apply", "--check", "--whitespace=nowarn", "-", stdin=patch)
    return _reason(result, "git apply")


def merge_file(
    cwd: Path, ours: Path, base: Path, theirs: Path, labels: Sequence[str], *, marker_size: int = 7
) -> tuple[bytes, int]:
    """git's own three-way merge of three files: (result, number of conflicts); nothing is
    written."""
    result = attempt(
        cwd,
        "merge-file",
        "-p",
        f"--marker-size={marker_size}",
        *(arg for label in labels for arg in ("-L", label)),
        str(ours),
        str(base),
        str(theirs),
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
    result = attempt(repo, "config", "--local", "--get", key)
    return result.stdout.decode().rstrip("\n") if result.status is proc.ProcStatus.OK else None


def aliases(cwd: Path) -> dict[str, str]:
    """git's aliases as a command run in cwd sees them (system, global and the repository's
    config): lower-case name -> value; {} when there are none."""
    env = clean_env()
    env.pop("GIT_CONFIG_NOSYSTEM", None)  # a system-wide alias applies to the user's commit
    result = proc.run(
        ["git", "--no-pager", "config", "--null", "--get-regexp", r"^alias\."],
        cwd=cwd,
        env=env,
        timeout_s=GIT_TIMEOUT_S,
    )
    if result.status is not proc.ProcStatus.OK:
        return {}
    found = {}
    for entry in result.stdout.split(b"\0"):
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        if key.lower().startswith("alias."):
            found[key[6:].lower()] = value
    return found


def set_config_local(repo: Path, key: str, value: str) -> None:
    """Write key = value into the repository's own config file."""
    git(repo, "config", "--local", key, value)


def unset_config_section(repo: Path, section: str) -> None:
    """Remove a whole section (`merge.fidelity-records`) from the repository's config."""
    git(repo, "config", "--local", "--remove-section", section)


def ignored_paths(root: Path) -> list[str] | None:
    """Untracked paths git ignores under root (folders end in ``/``), relative to root;
    None when root is not inside a git work tree."""
    result = attempt(
        root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
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
    git(repo, "read-tree", sha, index=index)
    args = ("apply", "--cached", "--check", "--whitespace=nowarn", "-")
    return _reason(attempt(repo, *args, stdin=patch, index=index), "git apply")


def diff_text(repo: Path, old: str, new: str, paths: Sequence[str] = ()) -> str:
    """The unified diff (3 lines of context) that turns old into new, text files only."""
    out = git(
        repo, "diff", "--no-ext-diff", "--no-color", "--no-renames", "-U3", old, new, "--", *paths
    )
    return out.decode("utf-8", errors="surrogateescape")
