"""The side's worktree on PYTHONPATH for a case that names `{harness}`.

`python {harness}/cases/drive.py` puts the script's folder first on sys.path, not the
working directory, so a driver kept in the harness could not import the project under
test: both sides failed with ModuleNotFoundError while `import_check`, which resolves
modules as `python -m` does (the worktree first), had passed. Such a case imports as
`python -m` in its worktree would: the worktree root first on PYTHONPATH, before any
inherited entry. A table that sets PYTHONPATH itself (in `[matrix]` or the case's `env`)
keeps its own value; a case that does not name `{harness}` is left as it was, so no
existing table's cases change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from fidelity.matrix.cases.table import Case, Matrix
from fidelity.placeholders import names


def reads_harness(matrix: Matrix, case: Case) -> bool:
    """Whether the case's command, working directory or environment names `{harness}`."""
    texts = [*case.templates(), *matrix.env.values()]
    return any("harness" in names(text) for text in texts)


def with_worktree(
    env: Mapping[str, str], matrix: Matrix, case: Case, worktree: str
) -> dict[str, str]:
    """env, with the worktree first on PYTHONPATH when the case reads the harness and the
    table leaves PYTHONPATH to fidelity."""
    found = dict(env)
    if "PYTHONPATH" in matrix.env or "PYTHONPATH" in case.env:
        return found
    if reads_harness(matrix, case):
        found["PYTHONPATH"] = os.pathsep.join(p for p in (worktree, env.get("PYTHONPATH")) if p)
    return found
