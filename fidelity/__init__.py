"""fidelity: turn the claims a change makes into evidence that can fail.

The layers, top to bottom; a layer imports only from the layers below it, and the packages
of one layer never import each other (`[tool.importlinter]` in pyproject.toml, checked by
tests/test_imports.py). Each package's own docstring maps its modules.

    entry           __main__.py -> cli/
                         |
    front           demo/   preflight/
                         |
    pages           htmlreport/
                         |
    capabilities    matrix/   controls/   history/   ab/   recordmerge/
                         |
    values          kinds/ (comparator kinds, behind one protocol)
                         |
    worktrees       worktree.py
                         |
    infrastructure  git/   config.py   schema.py   workdir.py   cachekey.py
                    placeholders.py   report_junit.py   markdown.py   github.py
                         |
    base            proc.py   procwait.py   procfs.py   procargs.py   errors.py   text.py
                    progress.py   blas.py
                         |
    rules           checkers (a package of its own that imports nothing of fidelity)

Outside the layers: plugins/ holds the pytest plugins fidelity loads into the test runs
it starts (controls/ imports their shared test-id rules, `fidelity_testids`, from there);
schemas/ holds the JSON Schemas fidelity ships.

Only proc.py starts processes and only git/ starts git (tests/test_spawns.py).
"""

from typing import TYPE_CHECKING

DISTRIBUTION = "fidelity-gate"  # pyproject.toml's [project] name

# pyproject.toml's `version` is the one place it is written; the installed distribution's
# metadata carries it here. Read on first use, then kept: from the METADATA of the one
# `fidelity_gate-*.dist-info` beside the package (a wheel install), else through
# importlib.metadata (an editable install), whose import (email, zipfile, csv) costs 30 ms
# of CPU that every run paid before its first case.
__version__: str


def installed_version(site: str) -> str | None:
    """The Version of the one fidelity dist-info in the folder site, None when there is
    not exactly one or it says none."""
    import os

    prefix = DISTRIBUTION.replace("-", "_") + "-"
    try:
        found = [e for e in os.listdir(site) if e.startswith(prefix) and e.endswith(".dist-info")]
    except OSError:
        return None
    if len(found) != 1:
        return None
    try:
        with open(os.path.join(site, found[0], "METADATA"), encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():  # the headers end at the first blank line
                    break
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip() or None
    except OSError:
        return None
    return None


if not TYPE_CHECKING:  # mypy would read every unknown attribute of the package as a str

    def __getattr__(name: str) -> str:
        if name != "__version__":
            raise AttributeError(f"module 'fidelity' has no attribute {name!r}")
        import os

        found = installed_version(os.path.dirname(os.path.dirname(__file__)))
        if found is None:
            from importlib import metadata

            try:
                found = metadata.version(DISTRIBUTION)
            except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
                found = "0+unknown"
        globals()["__version__"] = found
        return found
