"""pytest plugin: the modules under test must come from the control's tree, or the run fails.

The controls runner puts this file's folder on the test process's PYTHONPATH and adds
``-p fidelity_pytest_guard``, so it loads in whichever interpreter runs the tests, with or
without fidelity installed there; it therefore imports only the standard library and
pytest. Three env vars configure it: ``FIDELITY_GUARD_ROOT`` (the tree),
``FIDELITY_GUARD_TREE`` (the tree's own top-level packages and modules, found by fidelity
from its files) and ``FIDELITY_GUARD_PACKAGES`` (the table's `import_check`, checked more
strictly). On import it removes meta-path finders (editable installs) that would serve one
of these names from elsewhere and forgets such modules if already imported. Every module of
the tree's names that is imported, before collection, after it and at the end of the
session, must come from inside the root; an `import_check` module, and a tree package whose
finder was removed, must also resolve at all. A ``.pth`` path entry cannot be removed
safely, so it fails the run instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib.machinery import BuiltinImporter, FrozenImporter, ModuleSpec, PathFinder
from types import ModuleType

import pytest

PACKAGES_ENV = "FIDELITY_GUARD_PACKAGES"
TREE_ENV = "FIDELITY_GUARD_TREE"
ROOT_ENV = "FIDELITY_GUARD_ROOT"
MARK = "fidelity import guard"
EXIT = 4
_STANDARD = (PathFinder, BuiltinImporter, FrozenImporter)


def _split(env: str) -> list[str]:
    raw = os.environ.get(env, "")
    return [n.strip() for n in raw.split(",") if n.strip()]


def _names() -> list[str]:
    """Modules that must resolve inside the tree (import_check, and tree packages whose
    editable-install finder was removed)."""
    return list(dict.fromkeys([*_split(PACKAGES_ENV), *_REMOVED_NAMES]))


def _tree() -> list[str]:
    return list(dict.fromkeys([*_split(TREE_ENV), *_split(PACKAGES_ENV)]))


def _root() -> str:
    return os.path.realpath(os.environ.get(ROOT_ENV, "") or os.getcwd())


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _spec_places(spec: ModuleSpec) -> list[str]:
    if spec.has_location and spec.origin:
        return [spec.origin]
    return list(spec.submodule_search_locations or [])


def _module_places(module: ModuleType) -> list[str]:
    file = getattr(module, "__file__", None)
    return [file] if file else list(getattr(module, "__path__", []) or [])


def _outside(places: list[str], root: str) -> list[str]:
    return [p for p in places if not _inside(p, root)] if places else ["(no file)"]


def _serves_elsewhere(finder: object, name: str, root: str) -> bool:
    try:
        spec = finder.find_spec(name, None)  # type: ignore[attr-defined]
    except Exception:  # a third-party finder may not cope with a bare name
        return False
    return spec is not None and bool(_outside(_spec_places(spec), root))


def remove_shadowing_finders(names: list[str], root: str) -> list[str]:
    """Drop non-standard meta-path finders that serve a checked package from outside root."""
    return [f"{finder} ({name})" for finder, name in _remove_finders(names, root)]


def _remove_finders(names: list[str], root: str) -> list[tuple[str, str]]:
    removed = []
    for finder in list(sys.meta_path):
        if finder in _STANDARD or isinstance(finder, _STANDARD):
            continue
        hit = next((n for n in names if _serves_elsewhere(finder, n, root)), None)
        if hit is not None:
            sys.meta_path.remove(finder)
            removed.append((getattr(finder, "__name__", type(finder).__name__), hit))
    return removed


def imported_outside(names: list[str], root: str) -> list[str]:
    """Modules of the tree's names already imported from outside root."""
    found = []
    for key, module in list(sys.modules.items()):
        if key.split(".")[0] in names and module is not None:
            bad = _outside(_module_places(module), root)
            if bad and bad != ["(no file)"]:
                found.append(
                    f"{key} was imported from {bad[0]}, outside the tree under test {root}"
                )
    return found


def forget_outside(names: list[str], root: str) -> None:
    """Forget checked modules imported from outside root before the guard ran."""
    for key in list(sys.modules):
        top = key.split(".")[0]
        if top in names and _outside(_module_places(sys.modules[key]), root):
            del sys.modules[key]
    importlib.invalidate_caches()


def problems(names: list[str], root: str, *, final: bool) -> list[str]:
    """Why each checked module does not resolve inside root; unresolved is wrong only if final."""
    found = []
    for name in names:
        module = sys.modules.get(name)
        if module is not None:
            places = _module_places(module)
        else:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError) as exc:
                spec, places = None, []
                found.append(f"{name} cannot be resolved: {exc}")
                continue
            if spec is None:
                if final:
                    found.append(f"{name} does not resolve at all (is the tree on sys.path?)")
                continue
            places = _spec_places(spec)
        bad = _outside(places, root)
        if bad:
            found.append(f"{name} resolves to {bad[0]}, outside the tree under test {root}")
    return found


DETAIL_LINES = 20


def message(found: list[str]) -> str:
    """A short first line (the first problem, how many more, what to do), then one line per
    problem: a package with many submodules imported from elsewhere made a 3 kB line."""
    more = f" (and {len(found) - 1} more, listed below)" if len(found) > 1 else ""
    first = (
        f"{MARK}: {found[0]}{more}. The tests would run another checkout's code (an editable "
        'install?): make the tree importable first, e.g. `pythonpath = ["src"]` in the pytest '
        "config."
    )
    if len(found) == 1:
        return first
    rest = [f"  - {p}" for p in found[:DETAIL_LINES]]
    if len(found) > DETAIL_LINES:
        rest.append(f"  ... {len(found) - DETAIL_LINES} more")
    return "\n".join([first, *rest])


def _fail(found: list[str]) -> None:
    pytest.exit(message(found), returncode=EXIT)


_REMOVED: list[str] = []
_REMOVED_NAMES: list[str] = []
if _tree():
    _pairs = _remove_finders(_tree(), _root())
    _REMOVED = [f"{finder} ({name})" for finder, name in _pairs]
    _REMOVED_NAMES = [name for _, name in _pairs]
    forget_outside(_tree(), _root())


def pytest_report_header() -> str | None:
    if not _tree():
        return None
    removed = f"; removed finders: {', '.join(_REMOVED)}" if _REMOVED else ""
    return f"fidelity: imports of {', '.join(_tree())} must come from inside {_root()}{removed}"


def pytest_sessionstart(session: pytest.Session) -> None:
    found = problems(_names(), _root(), final=False) + imported_outside(_tree(), _root())
    if found:
        _fail(found)


def pytest_collection_finish(session: pytest.Session) -> None:
    found = problems(_names(), _root(), final=True) + imported_outside(_tree(), _root())
    if found:
        _fail(found)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that imported a tree module from elsewhere while running makes the run fail."""
    found = imported_outside(_tree(), _root())
    if found:
        sys.stderr.write(message(found) + "\n")
        session.exitstatus = EXIT
