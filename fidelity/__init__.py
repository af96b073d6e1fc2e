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
                    progress.py
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
# metadata carries it here. Read on first use (importlib.metadata costs about 20 ms, which
# check-docs' start-up should not pay for nothing), then kept.
__version__: str

if not TYPE_CHECKING:  # mypy would read every unknown attribute of the package as a str

    def __getattr__(name: str) -> str:
        if name != "__version__":
            raise AttributeError(f"module 'fidelity' has no attribute {name!r}")
        from importlib import metadata

        try:
            found = metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
            found = "0+unknown"
        globals()["__version__"] = found
        return found
