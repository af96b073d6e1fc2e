"""Table-wide comparison specs (`[matrix.compare."<output>"]`) with per-case overrides, and
the compare blocks that cannot mean what they say (the TOML trap of a block written once
after the last case)."""

from __future__ import annotations

import json

import pytest
from support import PY, Repo

from fidelity.errors import TableError
from fidelity.matrix import gate, rejudge
from fidelity.matrix.cases.table import parse
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.widening import case_widenings

COPY = "import shutil, sys; shutil.copy('m.csv', sys.argv[1])"


def case(cid: str, outputs: str = '["m.csv", "log.txt"]') -> str:
    argv = json.dumps([PY, "-c", COPY, "{out}"])
    return f'[[case]]\nid = "{cid}"\nargv = {argv}\noutputs = {outputs}\n\n'


def spec(where: str, name: str = "m.csv", body: str = 'key = ["id"]\natol = 0.01') -> str:
    return f'[{where}.compare."{name}"]\nkind = "csv"\n{body}\n\n'


def problems(text: str) -> list[str]:
    with pytest.raises(TableError) as info:
        parse(text.encode(), "cases/x.toml")
    return info.value.problems


def test_a_table_wide_spec_applies_to_every_case_that_declares_the_output() -> None:
    matrix = parse((spec("matrix") + case("a") + case("c", '["o.txt"]') + case("b")).encode(), "x")
    assert matrix.case("a").compare == {"m.csv": {"kind": "csv", "key": ["id"], "atol": 0.01}}
    assert matrix.case("b").compare == matrix.case("a").compare
    assert matrix.case("c").compare == {}


def test_a_cases_own_spec_replaces_the_table_wide_one_and_no_definition_moves() -> None:
    own = spec("case", body="rtol = 0.5")
    matrix = parse((spec("matrix") + case("a") + own + case("b")).encode(), "x")
    assert matrix.case("a").compare == {"m.csv": {"kind": "csv", "rtol": 0.5}}
    assert matrix.case("b").compare["m.csv"]["atol"] == 0.01
    bare = parse((case("a") + case("b")).encode(), "x")
    assert [c.definition_sha() for c in matrix.cases] == [c.definition_sha() for c in bare.cases]


def test_an_own_glob_wins_over_a_table_wide_name_it_covers() -> None:
    own = spec("case", "*.csv", "rtol = 0.5")
    matrix = parse((spec("matrix") + case("a") + own + case("b")).encode(), "x")
    assert matrix.case("a").compare == {"*.csv": {"kind": "csv", "rtol": 0.5}}


def test_a_table_wide_spec_for_no_declared_output_is_refused() -> None:
    found = problems(spec("matrix", "m.json") + case("a"))
    assert found == [
        "at $.matrix.compare.m.json: names no output of any case: it would never apply"
    ]


def test_a_block_written_once_after_the_last_case_is_refused_with_the_table_wide_block() -> None:
    """The trap: meant for all seven cases, TOML gives it to the last one; it was valid."""
    text = "".join(case(f"c{i}") for i in range(7)) + spec("case")
    (found,) = problems(text)
    assert found.startswith("case 'c6' at $.case[6].compare.m.csv: applies to this last case")
    assert "cases 'c0', 'c1', 'c2' (+3 more) declare \"m.csv\" with no spec" in found
    assert 'write [matrix.compare."m.csv"]' in found
    assert "move the case above another [[case]]" in found  # the way to mean it for one case
    parse((spec("matrix") + text).encode(), "x")  # an override of the table's: valid
    parse((case("c0", '["o.txt"]') + case("c1") + spec("case")).encode(), "x")  # only c1 has it


def test_a_block_for_an_output_its_case_lacks_names_the_block_the_case_and_the_trap() -> None:
    text = case("a") + case("b", '["log.txt"]') + spec("case")
    (found,) = problems(text)
    assert found.startswith("case 'b' at $.case[1].compare.m.csv: names no output of this case")
    assert "case 'a' declares \"m.csv\" too" in found
    assert 'write [matrix.compare."m.csv"]' in found


def test_a_widening_through_the_table_wide_spec_is_found() -> None:
    before = parse((case("a") + spec("case", body='key = ["id"]\natol = 0.01')).encode(), "x")
    after = parse((spec("matrix", body='key = ["id"]\natol = 0.5') + case("a")).encode(), "x")
    found = case_widenings(after.case("a").compare, before.case("a").compare)
    assert found == ["m.csv: atol widened from 0.01 to 0.5"]
    glob = parse((spec("matrix", "*.csv", 'key = ["id"]\natol = 0.01') + case("a")).encode(), "x")
    assert case_widenings(glob.case("a").compare, before.case("a").compare) == []


def test_run_finds_a_widening_made_through_the_table_wide_spec(make_repo) -> None:
    repo: Repo = make_repo("widen")
    two = case("a", '["m.csv"]') + case("b", '["m.csv"]')
    narrow = spec("matrix", body='key = ["id"]\natol = 0.01')
    wide = spec("matrix", body='key = ["id"]\natol = 0.5')
    base = repo.commit({"m.csv": "id,v\n1,1.0\n", "cases/matrix.toml": narrow + two})
    repo.commit({"m.csv": "id,v\n1,1.4\n", "cases/matrix.toml": wide + two})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert {r.case_id: str(r.verdict) for r in outcome.comparison.cases} == {
        "a": "within-tolerance",
        "b": "within-tolerance",
    }
    widened = [f for f in outcome.findings if f.code is Code.TOLERANCE_WIDENED]
    assert {f.case_id for f in widened} == {"a", "b"} and outcome.exit_code == 3
    assert "atol widened from 0.01 to 0.5" in widened[0].message
    again = rejudge.recompare(outcome.run_dir)  # run.json keeps each case's effective spec
    assert {f.code for f in again.findings} == {Code.TOLERANCE_WIDENED}
    assert [str(r.verdict) for r in again.comparison.cases] == ["within-tolerance"] * 2


def test_a_sides_own_table_is_read_as_it_was_trap_and_all() -> None:
    """An older table with the trap in it still gives the widening check its specs."""
    text = (case("a") + case("b") + spec("case")).encode()
    assert problems(text.decode())
    own = parse(text, "base:cases/x.toml", authored=False)
    assert own.case("b").compare and not own.case("a").compare
