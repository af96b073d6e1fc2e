"""The CI recipe in docs/ci.md calls only commands and options that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from fidelity.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]


def commands(text: str) -> list[str]:
    """Every `fidelity ...` command line in the workflow, folded `run: >` blocks joined."""
    workflow = text.split("```yaml", 1)[1].split("```", 1)[0]
    found, folding = [], False
    for line in workflow.splitlines():
        body = line.strip()
        if body.startswith("- run: >"):
            folding, found = True, [*found, ""]
            continue
        if folding and body and not body.startswith(("-", "#")) and ":" not in body.split()[0]:
            found[-1] += " " + body
            continue
        folding = False
        if body.startswith("- run: fidelity"):
            found.append(body.removeprefix("- run: "))
    return [c.strip() for c in found if c.strip().startswith("fidelity")]


def test_every_fidelity_command_in_the_recipe_parses() -> None:
    found = commands((ROOT / "docs" / "ci.md").read_text())
    assert len(found) == 3 and {c.split()[2] for c in found} == {"run", "merge", "verify"}
    parser = build_parser()
    for command in found:
        words = shlex.split(re.sub(r"\$\{\{[^}]+\}\}", "1", command))[1:]
        args = parser.parse_args(words)  # exits 2 on an unknown command or option
        assert callable(args.handler)


def test_a_wrong_option_in_the_recipe_would_be_caught() -> None:
    import pytest

    with pytest.raises(SystemExit):
        build_parser().parse_args(["merge", "a", "--output", "merged"])
