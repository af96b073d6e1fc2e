"""`-q` is accepted after every command and nested action, as well as before them, and
means the same thing everywhere: the parser tree is walked, so a new command cannot forget it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from fidelity.cli import options
from fidelity.cli.main import build_parser, main

PARSER = build_parser()
COMMANDS = options.commands(PARSER)
LEAVES = sorted(
    path
    for path, parser in COMMANDS.items()
    if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
)


def _filler(parser: argparse.ArgumentParser) -> list[str]:
    """The fewest arguments that satisfy a parser's required ones (values are never used)."""
    argv: list[str] = []
    for group in parser._mutually_exclusive_groups:
        if group.required:
            argv += [group._group_actions[0].option_strings[0], "1"]
    for action in parser._actions:
        if not action.required or action.nargs == "*":
            continue
        value = str(action.choices[0]) if action.choices else "1"  # type: ignore[index]
        argv += [action.option_strings[0], value] if action.option_strings else [value]
    return argv


def test_the_walk_finds_the_nested_actions() -> None:
    assert {("cases", "list"), ("cases", "validate"), ("controls", "run")} <= set(LEAVES)
    assert ("failset", "diff") in LEAVES and ("run",) in LEAVES


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
@pytest.mark.parametrize("spelling", ["-q", "--quiet"])
def test_quiet_parses_after_every_command(path: tuple[str, ...], spelling: str) -> None:
    """After each word of the command (`cases -q list`, `cases list -q`) and before it."""
    rest = _filler(COMMANDS[path])
    assert PARSER.parse_args([*path, *rest]).quiet is False
    assert PARSER.parse_args([spelling, *path, *rest]).quiet is True
    for cut in range(1, len(path) + 1):
        argv = [*path[:cut], spelling, *path[cut:], *rest]
        assert PARSER.parse_args(argv).quiet is True, argv


@pytest.mark.parametrize("action", ["list", "validate"])
def test_cases_actions_take_quiet_after_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    """The issue's own report: `fidelity cases list -q` was a usage error (exit 2)."""
    table = tmp_path / "matrix.toml"
    table.write_text('[[case]]\nid = "one"\nargv = ["true"]\noutputs = ["x.txt"]\n')
    assert main(["cases", action, str(table), "-q"]) == 0
    quiet = capsys.readouterr()
    assert main(["-q", "cases", action, str(table)]) == 0
    assert capsys.readouterr() == quiet
    assert ("one" if action == "list" else "valid, 1 case") in quiet.out


def test_a_parser_built_for_one_command_parses_it_as_the_whole_one() -> None:
    """`main` registers the command families only up to the one named (argparse for the
    others was ~8 ms of every start-up); each command's parser, `-q` and epilog included,
    must be the whole parser's."""
    from fidelity.cli.main import named_command

    assert named_command(["-q", "cases", "list"]) == "cases"
    assert named_command(["--version"]) is None and named_command(["--", "run"]) is None
    for name, whole in options.commands(PARSER).items():
        if len(name) > 1:
            continue
        built = build_parser(name[0])
        assert options.commands(built)[name].format_help() == whole.format_help(), name
    partial = options.commands(build_parser("check-docs"))
    assert ("check-docs",) in partial and ("gc",) not in partial
    assert options.commands(build_parser("no-such-command")).keys() == COMMANDS.keys()
