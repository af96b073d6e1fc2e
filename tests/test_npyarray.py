"""Kind `npy`: NumPy arrays judged element by element, from two arrays to a real run's page.

Shape and dtype must match; numbers are judged with rtol/atol, NaN positions must match; an
explanation counts the values out of tolerance and names the largest differences by index.
Blocks are small here (`CHUNK` patched), so that the walk over blocks, in C order over a
Fortran-ordered file too, is what is tested. The end-to-end case runs `fidelity run` on a
real repository whose case writes .npy files, and reads the HTML page it wrote.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import PY, Repo, run_cli, toml_str

from fidelity.kinds import npyarray
from fidelity.kinds.registry import explain
from fidelity.matrix.verdict import spread
from fidelity.matrix.verdict.words import explanation

SPEC = {"kind": "npy", "rtol": 1e-6}


def npy(array: Any) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(npyarray, "CHUNK", 5)
    return 5


def grid() -> Any:
    return np.arange(24, dtype=np.float64).reshape(4, 6) + 1.0


def test_the_same_values_in_other_bytes_differ_in_no_value() -> None:
    base = grid()
    found = explain("a.npy", npy(base), npy(np.asfortranarray(base)), SPEC)
    assert found.within_tolerance and found.values_out == found.values_within == 0
    assert found.summary == "no value differs; only the memory order changed (C -> Fortran)"
    zeros = explain("z.npy", npy(np.zeros(3)), npy(-np.zeros(3)), SPEC)
    assert zeros.within_tolerance and "the sign of a zero" in zeros.summary


def test_a_value_out_of_tolerance_moves_and_is_named_by_its_index(small_blocks: int) -> None:
    base = grid()
    cand = base.copy()
    cand[2, 3] += 0.5  # out of tolerance: the largest
    cand[3, 5] += 0.25  # out of tolerance, in another block
    cand[0, 1] *= 1 + 1e-9  # within tolerance
    found = explain("a.npy", npy(base), npy(cand), SPEC)
    assert not found.within_tolerance
    assert (found.values_out, found.values_within, found.keys_total) == (2, 1, 2)
    assert found.keys == ("[2, 3]", "[3, 5]")
    assert [d.where for d in found.largest] == ["[2, 3]", "[3, 5]", "[0, 1]"]
    assert explanation(found) == (
        "a.npy: 2 values out of tolerance; 1 differ within tolerance; "
        "[2, 3]: 16.0 -> 16.5, [3, 5]: 24.0 -> 24.25"
    )


def test_within_tolerance_is_within_tolerance() -> None:
    base = grid()
    found = explain("a.npy", npy(base), npy(base * (1 + 1e-7)), SPEC)
    assert found.within_tolerance and found.values_within == base.size
    assert found.summary == f"{base.size} differ within tolerance"
    moved = explain("a.npy", npy(base), npy(base * (1 + 1e-7)), {"kind": "npy"})
    assert not moved.within_tolerance and moved.values_out == base.size  # no tolerance


@pytest.mark.parametrize(
    ("cand", "said"),
    [
        (grid().reshape(6, 4), "shape changed: values not compared; shape: (4, 6) -> (6, 4)"),
        (
            grid().astype(np.float32),
            "dtype changed: values not compared; dtype: float64 -> float32",
        ),
        (
            grid()[:2].astype(np.int64),
            "shape and dtype changed: values not compared; shape: (4, 6) -> (2, 6), "
            "dtype: float64 -> int64",
        ),
    ],
)
def test_a_change_of_shape_or_dtype_moves_with_its_word(cand: Any, said: str) -> None:
    found = explain("a.npy", npy(grid()), npy(cand), SPEC)
    assert not found.within_tolerance
    assert explanation(found) == f"a.npy: {said}"


def test_nan_positions_must_match_and_an_infinity_equals_only_itself() -> None:
    base = np.array([np.nan, 1.0, np.inf, 2.0, -np.inf])
    same = base.copy()
    same[1] = 1.0 + 1e-9  # the only difference, within tolerance
    found = explain("a.npy", npy(base), npy(same), SPEC)
    assert found.within_tolerance and found.values_within == 1  # NaN against NaN: equal
    cand = np.array([1.0, np.nan, -np.inf, 2.0, -np.inf])
    moved = explain("a.npy", npy(base), npy(cand), {"kind": "npy", "atol": 1e9})
    assert moved.keys == ("[0]", "[1]", "[2]") and moved.values_out == 3  # no atol covers them
    assert all(d.abs_diff is not None and not d.within for d in moved.largest)


def test_values_without_a_tolerance_are_changed_and_first_met_shown(small_blocks: int) -> None:
    words = np.array(["a", "b", "c", "d", "e", "f", "g"])
    cand = words.copy()
    cand[[1, 6]] = ["B", "G"]
    found = explain("w.npy", npy(words), npy(cand), SPEC)
    assert (found.values_out, found.values_changed) == (2, 2)
    assert explanation(found) == 'w.npy: 2 values changed; [1]: "b" -> "B", [6]: "g" -> "G"'
    flags = explain("f.npy", npy(np.array([True, False])), npy(np.array([True, True])), SPEC)
    assert flags.summary == "1 values changed"


def test_a_fortran_ordered_file_is_walked_in_c_order(tmp_path: Path, small_blocks: int) -> None:
    base = grid()
    cand = base.copy()
    cand[1, 4] = 0.0
    cand[3, 0] = -1.0
    np.save(tmp_path / "b.npy", base)
    np.save(tmp_path / "c.npy", np.asfortranarray(cand))
    found = explain("a.npy", tmp_path / "b.npy", tmp_path / "c.npy", SPEC)
    assert found.keys == ("[1, 4]", "[3, 0]")
    assert [(d.where, d.base, d.cand) for d in found.largest] == [
        ("[3, 0]", "19.0", "-1.0"),
        ("[1, 4]", "11.0", "0.0"),
    ]


def test_top_keeps_the_largest_over_every_block(small_blocks: int) -> None:
    base = np.zeros(40)
    cand = base.copy()
    cand[[3, 17, 29, 38]] = [1.0, 4.0, 3.0, 2.0]
    found = explain("a.npy", npy(base), npy(cand), {**SPEC, "top": 2})
    assert [d.where for d in found.largest] == ["[17]", "[29]"]
    assert found.keys_total == 4


def test_what_is_no_plain_array_is_refused_never_unpickled() -> None:
    objects = explain("o.npy", npy(np.array([1, None], dtype=object)), npy(grid()), SPEC)
    assert objects.summary.startswith("bytes differ and not parseable as npy: Object arrays")
    text = explain("t.npy", npy(grid()), b"hello", SPEC)
    assert text.summary == (
        "bytes differ and not parseable as npy: not a .npy file: it does not start with \\x93NUMPY"
    )
    cut = explain("c.npy", npy(grid()), npy(grid())[:-8], SPEC)
    assert cut.summary.startswith("bytes differ and not parseable as npy:")


def test_a_spread_judges_the_array_as_one_part() -> None:
    base = grid()
    cand = base.copy()
    cand[0, 0] += 3.0
    cand[1, 1] += 1.0
    assert spread.reach(explain("a.npy", npy(base), npy(cand), SPEC)) == {"values": 3.0}
    assert spread.reach(explain("a.npy", npy(base), npy(base * (1 + 1e-9)), SPEC)) == {}
    shape = spread.reach(explain("a.npy", npy(base), npy(base[:1]), SPEC))
    assert shape == {"values": math.inf}


PROG = """
import pathlib, sys
import numpy as np
out, mode = pathlib.Path(sys.argv[1]), sys.argv[2]
cand = pathlib.Path("value.txt").read_text().strip() == "cand"
grid = np.linspace(0.0, 1.0, 600).reshape(20, 30)
if mode == "moves" and cand:
    grid[7, 11] += 0.5
    grid[19] *= 1.001
np.save(out / "grid.npy", grid)
"""


def _table() -> str:
    lines = []
    for case in ("steady", "moves"):
        lines += [
            "[[case]]",
            f"id = {toml_str(case)}",
            f'argv = [{toml_str(PY)}, "prog.py", "{{out}}", {toml_str(case)}]',
            'outputs = ["grid.npy"]',
            "timeout_s = 60",
            '[case.compare."grid.npy"]',
            'kind = "npy"',
            "rtol = 1e-6",
            "",
        ]
    return "\n".join(lines)


def test_a_run_of_cases_writing_arrays_says_what_moved_and_plots_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"cases/matrix.toml": _table(), "prog.py": PROG, "value.txt": "base"})
    cand = repo.commit({"value.txt": "cand"})
    out, page = tmp_path / "run", tmp_path / "page.html"
    argv = ["run", "--baseline", base, "--candidate", cand, "--repo", str(repo.path)]
    code, said = run_cli([*argv, "--out", str(out), "--html", str(page)])
    assert code == 1, said
    assert "MOVED: 1 moved, 0 failed of 2" in said
    flat = " ".join(said.split())
    assert "grid.npy: 31 values out of tolerance; [7, 11]:" in flat, said
    html = page.read_text()
    figure = html[html.index('<figure class="plot" data-column="values">') :]
    figure = figure[: figure.index("</figure>")]
    assert "<h4>grid.npy: values</h4>" in figure and "<svg" in figure
    assert "values: candidate - baseline, per element" in figure
    assert "delta (31 of 600 elements differ)" in figure


def test_a_header_declaring_more_than_the_file_holds_is_no_array(tmp_path: Path) -> None:
    """Given as bytes (`compare` reads an output once), numpy allocates what a header
    declares before reading: 37 GiB for a 192-byte file, a MemoryError that ended the whole
    command. Both roads now refuse it alike, as a finding (red before: MemoryError)."""
    head = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": (5_000_000_000,)}
    np.lib.format.write_array_header_1_0(head, header)
    truncated = head.getvalue() + bytes(64)
    whole = io.BytesIO()
    np.save(whole, np.arange(4.0))
    (tmp_path / "b.npy").write_bytes(whole.getvalue())
    (tmp_path / "c.npy").write_bytes(truncated)
    spec = {"kind": "npy", "rtol": 1e-9}
    by_path = explain("x.npy", tmp_path / "b.npy", tmp_path / "c.npy", spec)
    by_bytes = explain("x.npy", whole.getvalue(), truncated, spec)
    assert (
        by_path.summary
        == by_bytes.summary
        == (
            "bytes differ and not parseable as npy: its header declares 40,000,000,000 bytes of "
            "data, the file holds 64"
        )
    )
