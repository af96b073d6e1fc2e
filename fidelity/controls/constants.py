"""An edit that only gives a module-level name a new value (``LIMIT = 3`` -> ``LIMIT = 4``,
a compiled pattern, a table of rules): which functions can see the change.

Such an edit is at module level, which would select every test. But the new value is only
seen where the name is read: by the functions of that module whose code names it (a global
is looked up in its own module), or from outside the module, by text that names it. So when
the name is read nowhere at import time (no other module-level statement, class body,
decorator or default uses it), and the module never reaches its globals by string
(``globals()``, ``vars()``, the name as a string), the tests that can tell are those that
ran a function that names it. Whether another file names it is asked of the tree (`select`
gets it as `named_elsewhere`).
"""

from __future__ import annotations

import ast

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DYNAMIC = frozenset({"globals", "vars", "__dict__", "__getattr__"})


def changed_constant(old: str, new: str) -> str | None:
    """The name, when new differs from old only in the value one module-level assignment
    `NAME = ...` (or `NAME: T = ...`, the same T) gives it; else None."""
    try:
        before, after = ast.parse(old), ast.parse(new)
    except SyntaxError:
        return None
    if len(before.body) != len(after.body):
        return None
    pairs = zip(before.body, after.body, strict=True)
    changed = [(a, b) for a, b in pairs if ast.dump(a) != ast.dump(b)]
    if len(changed) != 1:
        return None
    a, b = changed[0]
    name = _assigned(a)
    if name is None or name != _assigned(b):
        return None
    if isinstance(a, ast.AnnAssign) and isinstance(b, ast.AnnAssign):
        return name if ast.dump(a.annotation) == ast.dump(b.annotation) else None
    return name


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
    _walk(tree, name, [], found, at_import)
    own = [n for n in tree.body if _assigned(n) == name]
    targets = [n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", n) for n in own]
    if len(own) != 1 or any(node is not targets[0] for node in at_import):
        return frozenset(), f"{name} is read or set again when the module is imported"
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value == name:
            return frozenset(), f"the module names {name} in a string"
        if isinstance(node, ast.Name | ast.Attribute) and _ident(node) in _DYNAMIC:
            return frozenset(), f"the module reaches its globals by name ({_ident(node)})"
    return frozenset(found), ""


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


def first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    """The code object's co_firstlineno: the first decorator's line, if any."""
    if isinstance(node, ast.Lambda):
        return node.lineno
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])
