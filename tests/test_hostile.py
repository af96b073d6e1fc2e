"""Hostile but realistic input: odd paths, values that would disable a check, broken files.

Each is a located usage error (exit 2) or a finding (exit 3), never a traceback and never
a silent pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import PROG, PY, Repo, matrix_toml

from fidelity.cli.main import main
from fidelity.errors import TableError
from fidelity.matrix import gate, rejudge
from fidelity.matrix.cases.table import parse
from fidelity.matrix.run.request import RunRequest


def table_with(extra_case_keys: str = "", extra_matrix: str = "") -> bytes:
    return (
        f'[matrix]\nname = "t"\n{extra_matrix}\n[[case]]\nid = "a"\n'
        f'argv = ["x", "{{out}}"]\noutputs = ["r.txt"]\n{extra_case_keys}\n'
    ).encode()


@pytest.mark.parametrize(
    ("case_keys", "matrix_keys", "said"),
    [
        ("timeout_s = nan", "", "case 'a' at $.case[0].timeout_s: must be a finite number"),
        ("timeout_s = inf", "", "$.case[0].timeout_s: must be a finite number"),
        ('[case.compare."r.txt"]\nkind = "csv"\nrtol = nan', "", ".compare.r.txt.rtol: must be"),
        ("", "setup_timeout_s = -inf", "$.matrix.setup_timeout_s"),
        (
            'env = { X = "{outt}" }',
            "",
            "unknown placeholder {outt}; known here: {cache}, {harness}, {out}",
        ),
        ("", 'setup = [["make", "{out}"]]', "$.matrix.setup[0][1]: unknown placeholder {out}"),
    ],
)
def test_values_that_would_disable_a_check_are_located_errors(
    case_keys: str, matrix_keys: str, said: str
) -> None:
    with pytest.raises(TableError) as info:
        parse(table_with(case_keys, matrix_keys), "t.toml")
    assert said in str(info.value)


def test_their_valid_neighbours_parse() -> None:
    matrix = parse(
        table_with('timeout_s = 1e9\nenv = { X = "{out}", Y = "${HOME}", Z = "{{out}}" }'),
        "t.toml",
    )
    assert matrix.cases[0].timeout_s == 1e9


def test_jobs_below_one_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--baseline", "HEAD", "--jobs", "0"])
    assert info.value.code == 2
    assert "must be at least 1, not 0" in capsys.readouterr().err


def test_shell_cases_quote_their_placeholders(tmp_path: Path, make_repo) -> None:
    repo: Repo = make_repo("a repo with spaces $(touch pwned)")
    table = (
        '[[case]]\nid = "s"\nargv = "printf x > {out}/r.txt"\nshell = true\noutputs = ["r.txt"]\n'
    )
    repo.commit({"cases/matrix.toml": table})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert [str(r.verdict) for r in outcome.comparison.cases] == ["identical"]
    assert outcome.exit_code == 0
    assert not list(tmp_path.rglob("pwned")) and not list(repo.path.rglob("pwned"))


def test_a_relative_out_is_where_the_evidence_lands(sim_repo: Repo, monkeypatch) -> None:
    monkeypatch.chdir(sim_repo.path)
    code = main(["-q", "run", "--baseline", "HEAD", "--out", "rel/run"])
    assert code == 0
    assert (sim_repo.path / "rel" / "run" / "run.json").is_file()


def test_dot_fidelity_being_a_file_is_a_usage_error(sim_repo: Repo, capsys) -> None:
    (sim_repo.path / ".fidelity").write_text("not a folder")
    assert main(["run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert "must be a writable directory" in err and "Traceback" not in err


def test_an_unwritable_report_fails_before_anything_runs(sim_repo: Repo, capsys) -> None:
    blocker = sim_repo.path / "blocker"
    blocker.write_text("a file where a folder should be")
    argv = [
        "run",
        "--repo",
        str(sim_repo.path),
        "--baseline",
        "HEAD",
        "--json",
        str(blocker / "x.json"),
    ]
    assert main(argv) == 2
    assert "is not a writable folder" in capsys.readouterr().err
    assert not (sim_repo.path / ".fidelity").exists(), "nothing ran"


def test_reports_go_into_folders_that_do_not_exist_yet(sim_repo: Repo) -> None:
    where = sim_repo.path.parent / "new" / "deeper"
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]
    reports = [
        "--json",
        str(where / "v.json"),
        "--markdown",
        str(where / "v.md"),
        "--junit",
        str(where / "v.xml"),
    ]
    assert main([*argv, *reports]) == 0
    assert json.loads((where / "v.json").read_text())["exit_code"] == 0


def swap(text: str, old: str, new: str) -> bytes:
    """text with its first `old` replaced (run.json is written compact), which must be there:
    a damage that changes nothing would test nothing."""
    assert old in text
    return text.replace(old, new, 1).encode()


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda text: text.encode()[:100] + b"\xff" + text.encode()[101:], "not UTF-8 at byte 100"),
        (
            lambda text: swap(text, '"tags":[', '"tags":null,"x":['),
            "at $.matrix.cases[0].tags: None is not of type 'array'",
        ),
        (lambda text: b"", "not valid JSON at line 1 column 1"),
        (lambda text: b"[]", "at $: must be an object, not list"),
    ],
)
def test_a_corrupt_run_json_is_untrusted_and_located(sim_repo: Repo, damage, said, capsys) -> None:
    outcome = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD"))
    path = outcome.run_dir / "run.json"
    path.write_bytes(damage(path.read_text()))
    assert main(["compare", str(outcome.run_dir)]) == 3
    err = capsys.readouterr().err
    assert f"{path}: {said}" in err and "run `fidelity run` again" in err
    assert "internal error" not in err and "Traceback" not in err


def test_file_names_that_are_not_utf8_reach_every_report(make_repo, tmp_path: Path) -> None:
    repo: Repo = make_repo("names")
    write = "import os, sys; open(os.path.join(sys.argv[1].encode(), b'r\\xff.txt'), 'wb').write(open('v.txt','rb').read())"
    table = f'[[case]]\nid = "n"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(write)}, "{{out}}"]\noutputs = ["*.txt"]\n'
    base = repo.commit({"cases/matrix.toml": table, "v.txt": "1"})
    repo.commit({"v.txt": "2"})
    reports = tmp_path / "reports"
    argv = [
        "-q",
        "run",
        "--repo",
        str(repo.path),
        "--baseline",
        base,
        "--json",
        str(reports / "v.json"),
    ]
    code = main([*argv, "--markdown", str(reports / "v.md"), "--junit", str(reports / "v.xml")])
    assert code == 1
    from xml.etree import ElementTree

    ElementTree.parse(reports / "v.xml")  # well-formed XML
    # Markdown escapes the backslash of the escape: GitHub shows r\udcff.txt
    assert "r\\\\udcff.txt" in (reports / "v.md").read_text()
    json.loads((reports / "v.json").read_text())
    assert (
        rejudge.recompare(Path(json.loads((reports / "v.json").read_text())["run_dir"])).exit_code
        == 1
    )


def test_matrix_toml_helper_still_builds_valid_tables() -> None:
    assert parse(matrix_toml({"a": "ok"}).encode(), "t.toml").cases[0].id == "a"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--baseline", "HEAD"],
        ["stale"],
        ["controls", "run"],
        ["preflight", "--all"],
        ["cases", "list"],
        ["landed", "--ref", "HEAD", "--commit", "HEAD"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_repository_under_a_folder_name_that_is_not_utf8_is_a_usage_error(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red before the fix: UnicodeDecodeError in worktrees.toplevel, exit 3."""
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/repo-\xff"))
    repo = Repo(folder)
    repo.commit(
        {"prog.py": PROG, "value.txt": "one\n", "cases/matrix.toml": matrix_toml({"a": "ok"})}
    )
    assert main([*argv, "--repo", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "repo-\\xff: the folder name 'repo-\\xff' is not valid UTF-8" in err
    assert "rename the folder" in err


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ('env = { X = "a\\u0000b" }', "case 'a' at $.case[0].env.X: holds a NUL character"),
        ('cwd = "{worktree}/a\\u0000"', "case 'a' at $.case[0].cwd: holds a NUL character"),
    ],
)
def test_a_nul_in_a_case_value_is_a_located_table_error(where: str, said: str) -> None:
    """Red before the fix: `ValueError: embedded null byte` from Popen, exit 3."""
    with pytest.raises(TableError) as info:
        parse(table_with(where), "t.toml")
    assert said in str(info.value) and "remove it" in str(info.value)


def test_a_nul_that_reaches_a_process_is_a_usage_error(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A NUL in pyproject.toml's records `watch` goes to git as a path: exit 2 naming it
    (red before: a traceback, exit 3)."""
    repo = make_repo("nul")
    repo.commit({"value.txt": "one\n"})
    sha = repo.git("rev-parse", "--short", "HEAD")
    repo.commit(
        {
            "pyproject.toml": '[[tool.fidelity.records]]\npath = "records/b.md"\nkey = "row"\n'
            'commit_column = "commit"\nwatch = ["src\\u0000"]\n',
            "records/b.md": f"# B\n\n| row | commit |\n|---|---|\n| a | {sha} |\n",
        }
    )
    assert main(["stale", "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err
    assert "cannot start 'git': its argument 'src\\x00' holds a NUL character" in err


def test_a_nul_in_a_control_command_is_a_located_table_error() -> None:
    """Red before the fix: `ValueError: embedded null byte`, exit 3, from `controls run`."""
    from fidelity.controls.table import parse as parse_controls

    text = (
        '[controls]\ncommand = ["python", "-m", "pytest", "\\u0000"]\n[[control]]\nid = "x"\n'
        'why = "w"\nedit = [{ file = "p.py", find = "1", replace = "2" }]\ncaught_by = ["t::x"]\n'
    )
    with pytest.raises(TableError) as info:
        parse_controls(text.encode(), "controls.toml")
    assert "at $.controls.command[3]: holds a NUL character" in str(info.value)
