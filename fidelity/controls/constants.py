"""An edit that only gives a module-level name a new value (``LIMIT = 3`` -> ``LIMIT = 4``,
a compiled pattern, a table of rules): which functions can see the change.

Such an edit is at module level, which would select every test. But the new value is only
seen where the name is read: by the functions of that module whose code names it (a global
is looked up in its own module), or from outside the module, by text that names it. So when
the name is read nowhere at import time (no other module-level statement, class body,
decorator or default uses it), and the module never reaches its globals by string
(``globals()``, ``vars()``, the name as a string), the tests that can tell are those that
ran a function that names it, provided both values are made without running code that
can fail or act at import (`_plain`). Whether another file names it is asked of the tree
(`select` gets it as `named_elsewhere`). Not seen: a module elsewhere that lists this one's
names (`dir()`, `inspect.getmembers`) without naming it.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Any

from fidelity.plugins.fidelity_probe import first_line

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# ways a module reaches its own globals without naming one
_DYNAMIC = frozenset(
    {"globals", "vars", "locals", "dir", "eval", "exec", "getmembers", "__dict__"}
    | {"f_globals", "__globals__", "__getattr__"}
)
_BUILT = frozenset({"frozenset", "set", "tuple", "list", "dict", "str", "int", "float", "bytes"})


def changed_constant(old: str, new: str) -> str | None:
    """The name, when new differs from old only in the value one module-level assignment
    `NAME = ...` (or `NAME: T = ...`, the same T) gives it, and both values are made without
    running code that could fail or act at import (`_plain`); else None."""
    try:
        before, after = ast.parse(old), ast.parse(new)
        if len(before.body) != len(after.body):
            return None
        pairs = zip(before.body, after.body, strict=True)
        changed = [(a, b) for a, b in pairs if ast.dump(a) != ast.dump(b)]
    except (SyntaxError, RecursionError, ValueError):  # a module nested too deep to walk
        return None
    if len(changed) != 1 or type(changed[0][0]) is not type(changed[0][1]):
        return None
    a, b = changed[0]
    name = _assigned(a)
    if name is None or name != _assigned(b):
        return None
    if not (_plain(a, before) and _plain(b, after)):
        return None
    if isinstance(a, ast.AnnAssign) and isinstance(b, ast.AnnAssign):
        return name if ast.dump(a.annotation) == ast.dump(b.annotation) else None
    return name


def _plain(node: ast.stmt, module: ast.Module) -> bool:
    """Whether the assigned value is a literal, a built-in container of literals, or a
    pattern `re.compile` accepts (with `import re` at the top): made at import without
    failing or acting (an edit to a pattern that does not compile fails every import)."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.expr):
        return False
    if _literal(value):
        return True
    if not isinstance(value, ast.Call) or value.keywords:
        return False
    if not all(_literal(a) or _flag(a) for a in value.args):
        return False
    func = value.func
    pattern = isinstance(func, ast.Attribute) and func.attr == "compile" and _flag_base(func)
    try:
        if isinstance(func, ast.Name) and func.id in _BUILT:
            getattr(builtins, func.id)(*[ast.literal_eval(a) for a in value.args])
            return True
        if pattern and _imports_re(module):
            values: list[Any] = [_evaluated(a) for a in value.args]
            re.compile(*values)
            return True
    except (ValueError, TypeError, re.error, RecursionError, OverflowError):
        return False
    return False


def _flag_base(node: ast.Attribute) -> bool:
    """Whether node is an attribute of the name `re`."""
    return isinstance(node.value, ast.Name) and node.value.id == "re"


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _flag(node: ast.expr) -> bool:
    """`re.IGNORECASE` and its kin, or several joined with `|`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flag(node.left) and _flag(node.right)
    return (
        isinstance(node, ast.Attribute)
        and _flag_base(node)
        and isinstance(getattr(re, node.attr, None), re.RegexFlag)
    )


def _evaluated(node: ast.expr) -> Any:
    if isinstance(node, ast.BinOp):
        return _evaluated(node.left) | _evaluated(node.right)
    if isinstance(node, ast.Attribute):
        return getattr(re, node.attr)
    return ast.literal_eval(node)


def _imports_re(module: ast.Module) -> bool:
    return any(
        isinstance(n, ast.Import) and any(a.name == "re" and a.asname is None for a in n.names)
        for n in module.body
    )


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign) and node.value is not None and node.simple:
        return node.target.id if isinstance(node.target, ast.Name) else None
    return None


def readers(source: str, name: str) -> tuple[frozenset[int], str]:
    """The first lines (as the tracer keys them) of every function whose code names `name`,
    or a reason the name may be read some other way ('' when none)."""
    tree = ast.parse(source)
    found: set[int] = set()
    at_import: list[ast.AST] = []
    try:
        _walk(tree, name, [], found, at_import)
    except RecursionError:
        return frozenset(), "the module is nested too deep to read"
    own = [n for n in tree.body if _assigned(n) == name]
    targets = [n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", n) for n in own]
    if len(own) != 1 or any(node is not targets[0] for node in at_import):
        return frozenset(), f"{name} is read or set again when the module is imported"
    why = _other_reads(tree, name)
    return (frozenset(), why) if why else (frozenset(found), "")


def _other_reads(tree: ast.Module, name: str) -> str:
    """How the module may read the name without naming it bare, or ''."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and word.search(text):
            return f"the module names {name} in a string"
        if isinstance(node, ast.Attribute) and node.attr == name:
            return f"the module reads {name} as an attribute"
        if isinstance(node, ast.Name | ast.Attribute) and _ident(node) in _DYNAMIC:
            return f"the module reaches its globals by name ({_ident(node)})"
    return ""


def _ident(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr


def _walk(
    node: ast.AST, name: str, stack: list[int], found: set[int], at_import: list[ast.AST]
) -> None:
    """Record the functions that name `name` (every enclosing one: a closure may escape),
    and each use outside any function body."""
    if isinstance(node, ast.Name | ast.Global | ast.Nonlocal) and _names(node, name):
        if stack:
            found.update(stack)
        else:
            at_import.append(node)
    if isinstance(node, _FUNCTIONS):
        for part in _outer_parts(node):  # decorators, defaults, annotations: at definition
            _walk(part, name, stack, found, at_import)
        body = node.body if isinstance(node.body, list) else [node.body]
        for statement in body:
            _walk(statement, name, [*stack, first_line(node)], found, at_import)
        return
    for child in ast.iter_child_nodes(node):
        _walk(child, name, stack, found, at_import)


def _names(node: ast.Name | ast.Global | ast.Nonlocal, name: str) -> bool:
    return node.id == name if isinstance(node, ast.Name) else name in node.names


def _outer_parts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    parts: list[ast.AST] = [node.args]
    if not isinstance(node, ast.Lambda):
        parts += [*node.decorator_list, *([node.returns] if node.returns else [])]
    return parts
