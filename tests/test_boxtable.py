"""Off a terminal a report's table is drawn without rich's table (`boxtable`), to the same
characters rich prints: rich itself is the oracle, on generated tables of printable ASCII,
through `report.render` with a console made as `console.make` makes one off a terminal.
Tables it does not draw (other characters, a terminal, colour forced) are rich's."""

from __future__ import annotations

import io
from typing import IO, Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fidelity.cli import boxtable, report
from fidelity.cli.console import WIDE, Trimmed

ASCII = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)


class _Latin1(io.StringIO):
    encoding = "latin-1"  # a Windows console piped, say: rich draws an ASCII box


def _render(
    title: str, columns: list[str], rows: list[list[str]], summary: str, latin1: bool = False
) -> str:
    out = _Latin1() if latin1 else io.StringIO()
    console = Console(
        file=cast("IO[str]", Trimmed(out)), highlight=False, soft_wrap=True, width=WIDE
    )
    report.render(console, title, report.Listing(columns, rows), summary)
    return out.getvalue()


def _by_rich(
    title: str, columns: list[str], rows: list[list[str]], summary: str, latin1: bool = False
) -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(boxtable, "drawn", lambda *args: None)
        return _render(title, columns, rows, summary, latin1)


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[str], list[list[str]], str]:
    width = draw(st.integers(1, 4))
    columns = draw(st.lists(ASCII, min_size=width, max_size=width))
    rows = draw(st.lists(st.lists(ASCII, min_size=width, max_size=width), max_size=4))
    title = draw(ASCII.filter(bool))
    return title, columns, rows, draw(st.sampled_from(["3 cases", "1 case: a", "", "é ok"]))


@given(tables())
def test_a_plain_table_is_drawn_as_rich_draws_it(table: tuple[Any, ...]) -> None:
    assert _render(*table) == _by_rich(*table)


def test_the_oracle_catches_a_column_measured_without_its_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Red case: widths taken from the rows alone; the comparison above fails."""
    table = ("t", ["command"], [["ls"]], "1 case")
    assert _render(*table) == _by_rich(*table)
    monkeypatch.setattr(boxtable, "max", lambda lengths: list(lengths)[-1], raising=False)
    assert _render(*table) != _by_rich(*table)


@pytest.mark.parametrize(
    "cell", ["naïve", "日本", "a\tb", "two\nlines", "\x1b[31mred", "e\u0301", "\u200b"]
)
def test_any_other_text_is_left_to_rich(cell: str) -> None:
    assert boxtable.drawn("t", ["c"], [[cell]], WIDE) is None
    assert _render("t", ["c"], [[cell]], "1 case") == _by_rich("t", ["c"], [[cell]], "1 case")


def test_a_terminal_or_forced_colour_is_left_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(boxtable, "drawn", lambda *args: calls.append(args))
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = io.StringIO()
    console = Console(
        file=cast("IO[str]", Trimmed(out)), highlight=False, soft_wrap=True, width=WIDE
    )
    report.render(console, "t", report.Listing(["c"], [["x"]]), "1 case")
    assert not calls and "\x1b[" in out.getvalue()  # rich drew it, in colour
    monkeypatch.delenv("FORCE_COLOR")
    plain = Console(file=io.StringIO(), highlight=False, width=80)  # not made by console.make
    report.render(plain, "t", report.Listing(["c"], [["x"]]), "1 case")
    assert not calls


def test_a_table_wider_than_the_console_or_a_stream_not_utf8_is_left_to_rich() -> None:
    """Rich folds a row wider than its console, and draws an ASCII box where the stream
    cannot encode the box characters: those are rich's to draw."""
    wide = ("t", ["c"], [["x" * (WIDE + 10)]], "1 case")
    assert boxtable.drawn(*wide[:3], WIDE) is None
    assert _render(*wide) == _by_rich(*wide)
    plain = ("t", ["c"], [["x"]], "1 case")
    by_rich = _by_rich(*plain, latin1=True)
    assert _render(*plain, latin1=True) == by_rich and "+--" in by_rich and "┏" not in by_rich
