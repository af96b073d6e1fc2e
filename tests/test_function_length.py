"""No function in fidelity/matrix/ or fidelity/controls/ is longer than 60 lines, and no
module of the product (fidelity/, checkers/, scripts/) is longer than 450.

A long function there is where every new run option lands (issue 27: `gate.run` had grown
to 101 lines). Counted with `ast`, from the `def` line to the function's last line, over
the installed package's own source; nested functions and methods count on their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fidelity

LIMIT = 60
PACKAGES = ("matrix", "controls")
MODULE_LIMIT = 450  # past it, look for the second module inside (STYLE.md)
PRODUCT = ("fidelity", "checkers", "scripts")


def too_long(source: str, name: str, limit: int = LIMIT) -> list[str]:
    """`name:line: function is N lines (limit L)` for every function over the limit."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append(f"{name}:{node.lineno}: {node.name} is {length} lines (limit {limit})")
    return found


def _function(name: str, lines: int, indent: str = "") -> str:
    """Source of a function `lines` long, counted from its `def` line."""
    body = [f"{indent}    x{i} = {i}" for i in range(lines - 2)]
    return "\n".join([f"{indent}def {name}() -> int:", *body, f"{indent}    return 0"]) + "\n"


def test_no_function_in_matrix_or_controls_is_over_the_limit() -> None:
    root = Path(fidelity.__file__).parent
    sources = [p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))]
    assert len(sources) > 20, "the package source was not found"
    found = [line for p in sources for line in too_long(p.read_text("utf-8"), str(p))]
    assert found == [], "\n".join(found)


def test_the_check_goes_red_on_a_planted_long_function() -> None:
    at_limit = _function("fits", LIMIT)
    assert too_long(at_limit, "m.py") == []
    planted = at_limit + "\n\n" + _function("grown", LIMIT + 1)
    assert too_long(planted, "m.py") == [
        f"m.py:{LIMIT + 3}: grown is {LIMIT + 1} lines (limit {LIMIT})"
    ]


def test_methods_nested_and_async_functions_count_on_their_own() -> None:
    method = "class C:\n" + _function("method", LIMIT + 5, indent="    ")
    assert too_long(method, "c.py") == [f"c.py:2: method is {LIMIT + 5} lines (limit {LIMIT})"]
    asynchronous = _function("later", LIMIT + 1).replace("def ", "async def ", 1)
    assert [f.split(": ")[1] for f in too_long(asynchronous, "a.py")] == [
        "later is 61 lines (limit 60)"
    ]
    inner = _function("inner", LIMIT + 1, indent="    ")
    outer = "def outer() -> None:\n" + inner
    assert [f.split(": ")[1] for f in too_long(outer, "n.py")] == [
        "outer is 62 lines (limit 60)",
        "inner is 61 lines (limit 60)",
    ]


def too_big(paths: list[Path], limit: int = MODULE_LIMIT) -> list[str]:
    """`path: N lines (limit L)` for every module over the limit."""
    sizes = {p: len(p.read_text("utf-8").splitlines()) for p in paths}
    return [f"{p}: {n} lines (limit {limit})" for p, n in sizes.items() if n > limit]


def test_no_product_module_is_over_the_module_limit() -> None:
    root = Path(__file__).resolve().parents[1]
    demo = root / "fidelity" / "demo" / "files"  # the demo's own simulator, not fidelity's code
    paths = [
        p
        for top in PRODUCT
        for p in sorted((root / top).rglob("*.py"))
        if demo not in p.parents and "__pycache__" not in p.parts
    ]
    assert len(paths) > 100, "the product's source was not found"
    found = too_big(paths)
    assert found == [], "\n".join(found)


def test_the_module_check_goes_red_on_a_planted_big_module(tmp_path: Path) -> None:
    fits, grown = tmp_path / "fits.py", tmp_path / "grown.py"
    fits.write_text("x = 0\n" * MODULE_LIMIT)
    grown.write_text("x = 0\n" * (MODULE_LIMIT + 1))
    assert too_big([fits, grown]) == [f"{grown}: {MODULE_LIMIT + 1} lines (limit {MODULE_LIMIT})"]
