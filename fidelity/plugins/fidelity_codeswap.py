"""Put an edited module's new function bodies into a live process that imported the
unmodified module, or say why that would not be the same as importing the edited one.

Used by the collected pytest (``fidelity_swap``): a control whose edit lands only inside
function bodies then runs its tests in a fork of a process that imported the tree and
collected its tests once, as mutmut's trampolines switch mutants at run time. Both sources
are compiled; the module body and every class body must compile to the same code apart from
line numbers (so nothing that ran at import would run differently), and each function whose
code changed gets the new code on every live function object that runs it. A function that
ran before the fork (at import, at collection) may have left effects of its old body, so the
caller swaps only edits whose functions ran inside tests alone (fidelity's selection knows
that from its trace). Refused, with the reason: a changed module or class body, a changed
docstring (doctests were collected from it), a live function whose code no compile of the
file gives (assertion rewriting, code made at run time), a changed function whose closure
differs, or a live generator or a nested function the new code cannot be paired with.
Standard library only; Python 3.11 or later (``co_qualname``, ``co_exceptiontable``).
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterable, Iterator

_AT_DEFINITION = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
_LIVE = (types.FunctionType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


class Refused(Exception):
    """The edit cannot be swapped in; the message says why."""


def usable() -> str:
    """'' when this interpreter can swap, else why not."""
    return "" if sys.version_info >= (3, 11) else "swapping code needs Python 3.11 or later"


def _codes(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _const_key(value: object) -> object:
    """A constant with its type: `1`, `1.0` and `True` compare equal but are different code."""
    if isinstance(value, types.CodeType):
        return ("code",)
    if isinstance(value, tuple):
        return ("tuple", tuple(_const_key(v) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(repr(_const_key(v)) for v in value)))
    return (type(value).__name__, repr(value))


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """Everything that decides what the code does, without its line numbers."""
    return (
        code.co_code,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_name,
        code.co_qualname,
        code.co_exceptiontable,
        tuple(_const_key(c) for c in code.co_consts),
    )


def _runs_at_definition(code: types.CodeType) -> bool:
    """A class body, or a comprehension a module or class body runs."""
    return not code.co_flags & inspect.CO_OPTIMIZED or code.co_name in _AT_DEFINITION


def _all(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for inner in _codes(code):
        yield from _all(inner)


def _doc(code: types.CodeType) -> object:
    first = code.co_consts[:1]
    return first[0] if first and isinstance(first[0], str) else None


class Changes:
    """Old code -> new code for every function whose code changed, and the old nested code
    the new code cannot be paired with."""

    def __init__(self) -> None:
        self.new: dict[types.CodeType, types.CodeType] = {}
        self.orphans: set[types.CodeType] = set()
        self.known: set[types.CodeType] = set()  # every code object the old source gives

    def pair(self, old: types.CodeType, new: types.CodeType) -> None:
        if old in self.new and self.new[old] is not new:
            raise Refused(f"{old.co_qualname}() has a twin with the same code")
        self.new[old] = new

    def definition(self, old: types.CodeType, new: types.CodeType) -> None:
        """Code that ran when the module was imported: only its line numbers may change."""
        if _shape(old) != _shape(new):
            where = "the module body" if old.co_name == "<module>" else f"{old.co_qualname}"
            raise Refused(f"the edit changes code that runs at import ({where})")
        for o, n in zip(_codes(old), _codes(new), strict=True):
            if _runs_at_definition(o):
                self.definition(o, n)
            else:
                self.function(o, n)

    def function(self, old: types.CodeType, new: types.CodeType) -> None:
        """A function body: runs when called, so any change to it can be swapped in."""
        if old == new:
            return
        if old.co_freevars != new.co_freevars:
            raise Refused(f"the edit changes what {old.co_qualname}() closes over")
        if _doc(old) != _doc(new):
            raise Refused(f"the edit changes the docstring of {old.co_qualname}()")
        self.pair(old, new)
        olds, news = _codes(old), _codes(new)
        if [c.co_qualname for c in olds] != [c.co_qualname for c in news]:
            for o in olds:
                self.orphans.update(_all(o))
            return
        for o, n in zip(olds, news, strict=True):
            self.function(o, n)


def changes(old_source: bytes, new_source: bytes, filename: str) -> Changes:
    """What swapping new_source in for old_source means, or Refused."""
    try:
        old = compile(old_source, filename, "exec", dont_inherit=True)
        new = compile(new_source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Refused(f"{filename} does not compile: {exc}") from None
    found = Changes()
    found.definition(old, new)
    found.known = set(_all(old))
    return found


def swaps(
    old_source: bytes, new_source: bytes, filename: str, live: Iterable[object]
) -> list[tuple[types.FunctionType, types.CodeType]]:
    """Each live function of the file that must run new code, with that code; live holds
    every function, generator and coroutine object whose code comes from the file."""
    found = changes(old_source, new_source, filename)
    out: list[tuple[types.FunctionType, types.CodeType]] = []
    for obj in live:
        code = obj.__code__ if isinstance(obj, types.FunctionType) else _live_code(obj)
        if code is None:
            continue
        if code not in found.known:
            raise Refused(
                f"{getattr(obj, '__qualname__', '?')} in {filename} runs code that compiling "
                "the file does not give (assertion rewriting, or code made at run time)"
            )
        if code in found.orphans:
            raise Refused(f"a live {code.co_qualname}() cannot be paired with the edited code")
        new = found.new.get(code)
        if new is None:
            continue
        if not isinstance(obj, types.FunctionType):
            raise Refused(f"a suspended {code.co_qualname}() runs the code the edit changes")
        out.append((obj, new))
    return out


def _live_code(obj: object) -> types.CodeType | None:
    for attr in ("gi_code", "cr_code", "ag_code"):
        code = getattr(obj, attr, None)
        if isinstance(code, types.CodeType):
            return code
    return None


def live_objects(objects: Iterable[object]) -> Iterator[object]:
    """The functions, generators and coroutines among objects (from `gc.get_objects()`)."""
    for obj in objects:
        if isinstance(obj, _LIVE):
            yield obj


def code_file(obj: object) -> str:
    code = obj.__code__ if isinstance(obj, types.FunctionType) else _live_code(obj)
    return code.co_filename if code is not None else ""
