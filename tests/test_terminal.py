"""Every command that draws is run once as a person types it: on a real pseudo-terminal, at
80 and at 200 columns, with colour and with NO_COLOR. Each must exit as documented, print
its verdict line and no traceback. (`fidelity run` crashed on every terminal for four
sessions while every piped test stayed green: rich's live display needs the console itself.)
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pytest
from support import PROG, PY, Repo, controls_lib, matrix_toml
from terminal import Session, on_pty

ROOT = Path(__file__).resolve().parents[1]
WAYS = [
    pytest.param(80, False, id="80-columns-no-colour"),
    pytest.param(200, True, id="200-columns-colour"),
]


def check(
    session: Session, code: int, verdict: str, columns: int, colour: bool, paints: bool = True
) -> None:
    """`paints`: the command colours its verdict on a terminal (check-docs, ab and preflight
    print plain lines, as linters and hooks do); under NO_COLOR nothing is ever coloured."""
    assert session.clean(), session.text
    assert session.code == code, session.text
    assert any(line.startswith(verdict) for line in session.lines()), session.text
    assert session.coloured is (colour and paints), session.raw[:2000]
    # prose runs on (the terminal folds it; a path stays whole), tables fit the terminal
    tables = [line for line in session.lines() if "│" in line or "┃" in line]
    assert all(len(line) <= columns for line in tables), tables


@dataclass(frozen=True, slots=True)
class Made:
    """One repository with everything the read-only commands read: a run, two shards of it,
    a page with a broken link, recorded A/B samples."""

    repo: Path
    run: Path
    shards: tuple[Path, Path]
    docs: Path
    samples: Path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    from support import fidelity_cli

    top = tmp_path_factory.mktemp("terminal")
    repo = Repo(top / "sim")
    table = matrix_toml({"a": "ok", "b": "ok", "c": "ok"})
    repo.commit({"prog.py": PROG, "value.txt": "one\n", "cases/matrix.toml": table}, "baseline")
    repo.commit({"notes.txt": "a refactor that moves nothing\n"}, "refactor")
    runs = [
        fidelity_cli(
            repo.path, "-q", "run", "--baseline", "HEAD~1", "--out", str(top / name), *more
        )
        for name, more in (("run", []), ("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"]))
    ]
    assert all(done.returncode == 0 for done in runs), [d.stdout + d.stderr for d in runs]
    docs = top / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\nSee [the guide](missing.md).\n")
    samples = top / "paired.csv"
    shutil.copy(ROOT / "cases" / "fixtures" / "ab" / "paired.csv", samples)
    return Made(repo.path, top / "run", (top / "s1", top / "s2"), docs, samples)


# (name, arguments given what was made, working folder, exit code, verdict line's start)
READERS: list[tuple[str, Callable[[Made, Path], list[str]], Callable[[Made], Path], int, str]] = [
    ("compare", lambda m, t: ["compare", str(m.run)], lambda m: m.repo, 0, "HOLDS"),
    (
        "merge",
        lambda m, t: ["merge", *map(str, m.shards), "--out", str(t / "merged")],
        lambda m: m.repo,
        0,
        "HOLDS",
    ),
    (
        "report",
        lambda m, t: ["report", str(m.run), "--html", str(t / "page.html")],
        lambda m: m.repo,
        0,
        "HOLDS",
    ),
    (
        "check-docs",
        lambda m, t: ["check-docs", "--root", ".", "page.md"],
        lambda m: m.docs,
        1,
        "check-docs: 1 finding in 1 of 1 file",
    ),
    ("preflight", lambda m, t: ["preflight", "--all"], lambda m: m.repo, 0, "1 gate ok"),
    ("ab", lambda m, t: ["ab", "--from", str(m.samples)], lambda m: m.repo, 0, "established: B"),
]


@pytest.mark.parametrize(("columns", "colour"), WAYS)
@pytest.mark.parametrize(
    ("args", "where", "code", "verdict"),
    [pytest.param(a, w, c, v, id=name) for name, a, w, c, v in READERS],
)
def test_a_command_on_a_terminal(
    made: Made,
    tmp_path: Path,
    args: Callable[[Made, Path], list[str]],
    where: Callable[[Made], Path],
    code: int,
    verdict: str,
    columns: int,
    colour: bool,
) -> None:
    session = on_pty(args(made, tmp_path), where(made), columns=columns, colour=colour)
    plain = ("check-docs", "ab", "preflight")
    check(session, code, verdict, columns, colour, paints=args(made, tmp_path)[0] not in plain)


@pytest.mark.parametrize(("columns", "colour"), WAYS)
def test_run_on_a_terminal(sim_repo: Repo, columns: int, colour: bool) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"notes.txt": "a refactor that moves nothing\n"}, "refactor")
    session = on_pty(
        ["run", "--baseline", base, "--candidate", "HEAD"],
        sim_repo.path,
        columns=columns,
        colour=colour,
    )
    check(session, 0, "HOLDS", columns, colour)


@pytest.mark.parametrize(("columns", "colour"), WAYS)
def test_controls_run_on_a_terminal(
    make_repo: Callable[[str], Repo], columns: int, colour: bool
) -> None:
    lib = make_repo("lib")
    controls_lib(lib)
    session = on_pty(
        ["controls", "run", "--only", "tax-rate", "--jobs", "1"],
        lib.path,
        columns=columns,
        colour=colour,
    )
    check(session, 0, "HOLDS", columns, colour)
    # the no-op's progress said residue-held where its summary says survived
    assert "residue-held" not in session.text and "no-op control: survived" in session.text


@pytest.mark.parametrize(("columns", "colour"), WAYS)
def test_demo_on_a_terminal(tmp_path: Path, columns: int, colour: bool) -> None:
    session = on_pty(["demo", "--dir", "built"], tmp_path, columns=columns, colour=colour)
    check(session, 0, "ok   every control met its expectation", columns, colour)


def test_the_pty_helper_sees_a_failure(tmp_path: Path) -> None:
    """The nearest red: a command that fails on the terminal is seen failing, and a
    traceback is seen as one."""
    session = on_pty(["run", "--baseline", "no-such-rev"], tmp_path)
    assert session.code == 2 and session.clean(), session.text
    crashed = on_pty(["-c", "raise SystemExit(3)"], tmp_path)
    assert crashed.code == 2  # argparse: -c is no option of fidelity's
    assert not Session(3, "", "Traceback (most recent call last):\n").clean()


def test_the_pty_helper_works_past_1024_descriptors(tmp_path: Path) -> None:
    """A long test session holds many descriptors; select() refuses those past 1,024 (the
    full suite hit it), poll() does not."""
    import os

    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        session = on_pty(["--version"], tmp_path)
    finally:
        for fd in held:
            os.close(fd)
    assert session.code == 0 and session.text.startswith("fidelity "), session.text


@pytest.mark.parametrize("command", ["run", "controls"])
def test_json_on_standard_output_of_a_terminal_is_json_alone(
    make_repo: Callable[[str], Repo], tmp_path: Path, command: str
) -> None:
    """`--json -` keeps standard output to the JSON: on a terminal, the progress bar was
    drawn there first, so what a wrapper (`script`, `unbuffer`) read was not JSON."""
    if command == "run":
        repo = make_repo("json")
        repo.commit({"prog.py": PROG, "cases/matrix.toml": matrix_toml({"a": "ok"})})
        argv = ["run", "--baseline", "HEAD"]
    else:
        repo = make_repo("lib")
        controls_lib(repo)
        argv = ["controls", "run", "--only", "tax-rate", "--jobs", "1"]
    err = tmp_path / "stderr.txt"
    line = " ".join(shlex.quote(a) for a in [PY, "-m", "fidelity", *argv, "--json", "-"])
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f"{line} 2> {shlex.quote(str(err))}"],
        cwd=str(repo.path),
        env={**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"},
        dimensions=(40, 100),
        encoding="utf-8",
        timeout=300,
        use_poll=True,  # select() refuses descriptors past 1,024, which a long session reaches
    )
    raw = child.read()
    child.close()
    report = json.loads(raw.replace("\r\n", "\n"))  # nothing but the JSON
    assert report["exit_code"] == child.exitstatus, err.read_text()
