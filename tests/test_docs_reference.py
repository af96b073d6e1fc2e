"""docs/case-table.md documents every key the case-table schema accepts."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def keys(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            found.add(name)
            found |= keys(sub)
        for value in schema.values():
            if isinstance(value, (dict, list)):
                found |= keys(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= keys(item)
    return found


def test_every_case_table_key_is_documented() -> None:
    schema = json.loads((ROOT / "fidelity" / "schemas" / "matrix.schema.json").read_text())
    page = (ROOT / "docs" / "case-table.md").read_text()
    undocumented = sorted(k for k in keys(schema) if f"`{k}`" not in page)
    assert undocumented == [], f"add these keys to docs/case-table.md: {undocumented}"
    assert len(keys(schema)) > 25  # the walk found the nested keys, not just the top level


def options(parser: argparse.ArgumentParser) -> set[str]:
    """Every --option of parser and of its subcommands, at any depth."""
    found: set[str] = set()
    for action in parser._actions:
        found |= {o for o in action.option_strings if o.startswith("--")}
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= options(sub)
    return found


# options of other tools that the docs name in code spans: pytest, Hypothesis, git, pre-commit, Slurm
OTHER_TOOLS = {
    "--hypothesis-seed", "--basetemp", "--maxfail", "--sw", "--tb", "--doctest-modules",
    "--no-verify", "--ours", "--work-tree", "--git-dir", "--trailer", "--no-edit", "--amend",
    "--graft", "--files", "--array",
}  # fmt: skip


def test_every_option_the_docs_name_is_one_a_command_takes() -> None:
    """The configuration reference said `--table` for the control table, which no command
    takes (it is `--controls`): each `--option` in a code span of the README and the docs
    that starts with it or with `fidelity ` must be one of fidelity's or a listed other
    tool's (commands.md is --help itself)."""
    from fidelity.cli.main import build_parser

    known = options(build_parser()) | OTHER_TOOLS
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {
        (page.relative_to(ROOT).as_posix(), flag)
        for page in pages
        if page.name != "commands.md"
        for span in re.findall(r"`((?:fidelity |--)[^`\n]*)`", page.read_text())
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", span)
    }
    unknown = sorted((page, flag) for page, flag in named if flag not in known)
    assert len(named) > 100, len(named)
    assert unknown == [], unknown
