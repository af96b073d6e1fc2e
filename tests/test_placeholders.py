"""One placeholder grammar: validation sees exactly the places substitution fills."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fidelity import placeholders
from fidelity.controls.table import parse as parse_controls
from fidelity.errors import TableError
from fidelity.matrix.cases.table import parse as parse_cases

# the grammar's own pieces, characters and names, so that the examples hit its corners
FRAGMENTS = [
    *("{out}", "${out}", "{{out}}", "{python}", "{x_1}", "{OUT}"),
    *("{", "}", "$", "{{", "}}", "${", "out", "x_1", " ", "\\", "9"),
]
values = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
    st.text(alphabet=st.characters(exclude_characters="\x00"), max_size=30),
)
# every `{name}`-shaped span, overlapping ones too: names fill could be handed
_SHAPED = re.compile(r"(?=\{([a-z_][a-z0-9_]*)\})")
_ESCAPE = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


@given(values)
@example("echo ${out}")  # the shell's variable: neither reported nor filled
@example("{out}}")
@example("{{out}")
@example("{{{out}}}")
@example("${{out}}")
def test_validation_reports_exactly_what_fill_replaces(value: str) -> None:
    reported = [name[1:-1] for name in placeholders.unknown(value, ())]
    universe = sorted({*_SHAPED.findall(value), "python"})
    sentinels = {name: f"\x00{i}\x00" for i, name in enumerate(universe)}
    parts = re.split("\x00([0-9]+)\x00", placeholders.fill(value, sentinels))
    filled = [universe[int(i)] for i in parts[1::2]]
    assert filled == reported
    # outside the filled places nothing changed but each `{{name}}` becoming `{name}`
    restored = "".join(
        p if k % 2 == 0 else "{" + universe[int(p)] + "}" for k, p in enumerate(parts)
    )
    assert restored == _ESCAPE.sub(r"{\1}", value)


@pytest.mark.parametrize(
    ("value", "filled"),
    [
        ("--out {out}", "--out /o"),
        ("echo ${out}", "echo ${out}"),
        ("{{out}}", "{out}"),
        ("${{out}}", "${out}"),
        ("{outt} {out}}", "{outt} /o}"),
    ],
)
def test_fill(value: str, filled: str) -> None:
    assert placeholders.fill(value, {"out": "/o"}) == filled


def test_pieces_give_the_value_back() -> None:
    value = "a {out} ${cache} {{x}} {"
    kinds = [p.kind.name for p in placeholders.pieces(value)]
    assert kinds == ["TEXT", "PLACE", "TEXT", "SHELL", "TEXT", "ESCAPED", "TEXT"]
    assert "".join(p.text for p in placeholders.pieces(value)) == value


def test_a_shell_variable_named_like_a_placeholder_is_a_problem() -> None:
    said = placeholders.problems("echo ${out} ${home} ${{out}}", placeholders.CASE)
    assert said == [
        "${out} is the shell's variable, which fidelity does not fill: write {out} for "
        "fidelity's placeholder, or ${{out}} (or $out) for the shell's variable"
    ]


def test_a_case_table_refuses_a_shell_spelled_placeholder() -> None:
    table = (
        '[[case]]\nid = "a"\nargv = "echo x > ${out}/r.txt"\nshell = true\noutputs = ["r.txt"]\n'
    )
    with pytest.raises(TableError) as info:
        parse_cases(table.encode(), "t.toml")
    assert info.value.exit_code == 2
    assert info.value.problems == [
        "case 'a' at $.case[0].argv: ${out} is the shell's variable, which fidelity does not "
        "fill: write {out} for fidelity's placeholder, or ${{out}} (or $out) for the shell's "
        "variable"
    ]
    parse_cases(table.replace("${out}", "${{out}}").encode(), "t.toml")
    parse_cases(table.replace("${out}", "{out}").encode(), "t.toml")


@pytest.mark.parametrize(
    ("head", "said"),
    [
        ('command = ["x", "${junit}"]', "at $.controls.command[1]: ${junit} is the shell's"),
        ('setup = [["x", "{junit}"]]', "at $.controls.setup[0][1]: unknown placeholder {junit}"),
        ('env = { A = "{worktre}" }', "at $.controls.env.A: unknown placeholder {worktre}"),
    ],
)
def test_a_control_table_checks_its_placeholders(head: str, said: str) -> None:
    body = '[[control]]\nid = "c"\nwhy = "w"\nedit = [{ file = "f", find = "a", replace = "b" }]\nsurvives = true\nresidue = "r"\n'
    with pytest.raises(TableError) as info:
        parse_controls(f"[controls]\n{head}\n{body}".encode(), "c.toml")
    assert info.value.problems[0].startswith(said), info.value.problems
    fine = '[controls]\ncommand = ["{python}", "-m", "pytest", "--junitxml={junit}"]\nenv = { A = "{worktree}" }\n'
    assert parse_controls(f"{fine}{body}".encode(), "c.toml").command[3] == "--junitxml={junit}"
