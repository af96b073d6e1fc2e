"""pytest plugin: the modules under test must come from the control's tree, or the run fails.

The controls runner puts this file's folder on the test process's PYTHONPATH and adds
``-p fidelity_pytest_guard``, so it loads in whichever interpreter runs the tests, with or
without fidelity installed there; it therefore imports only the standard library and
pytest. Two env vars configure it: ``FIDELITY_GUARD_PACKAGES`` (comma-separated module
names) and ``FIDELITY_GUARD_ROOT`` (the tree). On import it removes meta-path finders
(editable installs) that would serve a checked package from elsewhere and forgets such
modules if already imported; before collection and again after it, every checked module
must resolve inside the root. A ``.pth`` path entry cannot be removed safely, so it fails
the run instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib.machinery import BuiltinImporter, FrozenImporter, ModuleSpec, PathFinder
from types import ModuleType

import pytest

PACKAGES_ENV = "FIDELITY_GUARD_PACKAGES"
ROOT_ENV = "FIDELITY_GUARD_ROOT"
MARK = "fidelity import guard"
_STANDARD = (PathFinder, BuiltinImporter, FrozenImporter)


def _names() -> list[str]:
    raw = os.environ.get(PACKAGES_ENV, "")
    return [n.strip() for n in raw.split(",") if n.strip()]


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
    removed = []
    for finder in list(sys.meta_path):
        if finder in _STANDARD or isinstance(finder, _STANDARD):
            continue
        hit = next((n for n in names if _serves_elsewhere(finder, n, root)), None)
        if hit is not None:
            sys.meta_path.remove(finder)
            removed.append(f"{getattr(finder, '__name__', type(finder).__name__)} ({hit})")
    return removed


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


def _fail(found: list[str]) -> None:
    lines = "; ".join(found)
    pytest.exit(
        f"{MARK}: {lines}. The tests would run another checkout's code (an editable install?). "
        'Make the tree importable first, e.g. `pythonpath = ["src"]` in the pytest config.',
        returncode=4,
    )


_REMOVED: list[str] = []
if _names():
    _REMOVED = remove_shadowing_finders(_names(), _root())
    forget_outside(_names(), _root())


def pytest_report_header() -> str | None:
    if not _names():
        return None
    removed = f"; removed finders: {', '.join(_REMOVED)}" if _REMOVED else ""
    return f"{MARK}: {', '.join(_names())} must resolve inside {_root()}{removed}"


def pytest_sessionstart(session: pytest.Session) -> None:
    found = problems(_names(), _root(), final=False)
    if found:
        _fail(found)


def pytest_collection_finish(session: pytest.Session) -> None:
    found = problems(_names(), _root(), final=True)
    if found:
        _fail(found)
