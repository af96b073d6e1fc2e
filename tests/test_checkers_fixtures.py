"""Every checker rule, driven by the case files in tests/data/docs/ (a new case is text).

A case file holds cases separated by ``=== name`` lines. Inside a case, ``--- config``
holds TOML for ``[tool.fidelity.docs]`` (``[[tool.fidelity.docs.page]]`` tables allowed),
``--- input`` is ``page.md`` (``--- input some/path.md`` names it), ``--- file NAME`` adds
another file, and ``--- expect`` lists the exact ``path:line:col: CODE message`` lines,
nothing for a clean page. ``--- input``/``--- file`` take an encoding after the name
(``--- input page.md encoding=latin-1`` writes bytes that are not UTF-8); ``--- symlink NAME`` makes
NAME a symlink to the text of its body. The repository is ``repo/`` inside the test's
temporary folder, so ``--- file ../outside.md`` lies outside it. Each case runs through the
real parser on real files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from checkers.check import Page, check_pages
from checkers.config import load
from checkers.findings import Code

DATA = Path(__file__).parent / "data" / "docs"


@dataclass
class Case:
    name: str
    config: str = ""
    page: str = "page.md"
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    expect: list[str] = field(default_factory=list)


def _store(case: Case, section: str, body: list[str]) -> None:
    kind, _, arg = section.partition(" ")
    name, _, encoding = arg.rpartition(" encoding=") if " encoding=" in arg else (arg, "", "")
    text = "\n".join(body)
    if kind == "config":
        case.config = text
    elif kind == "input":
        case.page = name or "page.md"
        case.files[case.page] = (text + "\n").encode(encoding or "utf-8")
    elif kind == "file":
        case.files[name] = (text + "\n").encode(encoding or "utf-8")
    elif kind == "symlink":
        case.links[name] = text.strip()
    elif kind == "expect":
        case.expect = [line for line in body if line.strip()]
    else:
        raise ValueError(f"unknown section {section!r} in case {case.name!r}")


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    section: str | None = None
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("=== ") or line.startswith("--- "):
            if section is not None:
                _store(cases[-1], section, body)
            section, body = None, []
            if line.startswith("=== "):
                cases.append(Case(line[4:].strip()))
            else:
                section = line[4:].strip()
        elif section is not None:
            body.append(line)
    if section is not None:
        _store(cases[-1], section, body)
    return cases


ALL = [(path.stem, case) for path in sorted(DATA.glob("*.txt")) for case in load_cases(path)]
CASES = [pytest.param(case, id=f"{stem}: {case.name}") for stem, case in ALL]


@pytest.mark.parametrize("case", CASES)
def test_case(case: Case, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text(f"[tool.fidelity.docs]\n{case.config}\n")
    for name, data in case.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    for name, target in case.links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).symlink_to(target)
    result = check_pages(root, (Page(case.page, case.page),), load(root))
    assert [f.render() for f in result.findings] == case.expect


# codes whose case cannot be a text file here: FD707 needs a page the installed parser
# fails on (tests/test_checkers_parser_failure.py plants one, and finds a real one)
ELSEWHERE = {"FD707"}


def test_every_finding_code_has_a_case_that_goes_red() -> None:
    codes = {line.split(": ")[1].split()[0] for _, case in ALL for line in case.expect}
    assert codes | ELSEWHERE == {str(code) for code in Code}
