"""The plots' data: files read as the comparator reads them (the plain reader, else pandas'
parser), columns as numbers, rows aligned per key in the baseline's order."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from fidelity.htmlreport import plots
from fidelity.kinds import csvseries
from fidelity.kinds.diffs import OutputDiff

BASE = "id,x,label\n1,1.5,a\n2,2.5,b\n2,9.0,b2\n3,oops,c\n4,,d\n"
CAND = "id,x,label\n4,4.0,d\n3,3.0,c\n2,2.0,b\n9,9.0,z\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_plain_file_and_a_quoted_one_give_the_cells_pandas_gives(tmp_path: Path) -> None:
    plain = write(tmp_path, "plain.csv", BASE)
    quoted = write(tmp_path, "quoted.csv", 'id,x,label\n1,"1,5",a\n2,2.5,"b ""q"""\n')
    for path in (plain, quoted):
        table = csvseries.read(path, ",")
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert table.columns == tuple(frame.columns)
        assert table.cells.tolist() == frame.to_numpy(dtype=object).tolist()


def test_a_header_only_file_and_an_empty_one_have_no_rows(tmp_path: Path) -> None:
    assert csvseries.read(write(tmp_path, "head.csv", "a,b\n"), ",").cells.shape == (0, 2)
    empty = csvseries.read(write(tmp_path, "empty.csv", ""), ",")
    assert empty.columns == () and "a" not in empty


def test_numbers_are_nan_where_a_cell_is_not_one(tmp_path: Path) -> None:
    table = csvseries.read(write(tmp_path, "base.csv", BASE), ",")
    got = csvseries.numbers(table, "x")
    assert got[:3].tolist() == [1.5, 2.5, 9.0]
    assert math.isnan(got[3]) and math.isnan(got[4])  # "oops" and an empty cell
    assert np.isnan(csvseries.numbers(table, "label")).all()
    assert csvseries.numbers(table, "missing") is None


def test_rows_pair_by_key_in_the_baseline_order_first_row_of_a_repeated_key(
    tmp_path: Path,
) -> None:
    base = csvseries.read(write(tmp_path, "base.csv", BASE), ",")
    cand = csvseries.read(write(tmp_path, "cand.csv", CAND), ",")
    b_rows, c_rows = csvseries.pairs(base, cand, ["id"])
    assert base.column("id")[b_rows].tolist() == ["2", "3", "4"]  # 1 and 9 on one side only
    assert cand.column("id")[c_rows].tolist() == ["2", "3", "4"]
    assert base.column("label")[b_rows].tolist()[0] == "b"  # not b2: the first row of id 2
    none = csvseries.pairs(
        base, csvseries.read(write(tmp_path, "other.csv", "id,x\n7,1\n"), ","), ["id"]
    )
    assert [r.tolist() for r in none] == [[], []]


def test_a_moved_numeric_column_is_drawn_and_a_text_column_is_said_not_to_be(
    tmp_path: Path,
) -> None:
    files = (write(tmp_path, "base.csv", BASE), write(tmp_path, "cand.csv", CAND))
    moved = OutputDiff("out.csv", "csv", False, "moved", columns=("x", "label"))
    drawn = {p.column: p for p in plots.plot(moved, files, {"key": ["id"]}, "salt")}
    assert drawn["x"].svg.startswith("<svg") and "per key" in drawn["x"].svg
    assert drawn["label"].svg == "" and drawn["label"].note == "not numeric on both sides: no plot"


def test_the_columns_that_moved_most_are_plotted_not_the_first_in_file_order(
    tmp_path: Path,
) -> None:
    """A simulator's fix moved six columns; lane and start by a little on a few rows, ttft
    and tbt by a lot on every row. The four plotted are the four that moved most."""
    head = "id,lane,start,queue,slot,ttft,tbt\n"
    base = head + "".join(f"{i},0,{i * 10},1,2,{500 + i},{40 + i}\n" for i in range(20))
    cand = head + "".join(
        f"{i},{i % 7 == 0:d},{i * 10 + (i == 3)},1,{2 + (i == 5)},{20 + i},{9 + i}\n"
        for i in range(20)
    )
    files = (write(tmp_path, "base.csv", base), write(tmp_path, "cand.csv", cand))
    order = ("lane", "start", "slot", "ttft", "tbt")
    moved = OutputDiff("m.csv", "csv", False, "moved", columns=order)
    drawn = [p.column for p in plots.plot(moved, files, {"key": ["id"]}, "salt")]
    assert drawn[:2] == ["ttft", "tbt"] and len(drawn) == plots.COLUMNS, drawn
    assert "start" not in drawn  # one row moved by one part in 30: the least of them
    by_position = csvseries.most_moved(
        order, csvseries.read(files[0], ","), csvseries.read(files[1], ","), None
    )
    assert by_position[:2] == ("ttft", "tbt")  # unkeyed rows pair by position
