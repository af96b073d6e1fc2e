"""Case tables: every problem located by file, case id and JSON path."""

from __future__ import annotations

from pathlib import Path

import pytest

from fidelity.cli.main import main
from fidelity.errors import TableError
from fidelity.matrix.cases.outputs import Output
from fidelity.matrix.cases.table import glob_problem, parse

GOOD = b"""
[matrix]
name = "m"
import_check = ["pkg.sub"]
env = { A = "1" }

[[case]]
id = "one"
argv = ["python", "-m", "pkg", "--out", "{out}"]
outputs = ["*.csv"]
cache_env = "CACHE"
tags = ["t"]

[case.compare."*.csv"]
kind = "csv"
key = ["id"]
rtol = 0.0
"""


def problems(text: str) -> list[str]:
    with pytest.raises(TableError) as info:
        parse(text.encode(), "cases/x.toml")
    assert "cases/x.toml" in str(info.value)
    return info.value.problems


def test_a_valid_table_parses_into_frozen_values() -> None:
    m = parse(GOOD, "t.toml")
    assert m.name == "m" and m.import_check == ("pkg.sub",) and m.env == {"A": "1"}
    case = m.case("one")
    assert case.argv[0] == "python" and case.outputs == (Output("*.csv"),) and case.tags == ("t",)
    assert len(case.definition_sha()) == 64 and len(m.sha256) == 64


def test_definition_ignores_timeout_and_tags_but_not_argv() -> None:
    base = parse(GOOD, "t").case("one")
    retimed = parse(GOOD.replace(b'tags = ["t"]', b"timeout_s = 5"), "t").case("one")
    changed = parse(GOOD.replace(b'"--out"', b'"--output"'), "t").case("one")
    assert base.definition_sha() == retimed.definition_sha()
    assert base.definition_sha() != changed.definition_sha()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[case]]\nid = "a"\nargv = ["x"]\nbogus = 1\n',
            "case 'a' at $.case[0].bogus: unknown key 'bogus'",
        ),
        ('[[case]]\nid = "a"\n', "case 'a' at $.case[0]: 'argv' is a required property"),
        (
            '[[case]]\nid = "a"\nargv = []\n',
            "case 'a' at $.case[0].argv: must be a list of strings",
        ),
        (
            '[[case]]\nid = "a"\nargv = "echo hi"\n',
            "case 'a' at $.case[0].argv: is a string; give an argv list",
        ),
        (
            '[[case]]\nid = "a"\nargv = ["x"]\n[[case]]\nid = "a"\nargv = ["y"]\n',
            "case 'a' at $.case[1].id: duplicate id; first used at $.case[0]",
        ),
        (
            '[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["../up.csv"]\n',
            "case 'a' at $.case[0].outputs[0]: glob '../up.csv' must not leave",
        ),
        ('[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["[ab.csv"]\n', "unclosed '['"),
        ('[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["/abs"]\n', "must be relative"),
        (
            '[matrix]\nnam = "x"\n[[case]]\nid = "a"\nargv = ["x"]\n',
            "at $.matrix.nam: unknown key 'nam'",
        ),
        ('[[case]]\nid = "has space"\nargv = ["x"]\n', "case 'has space' at $.case[0].id: "),
        ('[[case]]\nid = "a"\nargv = ["x"]\ntimeout_s = 0\n', "at $.case[0].timeout_s"),
        (
            '[[case]]\nid = "a"\nargv = ["x"]\n[case.compare."o.csv"]\nkind = "csv"\n',
            "case 'a' at $.case[0].compare.o.csv: names no output of this case (declared:",
        ),
        ('[[case]]\nid = "a"\nargv = ["x"]\n', "case 'a' at $.case[0]: declares no evidence"),
        ('[[case]]\nid = "a"\nargv = ["x"]\noutputs = []\n', "declares no evidence"),
        ("[[case]\n", "invalid TOML"),
        ("[matrix]\n", "'case' is a required property"),
    ],
)
def test_each_problem_is_located(text: str, expected: str) -> None:
    assert any(expected in p for p in problems(text)), problems(text)


def test_string_argv_is_allowed_with_shell() -> None:
    m = parse(
        b'[[case]]\nid = "a"\nargv = "echo hi > {out}/x"\nshell = true\noutputs = ["x"]\n', "t"
    )
    assert m.case("a").argv == "echo hi > {out}/x"


def test_all_problems_are_reported_at_once() -> None:
    text = '[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["../a", "/b"]\n[[case]]\nid = "a"\nargv = ["y"]\n'
    assert len(problems(text)) == 4  # two bad globs, a duplicate id, a case with no evidence


def test_glob_problem_accepts_ordinary_globs() -> None:
    for ok in ("*.csv", "sub/**/*.json", "[ab].txt", "metrics.csv"):
        assert glob_problem(ok) is None


def test_cli_validate_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_bytes(GOOD)
    assert main(["cases", "validate", str(good)]) == 0
    assert "valid, 1 case" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[case]]\nid = "a"\nargv = ["x"]\nbogus = 1\n')
    assert main(["cases", "validate", str(bad)]) == 2
    assert "bad.toml" in capsys.readouterr().err
    assert main(["cases", "validate", str(tmp_path / "absent.toml")]) == 2


def test_cli_list_reads_the_configured_table(make_repo, capsys) -> None:
    repo = make_repo("r")
    repo.commit({"pyproject.toml": '[tool.fidelity]\ncases = "m.toml"\n', "m.toml": GOOD.decode()})
    assert main(["cases", "list", "--repo", str(repo.path)]) == 0
    out = capsys.readouterr().out
    assert "one" in out and "*.csv" in out


def test_an_internal_error_exits_3_not_1(tmp_path: Path, monkeypatch, capsys) -> None:
    """A crash is untrusted evidence, never "the evidence says no"."""
    from fidelity.matrix.cases import table as casetable

    def crash(data: bytes, source: str) -> None:
        raise RuntimeError("a bug")

    good = tmp_path / "good.toml"
    good.write_bytes(GOOD)
    monkeypatch.setattr(casetable, "parse", crash)
    assert main(["cases", "validate", str(good)]) == 3
    assert "internal error" in capsys.readouterr().err


def test_an_output_glob_starting_with_a_tilde_is_refused() -> None:
    """`~` would name a home folder, outside the case's output folder (red with that check
    dropped: only ordinary globs were tried)."""
    text = b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["~/r.csv"]\n'
    with pytest.raises(TableError) as info:
        parse(text, "cases/x.toml")
    assert any("must be relative" in p for p in info.value.problems), info.value.problems
