"""Which functions of a few files each test runs, without tracing every call in the process.

`sys.settrace` calls back on every Python call anywhere (pytest, libraries, the tree), which
about doubles a suite's time, while a control's selection reads only the functions of the
files the controls edit (``fidelity.controls.selection``). So the traced run of the
unmodified tree, a fork of a collected server (``fidelity_swap``), watches those files
alone: each of their functions, lambdas and class bodies, and their module bodies, first
calls a probe with the key a trace gives that code (``path:first line``; a module body
``path:0``, with the keys of the comprehensions it runs), and the probe credits the current
test. Functions alive at the fork (imported at collection) get the probed code on their
``__code__``; a file imported later is compiled probed by a finder ahead of the others.

`start` refuses, saying why, where the probed code cannot replace every live object's (a
suspended generator, code no compile of the file gives: assertion rewriting, code made at
run time); the caller then traces every call. Code of a watched file that runs unprobed
later (the file loaded again by `reload` or `runpy`, or by another loader, such as pytest's
assertion rewriting) shows in its ``exec`` audit event: the file is then `unprobed`, and
selection runs every test for its edits. Standard library only; Python 3.11 or later.
"""

from __future__ import annotations

import ast
import builtins
import importlib.machinery
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

PROBE = "__fidelity_probe__"  # a builtin while probes run: no module's names change
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda) -> int:
    """The code object's co_firstlineno: the first decorator's line, if any. The one place
    a key's line is worked out: selection (`fidelity.controls.selection`, `constants`) names
    a function by it, and each probe records it."""
    if isinstance(node, ast.Lambda):
        return node.lineno
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _has_docstring(body: Sequence[ast.stmt]) -> bool:
    first = body[0] if body else None
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def _run_here(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """The comprehensions a body runs itself, those in its functions' defaults and decorators
    too, not those of their bodies: each is a code object of its own, with its own key,
    credited with the body's (a generator expression made in one test and run in another is
    credited to the first)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, _COMPREHENSIONS):
            yield node
        if isinstance(node, _SCOPES):  # its decorators, defaults and bases run here
            inner = node.body if isinstance(node.body, list) else [node.body]
            todo.extend(c for c in ast.iter_child_nodes(node) if c not in inner)
        else:
            todo.extend(ast.iter_child_nodes(node))


class _Insert(ast.NodeTransformer):
    """Puts a probe call first in every function, lambda, class and module body."""

    def __init__(self, rel: str) -> None:
        self.rel = rel

    def _call(self, lines: Iterable[int]) -> ast.Call:
        keys: list[ast.expr] = [ast.Constant(f"{self.rel}:{line}") for line in dict.fromkeys(lines)]
        return ast.Call(ast.Name(PROBE, ast.Load()), keys, [])

    def _prepend(self, body: list[ast.stmt], lines: Iterable[int], skip: int = 0) -> None:
        """The probe after the docstring (it stays the docstring) and `skip` more statements."""
        at = min(len(body), int(_has_docstring(body)) + skip)
        where = body[min(at, len(body) - 1)]
        probe = ast.Expr(self._call(lines))
        body.insert(at, ast.copy_location(probe, where))

    def visit_Module(self, node: ast.Module) -> ast.Module:
        self.generic_visit(node)
        start = int(_has_docstring(node.body))
        future = 0
        for stmt in node.body[start:]:
            if not (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
                break
            future += 1
        if node.body:
            here = [getattr(c, "lineno", 0) for c in _run_here(node.body)]
            self._prepend(node.body, [0, *here], skip=future)
        return node

    def _scope(self, node: Any) -> Any:
        self.generic_visit(node)
        here = [getattr(c, "lineno", 0) for c in _run_here(node.body)]
        self._prepend(node.body, [first_line(node), *here])
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        self.generic_visit(node)
        pair = ast.Tuple([self._call([node.lineno]), node.body], ast.Load())
        node.body = ast.copy_location(ast.Subscript(pair, ast.Constant(1), ast.Load()), node.body)
        return node


_LISTS = ("body", "orelse", "finalbody")


def _before_statements(tree: ast.AST, rel: str, wanted: frozenset[str]) -> set[str]:
    """A probe before each statement ``wanted`` names (``line:column`` where it starts,
    `fidelity.controls.linediff`), keyed ``rel@line:column``; the keys it put in."""
    put: set[str] = set()
    if not wanted:
        return put
    for node in list(ast.walk(tree)):
        for name in _LISTS:
            body = getattr(node, name, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            out: list[ast.stmt] = []
            for stmt in body:
                key = f"{stmt.lineno}:{stmt.col_offset}"
                docstring = stmt is body[0] and name == "body" and _has_docstring(body)
                if key in wanted and not docstring:
                    call = ast.Call(ast.Name(PROBE, ast.Load()), [ast.Constant(f"{rel}@{key}")], [])
                    out.append(ast.copy_location(ast.Expr(call), stmt))
                    put.add(key)
                out.append(stmt)
            setattr(node, name, out)
    return put


def instrument(
    source: bytes,
    filename: str,
    rel: str,
    statements: frozenset[str] = frozenset(),
    put: set[str] | None = None,
) -> types.CodeType:
    """The module's code with probes, compiled without warnings: a plain compile of the same
    source gave them already, where the module was imported (`_Loader` does one first);
    SyntaxError or ValueError when it does not compile. With `statements`, a probe before
    each of those too, whose keys go into `put`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source, filename)
        done = _before_statements(tree, rel, statements)
        tree = _Insert(rel).visit(tree)
        ast.fix_missing_locations(tree)
        code = compile(tree, filename, "exec", dont_inherit=True)
    if put is not None:
        put |= done
    return code


def _quiet_compile(source: bytes, filename: str) -> types.CodeType:
    """The plain code, as importing the file gave it (whose warnings were given then)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, filename, "exec", dont_inherit=True)


def _all(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for inner in code.co_consts:
        if isinstance(inner, types.CodeType):
            yield from _all(inner)


def _paired(plain: types.CodeType, probed: types.CodeType) -> dict[types.CodeType, Any]:
    """Each code object of the plain compile -> its probed twin (None where two share a name
    and first line, which no live function may then run)."""
    twins: dict[tuple[str, int], Any] = {}
    for code in _all(probed):
        key = (code.co_qualname, code.co_firstlineno)
        twins[key] = None if key in twins else code
    return {code: twins.get((code.co_qualname, code.co_firstlineno)) for code in _all(plain)}


Record = Callable[..., None]


class Probes:
    """The probed files of one run, and those whose code later ran unprobed."""

    def __init__(
        self, root: str, rels: Iterable[str], statements: Mapping[str, Iterable[str]] | None = None
    ) -> None:
        prefix = os.path.realpath(root) + os.sep
        self.files = {os.path.realpath(prefix + rel): rel for rel in rels if rel.endswith(".py")}
        self.probed_code: set[types.CodeType] = set()  # module bodies this compiled
        self.unprobed: set[str] = set()
        # statements to probe too (`line:column`), and those probed, by file
        self.statements = {rel: frozenset(keys) for rel, keys in (statements or {}).items()}
        self.probed_statements: dict[str, set[str]] = {}

    def report(self) -> dict[str, object]:
        """For the trace: the files watched (it holds their functions alone), those whose
        code also ran unprobed, and the statements probed in each."""
        return {
            "probed": sorted(self.files.values()),
            "unprobed": sorted(self.unprobed),
            "statements": {rel: sorted(k) for rel, k in self.probed_statements.items() if k},
        }

    def instrument(self, source: bytes, filename: str, rel: str) -> types.CodeType:
        put = self.probed_statements.setdefault(rel, set())
        return instrument(source, filename, rel, self.statements.get(rel, frozenset()), put)

    def rel(self, filename: str) -> str | None:
        return self.files.get(os.path.realpath(filename)) if filename[:1] != "<" else None

    def swaps(
        self, live: Mapping[str, Sequence[object]], sources: Mapping[str, bytes | None]
    ) -> list[tuple[types.FunctionType, types.CodeType]] | str:
        """The probed code for every live function of the files, or why it cannot be put on
        all of them."""
        out: list[tuple[types.FunctionType, types.CodeType]] = []
        for real, rel in self.files.items():
            objects, source = live.get(real, ()), sources.get(real)
            if not objects:
                continue  # nothing of it is alive: its code runs from a probed import
            if source is None:
                return f"{rel} could not be read"
            name = _filename(objects[0])
            try:
                plain = _quiet_compile(source, name)
                pairs = _paired(plain, self.instrument(source, name, rel))
            except (SyntaxError, ValueError) as exc:
                return f"{rel} does not compile: {exc}"
            for obj in objects:
                code = getattr(obj, "__code__", None)
                if not isinstance(obj, types.FunctionType) or not isinstance(code, types.CodeType):
                    return f"a suspended {getattr(obj, '__qualname__', '?')}() of {rel} runs"
                new = pairs.get(code)
                if new is None or new.co_freevars != code.co_freevars:
                    return f"{obj.__qualname__}() of {rel} runs code a compile of it does not give"
                out.append((obj, new))
        return out

    def executed(self, code: object) -> None:
        """From the `exec` audit event: a watched file's module code that is not probed."""
        if isinstance(code, types.CodeType) and code not in self.probed_code:
            rel = self.rel(code.co_filename)
            if rel is not None:
                self.unprobed.add(rel)


def _filename(obj: object) -> str:
    code = getattr(obj, "__code__", None)
    return code.co_filename if isinstance(code, types.CodeType) else ""


class _Loader(importlib.machinery.SourceFileLoader):
    """Imports a watched file as a plain import would (its compiler warnings, its bytecode
    written as the interpreter writes it), then runs the same source compiled with probes."""

    def __init__(self, fullname: str, path: str, rel: str, probes: Probes) -> None:
        super().__init__(fullname, path)
        self.rel = rel
        self.probes = probes

    def get_code(self, fullname: str) -> types.CodeType:
        super().get_code(fullname)  # raises where a plain import raises, a warning made an error
        path = self.get_filename(fullname)
        code = self.probes.instrument(self.get_data(path), path, self.rel)
        self.probes.probed_code.add(code)
        return code


class _Finder:
    """Ahead of the others on sys.meta_path: a watched file that a plain source loader would
    load is loaded by `_Loader` instead; anything else is left as found."""

    def __init__(self, probes: Probes) -> None:
        self.probes = probes

    def find_spec(self, fullname: str, path: object, target: object = None) -> object:
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is cast(object, self) or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, origin = getattr(spec, "loader", None), getattr(spec, "origin", None)
        if type(loader) is importlib.machinery.SourceFileLoader and isinstance(origin, str):
            rel = self.probes.rel(origin)
            if rel is not None:
                spec.loader = _Loader(fullname, origin, rel, self.probes)
        return spec


def start(
    probes: Probes,
    record: Record,
    live: Mapping[str, Sequence[object]],
    sources: Mapping[str, bytes | None],
) -> str:
    """Put probes on the watched files' live functions and on their later imports; '' when
    done, else why not (nothing was changed then)."""
    swaps = probes.swaps(live, sources)
    if isinstance(swaps, str):
        return swaps
    setattr(builtins, PROBE, record)
    for function, code in swaps:
        function.__code__ = code
    sys.meta_path.insert(0, cast(Any, _Finder(probes)))
    return ""
