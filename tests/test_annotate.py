"""GitHub annotations from the gates (fidelity/cli/annotate.py), on real runs and histories.

Printed only when GITHUB_ACTIONS=true, only when the gate does not hold, at the file and
line of the cause where there is one: a case's entry in the case table, a record's row, a
message file's line; else a plain `::error title=...::`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from support import PY, Repo, run_cli

from fidelity.cli import annotate
from fidelity.cli.main import main
from fidelity.github import Annotation
from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest, Shard

CI = "GITHUB_ACTIONS"


def annotation_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::")]


def line_of(repo: Repo, path: str, text: str) -> int:
    return (repo.path / path).read_text().splitlines().index(text) + 1


def shards(repo: Repo, base: str, tmp: Path, **kw: str) -> list[Path]:
    dirs = [tmp / "shard-1", tmp / "shard-2"]
    for k, out in enumerate(dirs, 1):
        gate.run(repo.path, RunRequest(base, "HEAD", out=out, shard=Shard(k, 2), **kw))  # type: ignore[arg-type]
    return dirs


@pytest.fixture
def moved(sim_repo: Repo) -> tuple[Repo, list[str]]:
    """A candidate that moves every case and fails case c."""
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"value.txt": "bad\n"})
    return sim_repo, ["-q", "run", "--repo", str(sim_repo.path), "--baseline", base]


def test_a_run_that_moves_annotates_each_case_at_its_table_line(
    moved: tuple[Repo, list[str]], monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path
) -> None:
    repo, argv = moved
    assert main([*argv, "--out", str(tmp_path / "quiet")]) == 1
    assert annotation_lines(capsys.readouterr().out) == [], "not under GitHub Actions"
    monkeypatch.setenv(CI, "false")
    assert main([*argv, "--out", str(tmp_path / "false")]) == 1
    assert annotation_lines(capsys.readouterr().out) == []
    monkeypatch.setenv(CI, "true")
    assert main([*argv, "--out", str(tmp_path / "ci")]) == 1
    notes = annotation_lines(capsys.readouterr().out)
    assert notes[0].startswith("::error title=fidelity run::MOVED: 2 moved, 1 failed of 3")
    a, c = (line_of(repo, "cases/matrix.toml", f'id = "{i}"') for i in "ac")
    assert notes[1] == (
        f"::error file=cases/matrix.toml,line={a},title=fidelity run%3A case a::"
        "moved: 1 output, 1 cache files differ: result.txt"
    )
    assert notes[3].startswith(
        f"::error file=cases/matrix.toml,line={c},title=fidelity run%3A case c::"
        "candidate-only-failed: candidate failed (exit 3) (logs: "
    )
    assert len(notes) == 4


def test_a_gate_that_holds_annotates_nothing(
    sim_repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv(CI, "true")
    assert main(["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]) == 0
    assert annotation_lines(capsys.readouterr().out) == []


def test_json_on_stdout_stays_json(
    moved: tuple[Repo, list[str]], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv(CI, "true")
    assert main([*moved[1], "--json", "-"]) == 1
    assert json.loads(capsys.readouterr().out)["exit_code"] == 1


def test_merge_verify_and_compare_annotate_from_the_working_directory(
    sim_repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path
) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit(
        {"value.txt": "two\n", "cases/p.toml": '[prediction]\nwhy = "x"\nmoved = ["a", "b"]\n'}
    )
    dirs = shards(sim_repo, base, tmp_path, expect="cases/p.toml")
    monkeypatch.setenv(CI, "true")
    monkeypatch.chdir(sim_repo.path)  # where a CI job runs: the checkout's top
    assert main(["-q", "merge", *map(str, dirs), "--out", str(tmp_path / "m")]) == 1
    c = line_of(sim_repo, "cases/matrix.toml", 'id = "c"')
    merged = annotation_lines(capsys.readouterr().out)
    assert merged[0].startswith("::error title=fidelity merge::FALSIFIED: 1 unexpected")
    assert merged[1].startswith(
        f"::error file=cases/matrix.toml,line={c},title=fidelity merge%3A case c::"
        "moved, not predicted: "
    )
    for command in ("verify", "compare"):
        code = main(["-q", command, str(tmp_path / "m")])
        got = annotation_lines(capsys.readouterr().out)
        assert (code, got[0].split("::")[1]) == (1, f"error title=fidelity {command}")
        assert got[1].startswith(f"::error file=cases/matrix.toml,line={c},")
    monkeypatch.chdir(tmp_path)  # no case table here: the annotation names no file
    assert main(["-q", "verify", str(tmp_path / "m")]) == 1
    assert annotation_lines(capsys.readouterr().out)[1].startswith(
        "::error title=fidelity verify%3A case c::moved, not predicted"
    )


def test_an_altered_shard_is_annotated_at_its_case(
    sim_repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path
) -> None:
    dirs = shards(sim_repo, "HEAD", tmp_path)
    shard = next(d for d in dirs if (d / "baseline/cases/a").is_dir())
    (shard / "baseline/cases/a/out/result.txt").write_text("forged")
    monkeypatch.setenv(CI, "true")
    monkeypatch.chdir(sim_repo.path)
    assert main(["-q", "merge", *map(str, dirs), "--out", str(tmp_path / "m")]) == 3
    a = line_of(sim_repo, "cases/matrix.toml", 'id = "a"')
    assert (
        f"::error file=cases/matrix.toml,line={a},title=fidelity merge%3A evidence-altered::"
        f"evidence-altered [baseline] case a: shard 1 ({shard}): out/result.txt changed: "
    ) in capsys.readouterr().out


def test_a_refused_merge_is_annotated(
    sim_repo: Repo, monkeypatch: pytest.MonkeyPatch, capsys, tmp_path: Path
) -> None:
    plain = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "p"))
    monkeypatch.setenv(CI, "true")
    assert main(["merge", str(plain.run_dir), "--out", str(tmp_path / "m")]) == 2
    (note,) = annotation_lines(capsys.readouterr().out)
    assert note.startswith(
        "::error title=fidelity merge%3A usage or configuration error::"
        f"{plain.run_dir} is not a shard (run it with --shard K/N)"
    )


STALE = """\
[[tool.fidelity.records]]
path = "records/bench.md"
key = "row"
commit_column = "commit"
watch = ["src/"]
stale_after = 0
"""


def test_a_stale_row_is_annotated_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    measured = repo.commit({"pyproject.toml": STALE, "src/a.py": "a = 0\n"}, "root")
    repo.commit({"src/a.py": "a = 1\n"}, "faster, said someone")
    table = f"# Bench\n\n| row | commit |\n|---|---|\n| speed | {measured[:10]} |\n"
    repo.commit({"records/bench.md": table}, "record")
    argv = ["stale", "-q", "--repo", str(repo.path)]
    assert annotation_lines(run_cli(argv)[1]) == []
    monkeypatch.setenv(CI, "true")
    code, out = run_cli(argv)
    assert code == 1
    assert annotation_lines(out) == [
        "::error title=fidelity stale::1 row checked against HEAD "
        f"({repo.git('rev-parse', 'HEAD')[:12]}): 1 stale",
        "::error file=records/bench.md,line=5,title=fidelity stale%3A stale row speed::"
        f"speed (commit {measured[:10]}): 1 commit touching its watched paths landed since it "
        "was measured (limit 0): re-measure it and record the new commit; newest: "
        f"{repo.git('rev-parse', 'HEAD~1')[:10]} faster, said someone",
    ]


def test_trailer_findings_are_annotated_by_commit_or_at_the_message_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    config = '[tool.fidelity.trailers]\nrequired = { "Signed-off-by" = ".+" }\n'
    base = repo.commit({"pyproject.toml": config}, "root")
    sha = repo.commit({"a.py": "x = 1\n"}, "no sign-off")
    monkeypatch.setenv(CI, "true")
    code, out = run_cli(["trailers", "-q", "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    notes = annotation_lines(out)
    assert code == 1 and notes[0] == "::error title=fidelity trailers::1 finding in 1 message"
    assert notes[1].startswith(f"::error title=fidelity trailers%3A FD801 in commit {sha[:12]}::")
    message = tmp_path / "MSG"
    message.write_text("subject\n\nbody\n\nSigned-off-by:\n")
    code, out = run_cli(
        ["trailers", "-q", "--repo", str(repo.path), "--message-file", str(message)]
    )
    (_, note) = annotation_lines(out)
    assert code == 1 and note.startswith(f"::error file={message},line=")


@pytest.mark.parametrize("quiet", [True, False])
def test_a_case_cannot_print_a_workflow_command_of_its_own(
    make_repo, monkeypatch: pytest.MonkeyPatch, capsys, quiet: bool
) -> None:
    """A file name with a line break in it would start a line of fidelity's output, which
    GitHub reads as a command: names and stderr are printed on one line, escaped."""
    repo: Repo = make_repo("forge")
    name = "r\n::error title=forged::x\x1b[31m.txt"
    write = f"import sys; open(sys.argv[1] + '/' + {name!r}, 'w').write(open('v.txt').read())"
    table = f'[[case]]\nid = "n"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(write)}, "{{out}}"]\noutputs = ["*.txt"]\n'
    base = repo.commit({"cases/matrix.toml": table, "v.txt": "1"})
    repo.commit({"v.txt": "2"})
    monkeypatch.setenv(CI, "true")
    argv = ["run", "--repo", str(repo.path), "--baseline", base]
    assert main(["-q", *argv] if quiet else argv) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "forged" in line and line.startswith("::")] == [
        line for line in annotation_lines(out) if line.startswith("::error file=")
    ]
    assert "\x1b" not in out and "r\\n::error title=forged::x\\x1b[31m.txt" in out


def test_preflight_annotates_each_finding_at_its_line(
    make_repo, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    repo = make_repo("pre")
    repo.commit(
        {"pyproject.toml": '[tool.fidelity.docs]\npaths = ["README.md"]\n', "README.md": "# A\n"}
    )
    repo.write({"README.md": "# A\n\nSee [b](gone.md).\n"})
    repo.git("add", "-A")
    argv = ["-q", "preflight", "--staged", "--repo", str(repo.path)]
    assert main(argv) == 1
    assert annotation_lines(capsys.readouterr().out) == [], "not under GitHub Actions"
    monkeypatch.setenv(CI, "true")
    assert main(argv) == 1
    notes = annotation_lines(capsys.readouterr().out)
    assert notes[0] == "::error title=fidelity preflight::the index: 0 gates ok, 1 failed"
    assert notes[1] == (
        "::error file=README.md,line=3,col=9,title=fidelity preflight%3A docs::"
        "FD401 link target 'gone.md' does not exist (gone.md)"
    )
    repo.write({"README.md": "# A\n\nFine.\n"})
    repo.git("add", "-A")
    assert main(argv) == 0
    assert annotation_lines(capsys.readouterr().out) == [], "a gate that holds says nothing"


def test_the_top_level_help_names_every_command_that_annotates() -> None:
    """The list is written once (main.ANNOTATED); the help said seven of the eight."""
    from fidelity.cli.main import ANNOTATED, build_parser

    epilog = " ".join((build_parser().epilog or "").split())
    assert "preflight also print ::error annotations" in epilog
    assert all(
        f"{name}," in epilog or f"{name} and" in epilog or f"{name} also" in epilog
        for name in ANNOTATED
    )


def test_a_detail_naming_only_a_file_is_annotated_at_it(tmp_path: Path) -> None:
    """A row a merge lost is on no line of its record: annotated at its table's heading in
    the file; a name that is no file under the root, or leads out of it, stays plain."""
    from fidelity.cli.annotate import preflight
    from fidelity.preflight.outcome import GateResult, Report, Status

    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "r.md").write_text("# R\n\n## It's rows\n\n| row |\n|---|\n| a |\n")
    (tmp_path.parent / "outside.md").write_text("# Rows\n")
    details = (
        "records/r.md: merge 43fd627feb03: row 's' under \"It's rows\": parent 2 added this "
        "row, the merge lost it",
        "records/r.md: no table with columns 'row' and 'commit'",
        "../outside.md: x under 'Rows'",
        "commit 43fd627feb03: a message",
    )
    report = Report("commit x", (GateResult("rows", Status.FAILED, "4 problems", details),))
    notes = preflight(report, tmp_path)[1:]
    assert [(n.file, n.line) for n in notes] == [
        ("records/r.md", 3),
        ("records/r.md", None),
        (None, None),
        (None, None),
    ]
    assert notes[0].message.startswith("merge 43fd627feb03: row 's'")


def test_annotations_past_githubs_ten_are_counted_in_the_tenth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GitHub shows 10 error annotations per step: the 10th must count the rest, or the
    verdict's overflow is lost silently. Red when emit stops capping."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    out = io.StringIO()
    notes = [Annotation("fidelity run", "MOVED: verdict")] + [
        Annotation(f"fidelity run: case c{i}", f"moved {i}") for i in range(11)
    ]
    annotate.emit(Console(file=out), None, notes)
    lines = out.getvalue().splitlines()
    assert len(lines) == annotate.MAX == 10
    assert lines[0] == "::error title=fidelity run::MOVED: verdict"
    assert lines[-1] == (
        "::error title=fidelity run::3 more not annotated (GitHub shows 10 per step); "
        "the log lists them"
    )
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    quiet = io.StringIO()
    annotate.emit(Console(file=quiet), None, notes)
    assert quiet.getvalue() == ""
