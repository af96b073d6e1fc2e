"""fidelity's gates on itself leave nothing out (issue 37 item 5): every leaf command of the
parser has a case in its own case table (cases/matrix.toml), and every capability of the
package layout has a control in its own control table (cases/controls.toml).

When a case covers a command. A case runs one fidelity command through a driver script:
`cases/fidelity_cli.py OUT [--steady] [--ids] ARGS` or `cases/fidelity_in_repo.py OUT
[OPTIONS] -- ARGS` (from the side's worktree or from `{harness}/`). The case covers the leaf
command whose words ARGS start with (after fidelity's own `-q`/`--quiet`): `["controls",
"run", "--only", ...]` covers `controls run`. Only ARGS count: the commands a history case
runs first (`--before`) are its set-up, not its subject. One exception, stated here:
`merge-records` is git's merge driver, never typed; a history case whose `--git` command is
a `merge` covers it, because fidelity_in_repo.py configures the driver `merge-records
--print-driver` prints and git runs `fidelity merge-records` on each record the merge
touches (merge-records-by-key and merge-records-clash keep the merged record as evidence).

What a capability is. Each package under fidelity/ (a folder of Python modules) and
`checkers/`; `fidelity/history/` holds three commands with their own tests, so each is a
capability (CAPABILITY_FILES); and the infrastructure modules the issue names (proc.py and
worktree.py). A control covers a capability when one of its edits changes a file of it.
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fidelity.cli import options
from fidelity.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ("cases/fidelity_cli.py", "cases/fidelity_in_repo.py")
CLI_OPTIONS = ("--steady", "--ids")  # fidelity_cli.py's own, before fidelity's ARGS
GLOBAL_OPTIONS = ("-q", "--quiet")
GIT_DRIVEN = ("merge-records",)  # covered by a history case's `--git "merge ..."`


def table(name: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "cases" / name).read_text())


def leaf_commands(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """The words of every command and nested action that has none of its own."""
    return sorted(
        path
        for path, sub in options.commands(parser).items()
        if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
    )


def fidelity_args(argv: Sequence[str]) -> list[str] | None:
    """What a case's argv passes to fidelity, per the rule above; None without a driver."""
    at = next((i for i, word in enumerate(argv) if word.endswith(DRIVERS)), None)
    if at is None:
        return None
    rest = list(argv[at + 2 :])  # after the driver and its OUT
    if argv[at].endswith(DRIVERS[0]):
        while rest and rest[0] in CLI_OPTIONS:
            rest.pop(0)
    else:
        rest = rest[rest.index("--") + 1 :] if "--" in rest else []
    while rest and rest[0] in GLOBAL_OPTIONS:
        rest.pop(0)
    return rest


def git_merges(argv: Sequence[str]) -> bool:
    """A history case that runs a `git merge` (with fidelity's record merge driver)."""
    pairs = zip(argv, argv[1:], strict=False)
    return any(a == "--git" and b.split()[:1] == ["merge"] for a, b in pairs)


def covered_by(case: Mapping[str, Any], leaves: Sequence[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The leaf commands one case covers."""
    argv = case["argv"]
    args = fidelity_args(argv) or []
    found = {leaf for leaf in leaves if tuple(args[: len(leaf)]) == leaf}
    if git_merges(argv):
        found |= {leaf for leaf in leaves if leaf == GIT_DRIVEN}
    return found


def uncovered(leaves: Sequence[tuple[str, ...]], cases: Sequence[Mapping[str, Any]]) -> list[str]:
    """The leaf commands no case covers, as typed (`controls run`)."""
    seen = set().union(*(covered_by(c, leaves) for c in cases))
    return [" ".join(leaf) for leaf in leaves if leaf not in seen]


def test_every_leaf_command_has_a_case() -> None:
    leaves = leaf_commands(build_parser())
    assert uncovered(leaves, table("matrix.toml")["case"]) == [], (
        "add a case to cases/matrix.toml that runs each of these (see this module's docstring)"
    )


def test_the_walk_lists_nested_actions_and_no_group() -> None:
    leaves = leaf_commands(build_parser())
    assert {("cases", "validate"), ("controls", "run"), ("failset", "record"), ("gc",)} <= set(
        leaves
    )
    assert ("controls",) not in leaves and ("cases",) not in leaves
    assert len(leaves) >= 25


def test_a_planted_leaf_command_without_a_case_is_named() -> None:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    top.add_parser("frobnicate")
    controls = next(
        a for a in top.choices["controls"]._actions if isinstance(a, argparse._SubParsersAction)
    )
    controls.add_parser("shrink")
    leaves = leaf_commands(parser)
    assert uncovered(leaves, table("matrix.toml")["case"]) == ["controls shrink", "frobnicate"]


def test_a_table_that_lost_a_case_names_its_command() -> None:
    leaves = leaf_commands(build_parser())
    cases = [c for c in table("matrix.toml")["case"] if c["id"] != "merge-shards"]
    assert uncovered(leaves, cases) == ["merge"]
    merges = [c for c in cases if not git_merges(c["argv"])]
    assert uncovered(leaves, merges) == ["merge", "merge-records"]


def test_the_words_are_read_after_the_driver_and_its_own_options() -> None:
    leaves = leaf_commands(build_parser())
    cli = ["{python}", "{harness}/cases/fidelity_cli.py", "{out}", "--steady", "--ids", "demo"]
    assert covered_by({"argv": cli}, leaves) == {("demo",)}
    in_repo = ["{python}", "cases/fidelity_in_repo.py", "{out}", "--before", "gc", "--", "-q"]
    assert covered_by({"argv": [*in_repo, "controls", "run"]}, leaves) == {("controls", "run")}
    assert covered_by({"argv": in_repo[:5]}, leaves) == set(), "--before is set-up, not a case"
    assert covered_by({"argv": ["{python}", "-m", "fidelity", "gc"]}, leaves) == set()
    # a command's words, not a prefix of a word: `merge-records` is not `merge`
    merged = covered_by({"argv": [*cli[:3], "merge-records", "--print-driver"]}, leaves)
    assert merged == {("merge-records",)}


def test_every_case_runs_a_command_the_parser_knows() -> None:
    leaves = leaf_commands(build_parser())
    cases = table("matrix.toml")["case"]
    unknown = [c["id"] for c in cases if len(covered_by(c, leaves) - {GIT_DRIVEN}) != 1]
    assert unknown == [], "each case must run exactly one leaf command through a driver"


# the history package's commands, each a capability of its own; any other module there fails
CAPABILITY_FILES = {
    "history": {
        "landed": ("fidelity/history/landed.py", "fidelity/history/landing.py"),
        "stale": ("fidelity/history/stale.py",),
        "trailers": ("fidelity/history/trailers.py",),
    },
}
INFRASTRUCTURE = {"proc": ("fidelity/proc.py",), "worktree": ("fidelity/worktree.py",)}


def packages(root: Path = ROOT) -> list[str]:
    """The folders of Python modules under fidelity/ (schemas/ holds none)."""
    return sorted(d.name for d in (root / "fidelity").iterdir() if any(d.glob("*.py")))


def capabilities(names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Each capability and the files (or folders, ending in /) that are it."""
    found: dict[str, tuple[str, ...]] = {"checkers": ("checkers/",)}
    for name in names:
        found |= CAPABILITY_FILES.get(name, {name: (f"fidelity/{name}/",)})
    return found | INFRASTRUCTURE


def without_control(caps: Mapping[str, tuple[str, ...]], controls: Sequence[Any]) -> list[str]:
    edited = {e["file"] for c in controls for e in c["edit"]}
    return [
        name
        for name, files in caps.items()
        if not any(f == p or (p.endswith("/") and f.startswith(p)) for f in edited for p in files)
    ]


def test_every_capability_has_a_control() -> None:
    caps = capabilities(packages())
    assert without_control(caps, table("controls.toml")["control"]) == [], (
        "append a control to cases/controls.toml that edits a file of each (docs/controls.md)"
    )


def test_the_layout_gives_the_issues_capabilities() -> None:
    caps = capabilities(packages())
    assert {"matrix", "controls", "checkers", "git", "landed", "ab", "recordmerge"} <= set(caps)
    assert {"preflight", "stale", "trailers", "proc", "worktree", "htmlreport"} <= set(caps)
    assert "history" not in caps and "schemas" not in caps


def test_a_split_package_has_no_module_outside_its_capabilities() -> None:
    for name, split in CAPABILITY_FILES.items():
        listed = {f for files in split.values() for f in files}
        modules = {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / "fidelity" / name).glob("*.py")
            if p.name != "__init__.py"
        }
        assert modules <= listed, f"name the capability of {sorted(modules - listed)}"


def test_a_capability_without_a_control_is_named() -> None:
    controls = table("controls.toml")["control"]
    kept = [c for c in controls if not c["edit"][0]["file"].startswith("fidelity/history/stale")]
    assert without_control(capabilities(packages()), kept) == ["stale"]
    planted = capabilities([*packages(), "newcap"])
    assert without_control(planted, controls) == ["newcap"]
