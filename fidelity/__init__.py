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
                    progress.py   blas.py   digest.py
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
# dist-info folder beside the package (an install from a wheel or a path), else through
# importlib.metadata, whose imports and scan of every distribution cost about 0.02 CPU-s of
# start-up (an editable install or a source tree).
__version__: str


def dist_info_version(site: str) -> str | None:
    """The ``Version:`` of the only ``fidelity_gate-*.dist-info`` in ``site``, or None when
    there is none, more than one, or its METADATA cannot be read."""
    import os

    prefix = DISTRIBUTION.replace("-", "_").lower() + "-"
    try:
        found = [
            name
            for name in os.listdir(site)
            if name.lower().startswith(prefix) and name.endswith(".dist-info")
        ]
        if len(found) != 1:
            return None
        with open(os.path.join(site, found[0], "METADATA"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip() or None
                if not line.strip():  # the headers end at the first blank line
                    break
    except (OSError, UnicodeDecodeError):
        return None
    return None


if not TYPE_CHECKING:  # mypy would read every unknown attribute of the package as a str

    def __getattr__(name: str) -> str:
        if name != "__version__":
            raise AttributeError(f"module 'fidelity' has no attribute {name!r}")
        import os

        found = dist_info_version(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        if found is None:
            from importlib import metadata

            try:
                found = metadata.version(DISTRIBUTION)
            except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
                found = "0+unknown"
        globals()["__version__"] = found
        return found
