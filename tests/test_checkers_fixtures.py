"""Every checker rule, driven by the case files in tests/data/docs/ (a new case is text).

A case file holds cases separated by ``=== name`` lines. Inside a case, ``--- config``
holds TOML for ``[tool.fidelity.docs]`` (``[[tool.fidelity.docs.page]]`` tables allowed),
``--- input`` is ``page.md`` (``--- input some/path.md`` names it), ``--- file NAME`` adds
another file, and ``--- expect`` lists the exact ``path:line:col: CODE message`` lines,
nothing for a clean page. Each case runs through the real parser on real files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from checkers.check import Page, check_pages
from checkers.config import load

DATA = Path(__file__).parent / "data" / "docs"


@dataclass
class Case:
    name: str
    config: str = ""
    page: str = "page.md"
    files: dict[str, str] = field(default_factory=dict)
    expect: list[str] = field(default_factory=list)


def _store(case: Case, section: str, body: list[str]) -> None:
    kind, _, arg = section.partition(" ")
    text = "\n".join(body)
    if kind == "config":
        case.config = text
    elif kind == "input":
        case.page = arg or "page.md"
        case.files[case.page] = text + "\n"
    elif kind == "file":
        case.files[arg] = text + "\n"
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
    (tmp_path / "pyproject.toml").write_text(f"[tool.fidelity.docs]\n{case.config}\n")
    for name, text in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = check_pages(tmp_path, (Page(case.page, case.page),), load(tmp_path))
    assert [f.render() for f in result.findings] == case.expect


def test_every_rule_family_has_a_case_file_that_goes_red() -> None:
    codes = {line.split(": ")[1].split()[0] for _, case in ALL for line in case.expect}
    families = {code[:3] for code in codes}
    assert families == {"FD1", "FD2", "FD3", "FD4", "FD5", "FD6"}
