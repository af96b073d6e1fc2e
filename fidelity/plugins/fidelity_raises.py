"""Which names a control table's `raises` may use: an exception class the tests can see.

Imported by ``fidelity_pytest_controls`` after collection, when the tests' modules are
imported (standard library only); `controls validate` refuses the names it does not know.
"""

from __future__ import annotations

import sys


def _is_exception(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def _dotted(name: str) -> object:
    """What `pkg.mod.Class` (or `pkg.Outer.Inner`) names: the longest prefix that imports,
    then attributes; None when nothing does."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # any failure to import: try a shorter prefix
            continue
        for attr in parts[cut:]:
            value = getattr(value, attr, None)
        return value
    return None


def known(name: str) -> bool:
    """Whether `raises` can match name: a built-in exception, a dotted path that imports to
    an exception class, or a bare name some module imported by collection defines as one."""
    import builtins

    if "." in name:
        return _is_exception(_dotted(name))
    if _is_exception(getattr(builtins, name, None)):
        return True
    modules = [m for m in list(sys.modules.values()) if m is not None]
    return any(_is_exception(getattr(m, "__dict__", {}).get(name)) for m in modules)
