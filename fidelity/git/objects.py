"""Revisions and the objects they name: the commit a revision is, a file's bytes or blob id
at a commit, a tree's paths, and many objects read by one `git cat-file --batch`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fidelity.errors import UsageError
from fidelity.git.command import GitError, answer, attempt, git
from fidelity.proc import ProcStatus


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
    """The bytes of path at commit sha, or None when the commit has no such file (or it is
    not a file). One git process; a file found at a full commit sha is kept, since it cannot
    change (a run reads its table at the harness commit and again for each side)."""
    key = (str(repo), sha, path)
    if key in _FILES:
        return _FILES[key]
    result = attempt(repo, "cat-file", "blob", f"{sha}:{path}")
    if result.status is ProcStatus.NOT_FOUND:
        raise GitError("git was not found. Is it installed and on PATH?")
    data = result.stdout if result.status is ProcStatus.OK else None
    if data is not None and _FULL_SHA.fullmatch(sha):
        if len(_FILES) >= _KEPT:
            _FILES.clear()
        _FILES[key] = data
    return data


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_KEPT = 16  # files kept at once: a run needs one or two
_FILES: dict[tuple[str, str, str], bytes] = {}


def blob_id(repo: Path, sha: str, path: str) -> str | None:
    """The git blob id of path at sha, or None when absent."""
    return answer(attempt(repo, "rev-parse", "--verify", "--quiet", f"{sha}:{path}"))


def is_link(repo: Path, sha: str, path: str) -> bool:
    """Whether path is a symbolic link in the tree of sha (mode 120000)."""
    out = attempt(repo, "ls-tree", "-z", sha, "--", f":(literal){path}").stdout
    return out.startswith(b"120000 ")


def hash_object(data: bytes) -> str:
    """The blob id git would give these bytes (without writing them)."""
    return git(".", "hash-object", "--stdin", stdin=data).decode().strip()


def resolve(repo: Path, rev: str) -> str | None:
    """The full commit sha for rev, or None when it names no commit (never raises for it)."""
    if not rev or rev.startswith("-"):
        return None
    return answer(
        attempt(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    )


def tree_of(repo: Path, sha: str) -> str:
    """The tree id of commit sha: two commits of the same files share it."""
    out = git(repo, "rev-parse", "--verify", "--end-of-options", f"{sha}^{{tree}}")
    return out.decode().strip()


def tree_files(repo: Path, sha: str) -> list[str]:
    """Every file path in the tree of commit sha."""
    out = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", sha)
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


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


def blobs(repo: Path, names: Sequence[str]) -> list[bytes | None]:
    """The contents of `rev:path` names from one `git cat-file --batch`; None when missing.
    A name holding a line break, which the batch reads as two, is asked for alone."""
    if any("\n" in n for n in names):
        plain = [n for n in names if "\n" not in n]
        batched = dict(zip(plain, blobs(repo, plain), strict=True))
        return [batched[n] if n in batched else _blob(repo, n) for n in names]
    if not names:
        return []
    listed = "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")
    out = git(repo, "cat-file", "--batch", stdin=listed)
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


def _blob(repo: Path, name: str) -> bytes | None:
    result = attempt(repo, "cat-file", "blob", name)
    return result.stdout if result.status is ProcStatus.OK else None


def files_naming(repo: Path, sha: str, word: str, *pathspecs: str) -> list[str]:
    """The text files of commit sha (those pathspecs match) that hold word as a whole word."""
    result = attempt(repo, "grep", "-l", "-z", "-w", "-F", "-e", word, sha, "--", *pathspecs)
    if result.status is ProcStatus.OK:  # -z: names as they are, unquoted
        names = result.stdout.decode(errors="surrogateescape").split("\0")
        return [name.partition(":")[2] for name in names if name]
    if result.status is ProcStatus.FAILED and result.returncode == 1 and not result.stderr:
        return []  # no match
    raise GitError(f"git grep for {word!r} failed in {repo}: {result.stderr.decode().strip()}")
