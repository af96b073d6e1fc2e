"""The top-level packages and modules of a tree, found from its files: what the import guard
covers by default, so that no table, however minimal, is judged against another checkout.

Found: folders with an `__init__.py` and `.py` modules at the top, under `src/` and `lib/`,
and under the folders pyproject.toml maps packages from (setuptools `package-dir` and
`packages.find.where`, poetry `packages`, hatch wheel `packages`); names pyproject lists
itself (setuptools `packages`, flit `module`), which may be namespace packages. `setup` and
`conftest` are left out: they are not the code under test.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

_SKIP = frozenset({"setup", "conftest"})
_ROOTS = ("", "src", "lib")


def _declared_roots(project: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(folders packages live in, package names) that pyproject.toml declares."""
    tool = project.get("tool", {})
    roots: list[str] = []
    names: list[str] = []
    setuptools = tool.get("setuptools", {})
    package_dir = setuptools.get("package-dir", {})
    if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
        roots.append(package_dir[""])
    packages = setuptools.get("packages")
    if isinstance(packages, dict):
        roots += [w for w in packages.get("find", {}).get("where", []) if isinstance(w, str)]
    elif isinstance(packages, list):
        names += [p for p in packages if isinstance(p, str)]
    module = tool.get("flit", {}).get("module", {}).get("name")
    if isinstance(module, str):
        names.append(module)
    for entry in tool.get("poetry", {}).get("packages", []):
        if isinstance(entry, dict) and isinstance(entry.get("include"), str):
            names.append(entry["include"])
    wheel = tool.get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
    for path in wheel.get("packages", []):
        if isinstance(path, str):
            names.append(path.rstrip("/").rpartition("/")[2])
    return roots, names


def top_level(files: Iterable[str], pyproject: bytes | None = None) -> tuple[str, ...]:
    """Importable top-level names of the tree whose file paths are given."""
    roots = list(_ROOTS)
    declared: list[str] = []
    if pyproject:
        try:
            extra_roots, declared = _declared_roots(tomllib.loads(pyproject.decode("utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
            extra_roots = []
        roots += [r.strip("/").removeprefix("./") for r in extra_roots if r not in ("", ".")]
    found: dict[str, None] = {}
    for path in files:
        for root in dict.fromkeys(roots):
            prefix = f"{root}/" if root else ""
            if not path.startswith(prefix):
                continue
            parts = path[len(prefix) :].split("/")
            if len(parts) == 2 and parts[1] == "__init__.py":
                found[parts[0]] = None
            elif len(parts) == 1 and parts[0].endswith(".py"):
                found[parts[0][:-3]] = None
    for name in declared:
        found[name.split(".")[0].replace("-", "_")] = None
    return tuple(n for n in found if n.isidentifier() and n not in _SKIP)
