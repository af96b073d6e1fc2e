"""Every package's docstring maps its modules, and fidelity's layer diagram names every
top-level module and folder.

A package's `__init__.py` docstring holds one line per module (and subpackage),
``- `name`: what it holds``; a module missing from the map, or a line naming a module that
is gone, is a finding. fidelity/__init__.py's diagram names each top-level module as
`name.py` and each folder of modules as `name/`. The red cases run the check on trees made
in a temp folder, one of them a copy of a real package with a module added.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = "fidelity"
_ENTRY = re.compile(r"^- `([A-Za-z_]\w*)`: \S", re.MULTILINE)


def _docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8"))) or ""


def _modules(folder: Path) -> set[str]:
    names = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")}
    return names | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def map_findings(package: Path, root: Path) -> list[str]:
    """What a package's docstring map misses, or names that is not there."""
    where = (package / "__init__.py").relative_to(root).as_posix()
    mapped = set(_ENTRY.findall(_docstring(package)))
    modules = _modules(package)
    missing = [
        f"{where}: module `{name}` is not in the package's docstring map; add a line "
        f"'- `{name}`: what it holds'"
        for name in sorted(modules - mapped)
    ]
    gone = [
        f"{where}: the map names `{name}`, which is not a module here"
        for name in sorted(mapped - modules)
    ]
    return missing + gone


def diagram_findings(top: Path, root: Path) -> list[str]:
    """The top-level modules (`name.py`) and folders of modules (`name/`) the diagram misses."""
    doc = _docstring(top)
    where = (top / "__init__.py").relative_to(root).as_posix()
    names = [p.name for p in top.glob("*.py") if p.name != "__init__.py"]
    names += [f"{p.name}/" for p in top.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    return [
        f"{where}: the layer diagram does not name {name}"
        for name in sorted(names)
        if not re.search(rf"(?<![\w/.]){re.escape(name)}(?![\w/])", doc)
    ]


def findings(root: Path) -> list[str]:
    found = diagram_findings(root / TOP, root)
    for base in (TOP, "checkers"):
        for init in sorted((root / base).rglob("__init__.py")):
            package = init.parent
            inside = package.relative_to(root).as_posix()
            if package == root / TOP or inside.startswith("fidelity/demo/files"):
                continue  # the diagram is checked above; the demo's files are data
            found += map_findings(package, root)
    return found


def test_every_package_maps_its_modules_and_the_diagram_names_every_layer_member() -> None:
    assert findings(ROOT) == []


def _package(where: Path, doc: str, modules: list[str]) -> Path:
    where.mkdir(parents=True)
    (where / "__init__.py").write_text(f'"""{doc}"""\n', "utf-8")
    for name in modules:
        (where / f"{name}.py").write_text('"""A module."""\n', "utf-8")
    return where


def test_a_module_missing_from_its_package_map_is_found(tmp_path: Path) -> None:
    doc = "A package.\n\n- `first`: the first\n"
    package = _package(tmp_path / "pkg", doc, ["first", "second"])
    assert map_findings(package, tmp_path) == [
        "pkg/__init__.py: module `second` is not in the package's docstring map; add a line "
        "'- `second`: what it holds'"
    ]
    _package(package / "sub", "A subpackage.\n\n- `leaf`: a leaf\n", ["leaf"])
    assert "module `sub` is not in" in "\n".join(map_findings(package, tmp_path))


def test_a_map_line_for_a_module_that_is_gone_is_found(tmp_path: Path) -> None:
    doc = "A package.\n\n- `first`: the first\n- `moved`: moved away since\n"
    package = _package(tmp_path / "pkg", doc, ["first"])
    assert map_findings(package, tmp_path) == [
        "pkg/__init__.py: the map names `moved`, which is not a module here"
    ]


def test_a_real_package_with_a_module_added_is_found(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "fidelity" / "git", tmp_path / "fidelity" / "git", ignore=ignore)
    package = tmp_path / "fidelity" / "git"
    assert map_findings(package, tmp_path) == [], "the copy holds before the plant"
    (package / "blame.py").write_text('"""Who wrote each line."""\n', "utf-8")
    assert map_findings(package, tmp_path) == [
        "fidelity/git/__init__.py: module `blame` is not in the package's docstring map; "
        "add a line '- `blame`: what it holds'"
    ]


def test_a_top_level_module_or_folder_missing_from_the_diagram_is_found(tmp_path: Path) -> None:
    doc = "Layers.\n\n    cli/\n    proc.py   git/ (not fidelity/gitlog.py)\n"
    top = _package(tmp_path / "fidelity", doc, ["proc", "gitlog", "text"])
    _package(top / "cli", "", [])
    _package(top / "git", "", ["command"])
    _package(top / "plugins", "", ["plugin"])
    (top / "plugins" / "__init__.py").unlink()  # a folder of modules, not a package
    (top / "schemas").mkdir()  # data only: not a layer member
    assert diagram_findings(top, tmp_path) == [
        "fidelity/__init__.py: the layer diagram does not name gitlog.py",
        "fidelity/__init__.py: the layer diagram does not name plugins/",
        "fidelity/__init__.py: the layer diagram does not name text.py",
    ]
