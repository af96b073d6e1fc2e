"""Every command that draws is run once as a person types it: on a real pseudo-terminal, at
80 and at 200 columns, with colour and with NO_COLOR. Each must exit as documented, print
its verdict line and no traceback. (`fidelity run` crashed on every terminal for four
sessions while every piped test stayed green: rich's live display needs the console itself.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support import Repo, controls_lib
from terminal import Session, on_pty

WAYS = [
    pytest.param(80, False, id="80-columns-no-colour"),
    pytest.param(200, True, id="200-columns-colour"),
]


def check(session: Session, code: int, verdict: str, columns: int, colour: bool) -> None:
    assert session.clean(), session.text
    assert session.code == code, session.text
    assert any(line.startswith(verdict) for line in session.lines()), session.text
    assert session.coloured is colour, session.raw[:2000]
    # prose runs on (the terminal folds it; a path stays whole), tables fit the terminal
    tables = [line for line in session.lines() if "│" in line or "┃" in line]
    assert all(len(line) <= columns for line in tables), tables


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


def test_the_pty_helper_sees_a_crash(tmp_path: Path) -> None:
    """The nearest red: a command that fails on the terminal is seen as failing."""
    session = on_pty(["run", "--baseline", "no-such-rev"], tmp_path)
    assert session.code == 2 and session.clean(), session.text
    assert "not inside a git repository" in session.text or "git" in session.text
