"""`fidelity preflight` on real repositories: each gate red on its bad input and green on its
nearest valid neighbour, the index judged apart from the work tree, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import Repo, matrix_toml, run_cli, snapshot

from fidelity.cli.main import main

PYPROJECT = """\
[tool.fidelity]
cases = "cases/matrix.toml"
controls = "cases/controls.toml"

[tool.fidelity.docs]
paths = ["README.md", "records/*.md"]

[[tool.fidelity.docs.page]]
path = "records/bench.md"
keyed_tables = { key = "row" }

[[tool.fidelity.records]]
path = "records/bench.md"
key = "row"
stale_after = 5

[tool.fidelity.trailers]
required = { "Assisted-by" = ".+" }
"""
CONTROLS = """\
[controls]
command = ["python", "-m", "pytest", "-q"]

[[control]]
id = "weight-one"
why = "waiting requests weigh four"
edit = [{ file = "src/calc.py", find = "WEIGHT = 4", replace = "WEIGHT = 1" }]
caught_by = ["tests/test_calc.py::test_weight"]
"""
CALC = "WEIGHT = 4\n\n\ndef score(waiting):\n    return WEIGHT * waiting\n"
BASELINE = {"version": 1, "failing": [], "collection_errors": [], "flaky": [], "counts": {}}


def bench(*rows: tuple[str, str]) -> str:
    body = "".join(f"| {key} | 1.0 s | {sha} |\n" for key, sha in rows)
    return f"# Bench\n\n| row | figure | commit |\n|---|---|---|\n{body}"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    first = r.commit(
        {
            "pyproject.toml": PYPROJECT,
            "cases/matrix.toml": matrix_toml({"a": "ok", "b": "ok"}),
            "cases/controls.toml": CONTROLS,
            "src/calc.py": CALC,
            "notes.txt": "not judged by any gate\n",
            "README.md": "# Demo\n\nSee [the bench](records/bench.md).\n",
            "records/failset.json": json.dumps(BASELINE),
        },
        "root\n\nAssisted-by: test\n",
    )
    r.commit({"records/bench.md": bench(("first", first[:10]))}, "bench")
    return r


def preflight(repo: Repo, *args: str) -> tuple[int, str]:
    return run_cli(["preflight", "--repo", str(repo.path), *args])


def line(out: str, gate: str) -> str:
    found = [ln for ln in out.splitlines() if ln.split()[1:2] == [gate]]
    assert len(found) == 1, out
    return found[0]


def stage(repo: Repo, files: dict[str, str]) -> None:
    repo.write(files)
    repo.git("add", "-A")


def test_a_clean_change_holds_and_says_what_ran(repo: Repo) -> None:
    stage(repo, {"src/calc.py": CALC + "\n# a comment\n"})
    code, out = preflight(repo, "--staged")
    assert code == 0, out
    assert line(out, "controls").startswith("ok")
    assert "valid, 1 control; 1 edit, every one applies" in line(out, "controls")
    assert line(out, "docs").startswith("n/a")
    assert out.splitlines()[-1].startswith("1 gate ok, 0 failed")


# Each gate: (files staged that break it, the nearest files that keep it, what the failure says)
GATE_CASES = {
    "cases": (
        {"cases/matrix.toml": matrix_toml({"a": "ok", "b": "ok"}).replace('"b"', '"a"')},
        {"cases/matrix.toml": matrix_toml({"a": "ok", "c": "ok"})},
        "duplicate id",
    ),
    "controls": (
        {"src/calc.py": CALC.replace("WEIGHT = 4", "WEIGHT = 5")},
        {"src/calc.py": CALC.replace("waiting)", "waiting, /)")},
        "control 'weight-one': src/calc.py: find 'WEIGHT = 4' does not occur",
    ),
    "predictions": (
        {"cases/predict-fix.toml": '[prediction]\nwhy = "x"\nmoved = ["nope"]\n'},
        {"cases/predict-fix.toml": '[prediction]\nwhy = "x"\nmoved = ["b"]\n'},
        "selector 'nope' matches no case",
    ),
    "failset": (
        {"records/failset.json": json.dumps({"version": 1, "failing": "t"})},
        {"records/failset.json": json.dumps({**BASELINE, "failing": ["t::x"]})},
        "records/failset.json: at $.failing",
    ),
    "docs": (
        {"README.md": "# Demo\n\nSee [the bench](records/gone.md).\n"},
        {"README.md": "# Demo\n\nSee [the bench](records/bench.md#bench).\n"},
        "README.md:3:17: FD401",
    ),
    "stale": (
        {"records/bench.md": bench(("first", "0123456789abc"))},
        {"records/bench.md": bench(("renamed", "HEAD~1"))},
        "row 'first' unknown",
    ),
}


@pytest.mark.parametrize("gate", sorted(GATE_CASES))
def test_each_gate_is_red_on_its_bad_input_and_green_on_the_nearest_good_one(
    repo: Repo, gate: str
) -> None:
    bad, good, says = GATE_CASES[gate]
    if gate == "stale":  # a real sha of the first commit, the good row's
        first = repo.git("rev-parse", "HEAD~1")
        good = {"records/bench.md": bench(("renamed", first[:12]))}
    stage(repo, bad)
    code, out = preflight(repo, "--staged")
    assert code == 1, out
    assert line(out, gate).startswith("FAIL"), out
    assert says in out
    assert "0 failed" not in out.splitlines()[-1]
    stage(repo, good)
    code, out = preflight(repo, "--staged")
    assert code == 0, out
    assert line(out, gate).startswith("ok"), out


def test_trailers_gate_judges_the_message_file(repo: Repo, tmp_path: Path) -> None:
    stage(repo, {"src/calc.py": CALC + "# x\n"})
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Change the weight\n\nNo trailer.\n")
    code, out = preflight(repo, "--staged", "--commit-msg", str(message))
    assert code == 1, out
    assert line(out, "trailers").startswith("FAIL")
    assert "FD801 missing required trailer `Assisted-by: ...`" in out
    message.write_text("Change the weight\n\nAssisted-by: a person\n")
    code, out = preflight(repo, "--staged", "--commit-msg", str(message))
    assert code == 0, out
    assert line(out, "trailers").startswith("ok")


def test_an_unstaged_fix_cannot_hide_a_staged_defect(repo: Repo) -> None:
    broken = CALC.replace("WEIGHT = 4", "WEIGHT = 5")
    stage(repo, {"src/calc.py": broken, "README.md": "# Demo\n\n[x](records/gone.md)\n"})
    repo.write({"src/calc.py": CALC, "README.md": "# Demo\n"})  # fixed, but not staged
    repo.git("status")  # snapshot() runs `git status`, which may refresh the stat cache first
    before = snapshot(repo.path)
    code, out = preflight(repo, "--staged")
    assert code == 1, out
    assert line(out, "controls").startswith("FAIL")
    assert line(out, "docs").startswith("FAIL") and "records/gone.md" in out
    assert snapshot(repo.path) == before, "the work tree and the index are untouched"
    code, out = preflight(repo)  # the work tree holds the fix (calc.py is HEAD's again)
    assert code == 0, out
    assert line(out, "controls").startswith("n/a") and line(out, "docs").startswith("ok")


def test_a_staged_deletion_is_judged_by_the_pages_that_link_to_it(repo: Repo) -> None:
    """`git rm` of a file a page links to breaks the page though the page is unchanged (red
    with deletions left out of the docs gate's pages: it said n/a)."""
    repo.commit({"README.md": "# Demo\n\nSee [notes](notes.txt).\n"}, "link the notes")
    repo.git("rm", "-q", "notes.txt")
    code, out = preflight(repo, "--staged")
    assert code == 1, out
    assert line(out, "docs").startswith("FAIL") and "README.md:3:13: FD401" in out, out
    stage(repo, {"README.md": "# Demo\n"})  # the link goes with the file: nothing broken
    code, out = preflight(repo, "--staged")
    assert code == 0 and line(out, "docs").startswith("ok"), out


def test_an_unstaged_defect_does_not_fail_a_clean_index(repo: Repo) -> None:
    stage(repo, {"src/calc.py": CALC + "# fine\n"})
    repo.write({"src/calc.py": "broken = True\n", "cases/matrix.toml": "not toml ["})
    code, out = preflight(repo, "--staged")
    assert code == 0, out
    code, out = preflight(repo)
    assert code == 1, out
    assert line(out, "cases").startswith("FAIL") and line(out, "controls").startswith("FAIL")


def test_a_file_only_in_the_work_tree_is_not_in_the_judged_index(repo: Repo) -> None:
    """README links to a page that exists on disk but was never staged."""
    repo.write({"records/extra.md": "# Extra\n"})
    stage(repo, {"README.md": "# Demo\n\n[extra](records/extra.md)\n"})
    repo.git("reset", "-q", "records/extra.md")
    code, out = preflight(repo, "--staged")
    assert code == 1 and "records/extra.md" in line(out, "docs") + out, out
    repo.git("add", "records/extra.md")
    code, out = preflight(repo, "--staged")
    assert code == 0, out


def test_a_change_no_gate_judges_passes_and_says_so(repo: Repo) -> None:
    stage(repo, {"notes.txt": "still not judged\n"})
    code, out = preflight(repo, "--staged")
    assert code == 0, out
    assert "nothing any gate judges changed" in out.splitlines()[-1]
    assert out.splitlines()[-1].startswith("0 gates ok, 0 failed")


def test_nothing_configured_is_untrusted(make_repo) -> None:
    bare = make_repo("bare")
    bare.commit({"a.txt": "a\n"}, "a")
    stage(bare, {"a.txt": "b\n"})
    code, out = preflight(bare, "--staged")
    assert code == 3, out
    assert "nothing was judged" in out


@pytest.mark.parametrize(
    ("gate", "broken"),
    [
        ("docs", ("[tool.fidelity.docs]\n", "[tool.fidelity.docs]\nbogus = 1\n")),
        ("docs", ('paths = ["README.md"', 'paths = ["/abs/README.md"')),
        ("stale", ("stale_after = 5", 'stale_after = "soon"')),
        ("trailers", ('required = { "Assisted-by" = ".+" }', "")),
    ],
)
def test_a_gates_invalid_configuration_is_exit_2_not_a_failure(
    repo: Repo, tmp_path: Path, gate: str, broken: tuple[str, str]
) -> None:
    """As the gate's own command says (exit 2 naming the key): a configuration error is not
    a finding of the change, and a failing gate beside it does not turn it into exit 1."""
    stage(repo, {"pyproject.toml": PYPROJECT.replace(*broken)})
    message = tmp_path / "MSG"
    message.write_text("Change\n\nAssisted-by: a person\n")
    code, out = preflight(repo, "--all", "--commit-msg", str(message))
    assert code == 2, out
    assert line(out, gate).startswith("invalid"), out
    assert "not configured validly (exit 2: fix the configuration)" in out.splitlines()[-1]
    stage(repo, {"README.md": "# Demo\n\nSee [the bench](records/gone.md).\n"})
    assert preflight(repo, "--all", "--commit-msg", str(message))[0] == 2  # and a FAIL beside


def test_all_judges_everything_configured(repo: Repo) -> None:
    code, out = preflight(repo, "--all")
    assert code == 0, out
    for gate in ("cases", "controls", "failset", "docs", "stale"):
        assert line(out, gate).startswith("ok"), out
    assert line(out, "trailers").startswith("n/a")


def test_list_runs_nothing_and_says_why(repo: Repo) -> None:
    stage(repo, {"cases/matrix.toml": "not toml ["})
    code, out = preflight(repo, "--staged", "--list")
    assert code == 0, out
    assert line(out, "cases").startswith("runs") and "cases/matrix.toml changed" in out
    assert line(out, "docs").startswith("n/a")
    assert "gates ok" not in out


def test_base_widens_the_change(repo: Repo) -> None:
    first = repo.git("rev-parse", "HEAD~1")
    code, out = preflight(repo, "--base", first)
    assert code == 0, out
    assert line(out, "stale").startswith("ok") and line(out, "docs").startswith("ok")


def test_the_preflight_table_is_validated_by_its_schema(repo: Repo, capsys) -> None:
    stage(repo, {"pyproject.toml": PYPROJECT + '\n[tool.fidelity.preflight]\ngate = ["docs"]\n'})
    code = main(["preflight", "--repo", str(repo.path), "--staged"])
    assert code == 2
    err = capsys.readouterr().err
    assert "[tool.fidelity.preflight].gate: unknown key 'gate'" in err


def test_gates_runs_only_those_named_and_refuses_an_unconfigured_one(repo: Repo, capsys) -> None:
    table = '\n[tool.fidelity.preflight]\ngates = ["cases", "docs"]\n'
    stage(repo, {"pyproject.toml": PYPROJECT + table})
    code, out = preflight(repo, "--staged")
    assert code == 0, out
    assert line(out, "controls").startswith("off") and "not in [tool.fidelity.preflight]" in out
    assert line(out, "cases").startswith("ok") and line(out, "docs").startswith("ok")
    no_trailers = PYPROJECT.split("[tool.fidelity.trailers]")[0]
    stage(
        repo, {"pyproject.toml": no_trailers + '[tool.fidelity.preflight]\ngates = ["trailers"]\n'}
    )
    assert main(["preflight", "--repo", str(repo.path), "--staged"]) == 2
    assert "gates names 'trailers'" in capsys.readouterr().err


def test_json_report(repo: Repo, tmp_path: Path) -> None:
    stage(repo, {"src/calc.py": CALC.replace("WEIGHT = 4", "WEIGHT = 5")})
    code, _ = preflight(repo, "--staged", "--json", str(tmp_path / "r.json"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert code == data["exit_code"] == 1
    gates = {g["gate"]: g for g in data["gates"]}
    assert gates["controls"]["status"] == "failed" and gates["controls"]["details"]
    assert data["judged"] == "the index"


def test_the_schema_names_every_gate_of_the_table() -> None:
    from fidelity import schema
    from fidelity.preflight.gates import GATES

    enum = schema.load("preflight")["properties"]["gates"]["items"]["enum"]
    assert enum == [gate.name for gate in GATES]


def test_the_predictions_gate_reads_every_key_of_a_prediction(repo: Repo) -> None:
    fixed = (
        '[prediction]\nwhy = "x"\nmoved = ["b"]\nfixed = ["a"]\n'
        '[[prediction.findings]]\nfinding = "missing-evidence"\ncase = "a"\nwhy = "known"\n'
    )
    stage(repo, {"cases/predict-fix.toml": fixed})
    code, out = preflight(repo, "--staged")
    assert code == 0 and line(out, "predictions").startswith("ok"), out
    stage(repo, {"cases/predict-fix.toml": fixed.replace('fixed = ["a"]', 'fixed = ["ghost"]')})
    code, out = preflight(repo, "--staged")
    assert code == 1 and "(fixed): selector 'ghost' matches no case" in out, out
    stage(repo, {"cases/predict-fix.toml": fixed.replace('fixed = ["a"]', 'fixed = ["b"]')})
    code, out = preflight(repo, "--staged")
    assert code == 1 and "predicted both moved and fixed" in out, out


def test_a_watched_path_nothing_touched_is_invalid_unless_the_change_adds_it(repo: Repo) -> None:
    """A typo in watch is the stale gate's `invalid` (exit 2), as under `fidelity stale`: the
    refusal ran inside each row's check and escaped the gate as an error; a folder first
    added by the very change being judged is no typo (it was refused)."""
    first = repo.git("rev-parse", "HEAD~1")[:12]
    typo = PYPROJECT.replace("stale_after = 5", 'stale_after = 5\nwatch = ["scr/"]')
    stage(repo, {"pyproject.toml": typo, "records/bench.md": bench(("first", first), ("b", first))})
    code, out = preflight(repo, "--staged")
    assert code == 2 and line(out, "stale").startswith("invalid"), out
    assert "row 'first' watches 'scr/', which no commit of" in out
    added = typo.replace('"scr/"', '"newsrc/"')
    stage(repo, {"pyproject.toml": added, "newsrc/m.py": "x = 1\n"})
    code, out = preflight(repo, "--staged")
    assert code == 0 and line(out, "stale").startswith("ok"), out
