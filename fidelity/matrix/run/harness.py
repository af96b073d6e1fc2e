"""The harness: where the case table and the prediction of a run are read from.

The table is read once, from the checkout (default) or a committed revision, and both sides
run that same table; a prediction comes from the same place, so that it is fixed before
the measurement it predicts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fidelity import config, schema
from fidelity.errors import UsageError
from fidelity.git import log, objects, worktrees
from fidelity.matrix.cases import table as casetable
from fidelity.matrix.cases.table import WRITE_ONE, Matrix
from fidelity.matrix.run import harness_tree
from fidelity.matrix.verdict import predict
from fidelity.matrix.verdict.accept import DATE, Allowance
from fidelity.matrix.verdict.findings import Harness
from fidelity.matrix.verdict.outcome import WORKTREE
from fidelity.matrix.verdict.predict import Prediction


def table_path(repo: Path, cases: str | Path) -> str:
    """The table's path relative to the repository top, as git names it."""
    path = Path(cases)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(repo.resolve())
        except ValueError as exc:
            raise UsageError(f"case table {cases} is outside the repository {repo}") from exc
    return path.as_posix()


def cases_table(repo: Path, cases: str | Path | None) -> str:
    """The case table a run reads, relative to the repository: `cases`, or (None) the one
    `[tool.fidelity]` names in the repository's pyproject.toml."""
    return table_path(repo, cases or config.setting(repo, "cases", config.DEFAULT_CASES))


MISSING = {
    "case table": WRITE_ONE,
    "prediction": "check the path given to --expect (relative to the repository)",
}


def harness_file(
    repo: Path, rel: str, harness_rev: str | None, sha: str, what: str = "case table"
) -> tuple[bytes, bool]:
    """A file that defines the comparison (`what`: a key of MISSING), read from the harness;
    and whether it is committed."""
    if harness_rev is None:
        path = repo / rel
        if not path.is_file():
            raise UsageError(f"no {what} at {path}: {MISSING[what]}")
        data = path.read_bytes()
        return data, objects.show_file(repo, sha, rel) == data
    committed = objects.show_file(repo, sha, rel)
    if committed is None:
        raise UsageError(
            f"the harness revision {harness_rev} has no {what} {rel}: commit it there, or "
            "name another harness revision with --harness"
        )
    return committed, True


def read_harness(
    repo: Path, rel: str, harness_rev: str | None, dirty: Sequence[str] | None = None
) -> tuple[Harness, Matrix]:
    """Read the case table once: from the checkout (default) or from a committed revision.
    `dirty`: the checkout's changed and untracked paths, when the caller has just read them
    (else they are read here)."""
    sha = objects.rev_parse(repo, harness_rev or "HEAD")
    data, committed = harness_file(repo, rel, harness_rev, sha)
    if harness_rev is not None:
        dirty_paths: tuple[str, ...] = ()
    else:
        dirty_paths = tuple(sorted(dirty) if dirty is not None else worktrees.dirty_paths(repo))
    rev = harness_rev or WORKTREE
    matrix = casetable.parse(data, f"{rel}@{harness_rev or 'checkout'}")
    reads = matrix.reads_harness()
    tree = harness_tree.tree(repo, sha, from_checkout=reads and harness_rev is None)
    if reads:
        _refuse_links_out(repo, tree, matrix, rel)
    harness = Harness(
        rev,
        sha,
        bool(dirty_paths),
        dirty_paths,
        rel,
        matrix.sha256,
        not committed,
        tree=tree,
        reads=reads,
        paths=matrix.harness_paths,
    )
    return harness, matrix


def _refuse_links_out(repo: Path, tree: str, matrix: Matrix, rel: str) -> None:
    """UsageError when a link the harness folder would hold leads out of it: a case could
    write through it into a file both sides read, and the harness would look untouched."""
    out = harness_tree.links_out(repo, tree, matrix.harness_paths)
    if out:
        more = f" and {len(out) - 3} more" if len(out) > 3 else ""
        raise UsageError(
            f"{rel} names {{harness}}, and the harness files (tree {tree[:12]}) hold links "
            f"that lead out of the harness folder: {'; '.join(out[:3])}{more}. A case could "
            "write through one into a file both sides read, unseen. Make each a file, point "
            "it inside the harness, or leave it out with `harness_paths` in [matrix]"
        )


def read_prediction(
    repo: Path, expect: str | Path, harness: Harness, harness_rev: str | None, matrix: Matrix
) -> Prediction:
    """The prediction, from the same harness as the table, resolved before anything runs."""
    rel = table_path(repo, expect)
    data, committed = harness_file(repo, rel, harness_rev, harness.sha, "prediction")
    tags = {c.id: c.tags for c in matrix.cases}
    return predict.load(data, rel, tags, objects.hash_object(data), committed)


def accept_state(
    repo: Path, accepts: Sequence[Allowance], candidate: str, today: dt.date
) -> tuple[Allowance, ...]:
    """The table's accepted findings, each marked expired when its date has passed or the
    candidate contains its commit; UsageError for an `until` that is neither."""
    found = []
    for a in accepts:
        why = ""
        if a.until is not None and DATE.match(a.until):
            try:
                end = dt.date.fromisoformat(a.until)
            except ValueError as exc:
                raise UsageError(f"[[accept]] {a.label()}: until {a.until!r}: {exc}") from exc
            why = f"{a.until} has passed" if today > end else ""
        elif a.until is not None:
            sha = objects.resolve(repo, a.until)
            if sha is None:
                raise UsageError(
                    f"[[accept]] {a.label()}: until {a.until!r} is neither a date (YYYY-MM-DD) "
                    "nor a commit of this repository; fetch it, or write a date"
                )
            why = (
                f"the candidate contains {a.until}" if log.is_ancestor(repo, sha, candidate) else ""
            )
        found.append(replace(a, expired=why))
    return tuple(found)


def table_lines(root: Path, harness: Harness) -> dict[str, int] | None:
    """case id -> the line of its `id = ...` in the table under root, when that file is the
    very table the run read (same sha256; else its lines could point at other cases); None
    when there is no such file."""
    path = root / harness.table_path
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != harness.table_sha256:
        return {}
    return schema.entry_lines(data.decode("utf-8", errors="replace"))
