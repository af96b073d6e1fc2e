"""Declared outputs: named for pairing, optional, expected absent; ignores that are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo

from fidelity.errors import TableError
from fidelity.matrix import gate
from fidelity.matrix.cases import files
from fidelity.matrix.cases.outputs import Output, collect
from fidelity.matrix.cases.table import parse
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_strip_pairs_files_under_a_folder_named_by_the_run(tmp_path: Path) -> None:
    out = tree(tmp_path, {"sim/2026-11-30T10-00/m.csv": "1", "sim/2026-11-30T10-00/log/a.txt": "2"})
    found = collect(out, [Output("sim/*/**", strip="sim/*/")])
    assert set(found.hashes) == {"m.csv", "log/a.txt"}
    assert found.paths["m.csv"] == "sim/2026-11-30T10-00/m.csv"


def test_a_name_pairs_one_match_and_refuses_two(tmp_path: Path) -> None:
    one = collect(tree(tmp_path / "a", {"run-17.log": "x"}), [Output("run-*.log", name="run.log")])
    assert list(one.hashes) == ["run.log"]
    two = collect(
        tree(tmp_path / "b", {"run-1.log": "x", "run-2.log": "y"}),
        [Output("run-*.log", name="run.log")],
    )
    assert two.hashes == {} and "matched 2 files for the one name 'run.log'" in two.problems[0]


def test_optional_and_absent(tmp_path: Path) -> None:
    out = tree(tmp_path, {"core.dump": "x"})
    found = collect(
        out, [Output("hist.csv", optional=True), Output("*.dump", absent=True), Output("r.txt")]
    )
    assert found.missing == ["r.txt"] and found.unexpected == ["core.dump"]


def test_two_files_stripped_to_one_name_are_a_problem(tmp_path: Path) -> None:
    out = tree(tmp_path, {"sim/a/m.csv": "1", "sim/b/m.csv": "2"})
    found = collect(out, [Output("sim/*/m.csv", strip="sim/*/")])
    assert len(found.hashes) == 1 and "are both named 'm.csv'" in found.problems[0]


CASE = '[[case]]\nid = "c"\nargv = ["x", "{{out}}"]\noutputs = {outputs}\n{extra}\n'


@pytest.mark.parametrize(
    ("outputs", "extra", "said"),
    [
        (
            '["r.json"]',
            '[case.compare."r.json"]\nkind = "json"\nignore = ["a.b"]',
            "did you mean '$.a.b'?",
        ),
        ('["r.json"]', '[case.compare."z.json"]\nkind = "json"', "names no output of this case"),
        ('[{ glob = "r", name = "a", strip = "b" }]', "", "$.case[0].outputs[0]"),
        ('[{ glob = "r", optional = true, absent = true }]', "", "$.case[0].outputs[0]"),
        ('[{ glob = "../r" }]', "", "must not leave the {out} directory"),
    ],
)
def test_output_and_ignore_mistakes_are_located(outputs: str, extra: str, said: str) -> None:
    with pytest.raises(TableError) as info:
        parse(CASE.format(outputs=outputs, extra=extra).encode(), "t.toml")
    assert said in str(info.value)


def test_their_valid_forms_parse() -> None:
    text = CASE.format(
        outputs='[{ glob = "sim/*/**", strip = "sim/*/" }, { glob = "x", optional = true }]',
        extra='[case.compare."r.json"]\nkind = "json"\nignore = ["$.a.b", "wall", "$.runs[*].t"]',
    )
    case = parse(text.encode(), "t.toml").cases[0]
    assert case.outputs[0].strip == "sim/*/" and case.outputs[1].optional


def test_declaring_an_output_optional_changes_the_definition() -> None:
    plain = parse(CASE.format(outputs='["r"]', extra="").encode(), "t").cases[0]
    optional = parse(
        CASE.format(outputs='[{ glob = "r", optional = true }]', extra="").encode(), "t"
    ).cases[0]
    same = parse(CASE.format(outputs='[{ glob = "r" }]', extra="").encode(), "t").cases[0]
    assert plain.definition_sha() != optional.definition_sha()
    assert plain.definition_sha() == same.definition_sha()  # the table form of a plain glob


def test_an_ignore_that_matched_nothing_is_a_finding(make_repo) -> None:
    repo: Repo = make_repo("r")
    write = "import json, sys, pathlib; v = pathlib.Path('v.txt').read_text(); json.dump({'value': v, 'wall': 1}, open(sys.argv[1] + '/r.json', 'w'))"
    table = (
        f'[[case]]\nid = "c"\nargv = ["{{python}}", "-c", {json.dumps(write)}, "{{out}}"]\n'
        'outputs = ["r.json"]\n[case.compare."r.json"]\nkind = "json"\nignore = ["$.wal", "wall"]\n'
    )
    base = repo.commit({"cases/matrix.toml": table, "v.txt": "1"})
    repo.commit({"v.txt": "2"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    unmatched = [f for f in outcome.findings if f.code is Code.IGNORE_UNMATCHED]
    assert (
        len(unmatched) == 1
        and "'$.wal'" in unmatched[0].message
        and "'wall'" not in unmatched[0].message
    )
    assert outcome.exit_code == 3


def test_an_output_declared_absent_that_appears_is_a_finding(make_repo) -> None:
    repo: Repo = make_repo("r")
    script = "printf x > {out}/r.txt && printf boom > {out}/core.dump"
    table = (
        f'[[case]]\nid = "c"\nargv = {json.dumps(script)}\nshell = true\n'
        'outputs = ["r.txt", { glob = "*.dump", absent = true }]\n'
    )
    repo.commit({"cases/matrix.toml": table})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    found = [f for f in outcome.findings if f.code is Code.UNEXPECTED_OUTPUT]
    assert len(found) == 2 and "core.dump, declared absent" in found[0].message
    assert outcome.exit_code == 3


@given(
    st.lists(st.sampled_from(["a", "b", "r.txt", ".", "a.b"]), min_size=1, max_size=4),
    st.lists(st.sampled_from(["a", "b", "r.txt", "a.b"]), min_size=1, max_size=4),
)
def test_a_plain_path_matches_as_the_glob_reading_does(pattern: list[str], rel: list[str]) -> None:
    """A pattern without `*`, `?` or `[` skips the glob reading (it runs per case and
    output): same answer as that reading, a file itself or any file under a folder."""
    text, path = "/".join(pattern), "/".join(rel)
    parts, pat = tuple(path.split("/")), files._parts(text)
    by_glob = any(files._match(parts[:n], pat) for n in range(1, len(parts) + 1))
    assert files.matches(path, text) is by_glob
