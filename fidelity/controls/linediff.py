"""Which statements of a function an edit changes, told by the bytecode of both compiles.

A test that called the edited function but never started a statement whose instructions the
edit changes ran the same instructions as in the unmodified tree. So the instructions of
both compiles are aligned: one that is not matched by an equal instruction (its name, its
argument by value, a jump landing on the matched instruction) is changed, and so is the one
before instructions the edit adds. A run of the edited tree first differs from the
unmodified one where the unmodified run executes a changed instruction. Each lies in the innermost
statement whose source holds it, and a probe before that statement (``fidelity_probe``)
tells which tests started it. There is no answer, and selection stays with the whole
function, where anything else about its code differs (arguments, locals, closure cells,
flags: a name made local, a ``yield``), where the exception table does not align, where a
changed instruction has no source position or lies in no statement of the function body
(its implicit return), and where it lies in a lambda, which may run long after the
statement that made it. Standard library only.
"""

from __future__ import annotations

import ast
import difflib
import dis
import functools
import types
import warnings
from collections.abc import Iterator

_SAME = (
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_flags",
    "co_varnames",
    "co_cellvars",
    "co_freevars",
    "co_name",
    "co_qualname",
)
# code that may run long after the statement that made it. A generator expression is
# credited to the statement that makes it, as the probes credit its function's key
# (`fidelity_probe._run_here`): made in one test and run in another, it counts for the first
_LATER = ("<lambda>",)
Span = tuple[int, int, int, int]  # line, column, end line, end column


class Unknown(Exception):
    """The edit changes more than some statements' instructions."""


def _all(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for inner in code.co_consts:
        if isinstance(inner, types.CodeType):
            yield from _all(inner)


def find_code(module: types.CodeType, first_line: int) -> types.CodeType | None:
    """The one function code object that starts at `first_line` (a selection key's line)."""
    found = [c for c in _all(module) if c.co_firstlineno == first_line and c is not module]
    return found[0] if len(found) == 1 else None


def _instructions(code: types.CodeType) -> list[dis.Instruction]:
    return [i for i in dis.get_instructions(code) if i.opname not in ("EXTENDED_ARG", "CACHE")]


def _value(ins: dis.Instruction) -> tuple[str, str]:
    """An instruction as compared, a jump without its target (checked once aligned)."""
    if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
        return ins.opname, ""
    value = ins.argval
    if isinstance(value, types.CodeType):
        return ins.opname, f"{value.co_qualname}:{value.co_firstlineno}"
    return ins.opname, repr(value)


def _landing(ins: list[dis.Instruction], offset: int) -> int | None:
    """The index of the instruction at `offset` (an EXTENDED_ARG's: the one it extends)."""
    for i, one in enumerate(ins):
        if one.offset >= offset:
            return i
    return None


def _changed(old: types.CodeType, new: types.CodeType) -> list[Span]:
    """Where the old code's changed instructions lie, nested code included."""
    if any(getattr(old, a) != getattr(new, a) for a in _SAME):
        raise Unknown(f"{old.co_qualname}: more than its instructions differ")
    a, b = _instructions(old), _instructions(new)
    matcher = difflib.SequenceMatcher(None, [_value(i) for i in a], [_value(i) for i in b], False)
    twin: dict[int, int] = {}
    changed: set[int] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            twin.update(zip(range(i1, i2), range(j1, j2), strict=True))
        elif i1 < i2:  # replaced or removed: the old instructions, where the runs part
            changed.update(range(i1, i2))
        else:  # added: the old instruction before, from which the new run falls into them
            changed.add(max(i1 - 1, 0))
    for i, j in twin.items():
        if a[i].opcode in dis.hasjrel or a[i].opcode in dis.hasjabs:
            to_a, to_b = _landing(a, a[i].argval), _landing(b, b[j].argval)
            if to_a is None or twin.get(to_a) != to_b:
                changed.add(i)
    _same_handlers(old, new, a, b, twin)
    spans = [_span(a[i], old) for i in sorted(changed)]
    return spans + _nested(old, new)


def _same_handlers(
    old: types.CodeType,
    new: types.CodeType,
    a: list[dis.Instruction],
    b: list[dis.Instruction],
    twin: dict[int, int],
) -> None:
    entries = getattr(dis.Bytecode(old), "exception_entries", None)
    others = getattr(dis.Bytecode(new), "exception_entries", None)
    if entries is None or others is None or len(entries) != len(others):
        raise Unknown("the exception tables differ")
    for e, f in zip(entries, others, strict=True):
        for x, y in ((e.start, f.start), (e.target, f.target)):
            ia, ib = _landing(a, x), _landing(b, y)
            if ia is None or twin.get(ia) != ib:
                raise Unknown("the exception tables differ")
        if (e.depth, e.lasti) != (f.depth, f.lasti):
            raise Unknown("the exception tables differ")


def _span(ins: dis.Instruction, code: types.CodeType) -> Span:
    p = ins.positions
    if p is None or None in (p.lineno, p.col_offset, p.end_lineno, p.end_col_offset):
        raise Unknown(f"a changed instruction of {code.co_qualname} has no position")
    if code.co_name in _LATER:
        raise Unknown(f"the edit changes a {code.co_name[1:-1]}, which may run later")
    return (p.lineno or 0, p.col_offset or 0, p.end_lineno or 0, p.end_col_offset or 0)


def _nested(old: types.CodeType, new: types.CodeType) -> list[Span]:
    """Changes in nested code made on unchanged lines (code whose name and first line are
    on one side only is made by a changed instruction, already counted)."""
    mine, theirs = _by_key(old), _by_key(new)
    out: list[Span] = []
    for key in mine.keys() & theirs.keys():
        a, b = mine[key], theirs[key]
        if a is None or b is None:
            raise Unknown("two nested code objects share a name and first line")
        out += _changed(a, b)
    return out


def _by_key(code: types.CodeType) -> dict[tuple[str, int], types.CodeType | None]:
    out: dict[tuple[str, int], types.CodeType | None] = {}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            key = (c.co_qualname, c.co_firstlineno)
            out[key] = None if key in out else c
    return out


def statement_key(node: ast.stmt) -> str:
    """How a probe names a statement: ``line:column`` where it starts."""
    return f"{node.lineno}:{node.col_offset}"


def _holds(node: ast.AST, span: Span) -> bool:
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]
    return start <= (span[0], span[1]) and (span[2], span[3]) <= end


def _innermost(function: ast.AST, span: Span) -> ast.stmt:
    """The innermost statement of the function's body whose source holds the span."""
    best: ast.stmt | None = None
    todo = list(getattr(function, "body", []))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt) and _holds(node, span):
            best = node
            todo = list(ast.iter_child_nodes(node))
        elif not isinstance(node, ast.stmt):
            todo.extend(ast.iter_child_nodes(node))
    if best is None:
        raise Unknown("a changed instruction lies in no statement of the function body")
    return best


@functools.lru_cache(maxsize=256)  # asked twice per control: to probe, then to select
def changed_statements(old: str, new: str, filename: str, first_line: int) -> tuple[str, ...]:
    """The statements (`statement_key`) of the function at `first_line` whose instructions
    the edit changes, compiled as the tests may run it: plain, and optimized (`-O`,
    ``PYTHONOPTIMIZE``: asserts and ``if __debug__`` blocks compiled away); () when that
    cannot be told (selection then takes every test that ran the function)."""
    try:
        tree = ast.parse(old, filename)
    except (SyntaxError, ValueError):
        return ()
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == first_line
    ]
    if len(functions) != 1:
        return ()
    found: set[str] = set()
    for level in (0, 1):
        spans = _spans(old, new, filename, first_line, level)
        if spans is None:
            return ()
        try:
            found |= {statement_key(_innermost(functions[0], s)) for s in spans}
        except Unknown:
            return ()
    return tuple(sorted(found, key=lambda k: tuple(map(int, k.split(":")))))


def _spans(old: str, new: str, filename: str, first_line: int, level: int) -> list[Span] | None:
    """Where the function's changed instructions lie, compiled at one optimization level;
    None when that cannot be told."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            before = compile(old, filename, "exec", dont_inherit=True, optimize=level)
            after = compile(new, filename, "exec", dont_inherit=True, optimize=level)
        a, b = find_code(before, first_line), find_code(after, first_line)
        return None if a is None or b is None else _changed(a, b)
    except (SyntaxError, ValueError, Unknown):
        return None
