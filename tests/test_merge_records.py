"""`fidelity merge-records` as git's merge driver: real `git merge`s of two branches that add,
change, delete and reorder rows of a keyed record table, and a Hypothesis property over
such edits (no row lost, no key duplicated, each one-sided change taken)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import Repo

from checkers.tables import parse_tables
from fidelity.recordmerge.driver import git_line

PYPROJECT = '[[tool.fidelity.records]]\npath = "records/bench.md"\nkey = "row"\n'
RECORD = "records/bench.md"
DRIVER = git_line(sys.executable)


def page(rows: list[tuple[str, str]], intro: str = "Figures.", outro: str = "Notes.") -> str:
    body = "".join(f"| {k} | {v} | abc1234 |\n" for k, v in rows)
    return f"# Bench\n\n{intro}\n\n| row | figure | commit |\n|---|---|---|\n{body}\n{outro}\n"


def merged(
    tmp: Path, base: str, ours: str, theirs: str, driver: bool | str = True, attrs: str = ""
) -> tuple[int, str]:
    """Commit base, then ours on main and theirs on a branch; `git merge` the branch, with
    the driver line given (or this fidelity's, or none)."""
    repo = Repo(tmp / "repo")
    attributes = f"{RECORD} merge=fidelity-records{attrs}\n"
    repo.commit({"pyproject.toml": PYPROJECT, ".gitattributes": attributes, RECORD: base}, "base")
    if driver:
        line = driver if isinstance(driver, str) else DRIVER
        repo.git("config", "merge.fidelity-records.driver", line)
    repo.git("checkout", "-q", "-b", "theirs")
    repo.commit({RECORD: theirs}, "theirs")
    repo.git("checkout", "-q", "main")
    repo.commit({RECORD: ours}, "ours")
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-edit", "theirs"],
        cwd=repo.path,
        env=repo.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, (repo.path / RECORD).read_text()


def rows_of(text: str) -> list[tuple[str, str]]:
    (table,) = [t for t in parse_tables(text) if t.column("row") is not None]
    return [(r.texts[0], r.texts[1]) for r in table.rows]


BASE = [("a", "1"), ("b", "2"), ("c", "3")]


def test_rows_added_on_both_sides_are_both_kept(tmp_path: Path) -> None:
    ours, theirs = page([*BASE, ("d", "4")]), page([*BASE, ("e", "5")])
    assert merged(tmp_path / "git", page(BASE), ours, theirs, driver=False)[0] != 0
    code, text = merged(tmp_path / "driver", page(BASE), ours, theirs)
    assert code == 0, text
    assert rows_of(text) == [*BASE, ("d", "4"), ("e", "5")]


def test_a_driver_line_whose_fidelity_is_gone_leaves_conflict_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line `--print-driver` prints falls back to git's own merge, markers and all, when
    its interpreter is gone or has no fidelity; the bare `fidelity merge-records` line did
    not: git reported a conflict and left ours unmarked, so one `git add` lost theirs."""
    monkeypatch.delenv("PYTHONPATH", raising=False)  # or the bare venv finds a fidelity there
    ours, theirs = page([*BASE, ("d", "4")]), page([*BASE, ("e", "5")])
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    for python in (str(bare / "bin" / "python"), "/nonexistent/python"):
        code, text = merged(
            tmp_path / python.replace("/", "_"), page(BASE), ours, theirs, git_line(python)
        )
        assert code != 0
        assert "<<<<<<< ours" in text and "| d | 4 |" in text and "| e | 5 |" in text, text
    code, text = merged(
        tmp_path / "wide",
        page(BASE),
        ours,
        theirs,
        git_line("/nonexistent/python"),
        " conflict-marker-size=12",
    )
    assert code != 0 and "<" * 12 + " ours" in text, "git's %L reaches the fallback"
    old = "/nonexistent/python -m fidelity merge-records %O %A %B %P"
    code, text = merged(tmp_path / "old", page(BASE), ours, theirs, old)
    assert code != 0 and "<<<<<<<" not in text and "| e | 5 |" not in text, "the old failure"


def test_a_clean_git_merge_can_keep_two_rows_with_one_key_the_driver_cannot(
    tmp_path: Path,
) -> None:
    """Both sides add key g, ours at the end and theirs at the top: git's text merge is
    clean and keeps two rows keyed g; by key, that is one key added differently: a
    conflict, and the rest of the table merged."""
    base = [(k, str(i)) for i, k in enumerate("abcdef")]
    ours = page([*base, ("g", "7")])
    theirs = page([("g", "8"), base[0], ("b", "11"), *base[2:]])
    code, text = merged(tmp_path / "git", page(base), ours, theirs, driver=False)
    assert code == 0 and Counter(k for k, _ in rows_of(text))["g"] == 2, "git's own merge"
    code, text = merged(tmp_path / "driver", page(base), ours, theirs)
    assert code != 0
    assert "| g | 7 | abc1234 |\n=======\n| g | 8 | abc1234 |" in text
    assert "| b | 11 | abc1234 |" in text and text.count("| b |") == 1


def test_a_row_moved_on_one_side_and_changed_on_the_other_stays_one_row(tmp_path: Path) -> None:
    ours = page([("a", "1"), ("b", "22"), ("c", "3")])
    theirs = page([("a", "1"), ("c", "3"), ("b", "2")])
    code, text = merged(tmp_path, page(BASE), ours, theirs)
    assert code == 0, text
    assert rows_of(text) == [("a", "1"), ("c", "3"), ("b", "22")]


def test_one_sided_changes_deletes_and_text_outside_the_table(tmp_path: Path) -> None:
    ours = page([("a", "1"), ("b", "2")], intro="Figures, re-measured.")  # deletes c
    theirs = page([("a", "11"), ("b", "2"), ("c", "3")], outro="More notes.")  # changes a
    code, text = merged(tmp_path, page(BASE), ours, theirs)
    assert code == 0, text
    assert rows_of(text) == [("a", "11"), ("b", "2")]
    assert "Figures, re-measured." in text and "More notes." in text


def test_a_key_changed_differently_on_both_sides_is_a_conflict_at_that_row(tmp_path: Path) -> None:
    ours = page([("a", "10"), ("b", "2"), ("c", "3"), ("d", "4")])
    theirs = page([("a", "99"), ("b", "2"), ("c", "3"), ("e", "5")])
    code, text = merged(tmp_path, page(BASE), ours, theirs)
    assert code != 0
    block = "<<<<<<< ours (records/bench.md)\n| a | 10 | abc1234 |\n=======\n| a | 99 | abc1234 |\n>>>>>>> theirs (records/bench.md)\n"
    assert block in text
    assert "| d | 4 |" in text and "| e | 5 |" in text, "the clean rows are merged all the same"


def test_changed_on_one_side_and_deleted_on_the_other_is_a_conflict(tmp_path: Path) -> None:
    ours = page([("a", "10"), ("b", "2"), ("c", "3")])
    theirs = page([("b", "2"), ("c", "3")])
    code, text = merged(tmp_path, page(BASE), ours, theirs)
    assert code != 0 and "| a | 10 | abc1234 |\n=======\n>>>>>>>" in text


def test_a_header_changed_while_both_sides_edit_rows_is_a_conflict(tmp_path: Path) -> None:
    ours = page([*BASE, ("d", "4")])
    theirs = page(BASE).replace("| row | figure | commit |", "| row | figure | commit | note |")
    theirs = theirs.replace("|---|---|---|", "|---|---|---|---|").replace(
        "abc1234 |", "abc1234 | x |"
    )
    code, text = merged(tmp_path, page(BASE), ours, theirs)
    assert code != 0 and "<<<<<<<" in text


def _driver(
    repo: Path, tmp: Path, texts: dict[str, bytes], path: str = RECORD
) -> subprocess.CompletedProcess[str]:
    """`fidelity merge-records` on base, ours and theirs as git hands them to the driver."""
    for name, data in texts.items():
        (tmp / name).write_bytes(data)
    argv = [sys.executable, "-m", "fidelity", "merge-records"]
    argv += [str(tmp / n) for n in ("base", "ours", "theirs")] + [path]
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=60)


def test_a_record_with_no_entry_is_git_merged(tmp_path: Path) -> None:
    code, text = merged(tmp_path, page(BASE), page([*BASE, ("d", "4")]), page(BASE, outro="x"))
    assert code == 0  # configured: merged by key; this shows the same file with no entry:
    repo = Repo(tmp_path / "other")
    repo.commit({"pyproject.toml": "", "x.md": page(BASE)}, "x")
    texts = {"base": BASE, "ours": [*BASE, ("d", "4")], "theirs": [*BASE, ("e", "5")]}
    done = _driver(repo.path, tmp_path, {k: page(v).encode() for k, v in texts.items()}, "x.md")
    assert done.returncode == 1, "git's own merge conflicts on two rows appended at one place"
    assert "<<<<<<<" in (tmp_path / "ours").read_text()


def test_a_key_git_doubles_in_a_table_not_merged_by_key_is_a_conflict(tmp_path: Path) -> None:
    """A row with an empty key keeps the table from being merged by key; git's own merge is
    then clean though both sides added row g, at opposite ends: two g rows. The driver
    says conflict (red with the fallback's own check removed)."""
    base = [("", "0"), *BASE]
    ours, theirs = page([*base, ("g", "7")]), page([("g", "7"), *base])
    code, text = merged(tmp_path / "git", page(base), ours, theirs, driver=False)
    assert code == 0 and text.count("| g | 7 |") == 2, "git alone doubles the row"
    code, text = merged(tmp_path / "driver", page(base), ours, theirs)
    assert code != 0 and text.count("| g | 7 |") == 2, text


def test_a_table_each_side_moved_elsewhere_leaves_conflict_markers(tmp_path: Path) -> None:
    """Ours moves the table below the notes, theirs above the intro, each changing a row:
    git's merge of the rest cannot place the table once, so the whole file is git's merge,
    markers and both sides' rows kept (red with that check removed: ours left unmarked)."""

    def moved(rows: list[tuple[str, str]], where: str) -> str:
        table = page(rows, intro="", outro="").split("\n\n", 2)[2].rstrip("\n") + "\n"
        if where == "below":
            return f"# Bench\n\nFigures.\n\nNotes.\n\n{table}"
        return f"# Bench\n\n{table}\nFigures.\n\nNotes.\n"

    base = page(BASE, outro="Notes.")
    ours = moved([("a", "9"), *BASE[1:]], "below")
    theirs = moved([*BASE[:2], ("c", "8")], "above")
    code, text = merged(tmp_path, base, ours, theirs)
    assert code != 0 and "<<<<<<<" in text, text
    assert "| a | 9 |" in text and "| c | 8 |" in text, text


def test_a_merged_table_that_fails_the_self_check_falls_back_to_the_whole_file() -> None:
    """The self-check: if the text merge around the tables put a stray row against one, the
    merged table no longer holds its keys once each, and the whole file is merged again
    as text (red with the check always passing: the stray row is kept)."""
    from fidelity.recordmerge import keyed

    base, ours, theirs = page(BASE), page([*BASE, ("d", "4")]), page(BASE, outro="Theirs.")
    calls: list[tuple[str, ...]] = []

    def text_merge(b: str, o: str, t: str) -> tuple[str, int]:
        calls.append((b, o, t))
        if len(calls) > 1:
            return "whole file, merged as text\n", 0
        mark = next(line for line in o.splitlines() if "fidelity merge-records" in line)
        return o.replace(mark, mark + "\n| a | 2 | abc1234 |"), 0  # a stray row

    done = keyed.merge(base, ours, theirs, ["row"], text_merge)
    assert calls[1:] == [(base, ours, theirs)] and done.text == "whole file, merged as text\n"


def test_a_record_that_is_not_utf8_is_a_conflict_even_where_git_merges_it(tmp_path: Path) -> None:
    """A driver that cannot merge by key says so with a conflict, though git's own merge of
    the file is clean: a clean exit would let the merge through unread (red with the
    driver passing on git's count)."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"pyproject.toml": PYPROJECT}, "the record's entry")
    latin = {
        "base": page(BASE, intro="Caf\u00e9."),
        "ours": page(BASE, intro="Caf\u00e9, ours."),
        "theirs": page(BASE, intro="Caf\u00e9.", outro="Theirs."),
    }
    done = _driver(repo.path, tmp_path, {k: v.encode("latin-1") for k, v in latin.items()})
    assert done.returncode != 0, done.stderr
    held = (tmp_path / "ours").read_bytes().decode("latin-1")
    assert "Caf\u00e9, ours." in held and "Theirs." in held and "<<<<<<<" not in held
    assert "not merged by key" in done.stderr, done.stderr


# --- the property: random row edits on two branches, merged by a real `git merge` ---

KEYS = [f"k{i}" for i in range(8)]


def split_conflicts(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(key, figure) of the table rows outside conflict blocks; keys of those inside."""
    outside, inside, depth = [], [], False
    for line in text.splitlines():
        if line.startswith(("<<<<<<<", ">>>>>>>")):
            depth = line.startswith("<")
        elif line.startswith("| ") and not line.startswith("| row "):
            key, figure = (cell.strip() for cell in line.split("|")[1:3])
            if depth:
                inside.append(key)
            else:
                outside.append((key, figure))
    return outside, inside


@st.composite
def side(draw: st.DrawFn, base: list[str], name: str) -> dict[str, object]:
    deleted = draw(st.sets(st.sampled_from(base))) if base else set()
    kept = [k for k in base if k not in deleted]
    changed = draw(st.sets(st.sampled_from(kept))) if kept else set()
    added = draw(st.lists(st.sampled_from(["n1", "n2", f"{name}-only"]), unique=True, max_size=2))
    order = draw(st.permutations(kept + added))
    return {"deleted": deleted, "changed": changed, "added": added, "order": list(order)}


def apply(base: dict[str, str], edits: dict[str, object], name: str) -> dict[str, str]:
    rows = {k: base[k] for k in base if k not in edits["deleted"]}  # type: ignore[operator]
    rows.update({k: f"{base[k]}-{name}" for k in edits["changed"]})  # type: ignore[attr-defined]
    rows.update({k: f"new-{name}" if k == f"{name}-only" else f"new-{k}" for k in edits["added"]})  # type: ignore[attr-defined]
    return {k: rows[k] for k in edits["order"]}  # type: ignore[attr-defined]


def expected(
    base: dict[str, str], ours: dict[str, str], theirs: dict[str, str]
) -> tuple[dict[str, str], set[str]]:
    """What a by-key merge must give (rows) and which keys must conflict."""
    rows, conflicts = {}, set()
    for k in {*base, *ours, *theirs}:
        o, a, b = base.get(k), ours.get(k), theirs.get(k)
        value = a if a == b else b if a == o else a if b == o else "<conflict>"
        if value == "<conflict>":
            conflicts.add(k)
        elif value is not None:
            rows[k] = value
    return rows, conflicts


@settings(max_examples=15, deadline=None)  # each example is a real repository and git merge
@given(data=st.data(), size=st.integers(0, 6))
def test_merging_row_edits_loses_no_row_and_duplicates_no_key(
    data: st.DataObject, size: int
) -> None:
    base = {k: f"v{i}" for i, k in enumerate(KEYS[:size])}
    ours = apply(base, data.draw(side(list(base), "ours")), "ours")
    theirs = apply(base, data.draw(side(list(base), "theirs")), "theirs")
    rows, conflicts = expected(base, ours, theirs)
    with tempfile.TemporaryDirectory() as tmp:
        code, text = merged(
            Path(tmp),
            page(list(base.items())),
            page(list(ours.items())),
            page(list(theirs.items())),
        )
    if conflicts:
        assert code != 0
        outside, inside = split_conflicts(text)
        assert sorted(outside) == sorted(rows.items()), "every clean row once, as merged"
        assert set(inside) == conflicts, "only the conflicting keys are marked"
        return
    assert code == 0, text
    got = rows_of(text)
    keys = [k for k, _ in got]
    assert len(keys) == len(set(keys)), "no key duplicated"
    assert dict(got) == rows, "no row lost, each one-sided change taken, nothing else"


def test_this_repository_sends_its_records_to_the_driver() -> None:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        ["git", "check-attr", "merge", "--", "records/benchmarks.md", "README.md"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "records/benchmarks.md: merge: fidelity-records",
        "README.md: merge: unspecified",
    ]


@pytest.mark.long
def test_a_record_of_100000_rows_merges_within_the_git_timeout(tmp_path: Path) -> None:
    """A real `git merge` of 100,000 rows with 10,000 added on each side: over 300 s before
    (a quadratic row order, and four full Markdown parses), about 10 CPU-s now; `merged`
    gives git 120 s. The default run keeps the pure core's 100,000-row test
    (tests/test_recordmerge_keyed.py)."""
    base = [(f"r{i}", str(i)) for i in range(100_000)]
    ours = [*base, *((f"o{i}", "x") for i in range(10_000))]
    theirs = [*base, *((f"t{i}", "y") for i in range(10_000))]
    code, text = merged(tmp_path, page(base), page(ours), page(theirs))
    assert code == 0
    rows = rows_of(text)
    assert len(rows) == len({k for k, _ in rows}) == 120_000


@pytest.mark.parametrize(
    ("texts", "key", "why"),
    [
        (("", [("b", "2")], [("c", "3")]), None, "no table keyed by 'row' is in base"),
        ((BASE, [*BASE, ("d", "4")], [*BASE, ("e", "5")]), "nosuch", "no table keyed by 'nosuch'"),
    ],
)
def test_a_conflict_git_made_in_place_of_a_keyed_merge_says_why(
    tmp_path: Path, texts: tuple, key: str | None, why: str
) -> None:
    """A file both sides added, or a key column no table has: the driver handed the file to
    git's merge and its conflict said nothing of why the rows were not merged by key."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"pyproject.toml": PYPROJECT}, "config")
    given = {
        n: (page(rows) if rows != "" else "").encode()
        for n, rows in zip(("base", "ours", "theirs"), texts, strict=True)
    }
    for name, data in given.items():
        (tmp_path / name).write_bytes(data)
    argv = [sys.executable, "-m", "fidelity", "merge-records"]
    argv += [str(tmp_path / n) for n in ("base", "ours", "theirs")] + [RECORD]
    argv += ["--key", key] if key else []
    done = subprocess.run(argv, cwd=repo.path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "<<<<<<<" in (tmp_path / "ours").read_text()
    assert f"merged as text by git, not by key: {why}" in done.stderr, done.stderr


def test_line_endings_one_side_changed_are_taken_for_the_whole_table(tmp_path: Path) -> None:
    """One side converted the record to CRLF and added a row, the other added a row: the
    text around the table came out CRLF and every row LF, the converted ones too."""
    ours = page([*BASE, ("e", "5")])
    theirs = page([*BASE, ("d", "4")]).replace("\n", "\r\n")
    code, _ = merged(tmp_path, page(BASE), ours, theirs)
    text = (tmp_path / "repo" / RECORD).read_bytes().decode()
    assert code == 0 and rows_of(text) == [*BASE, ("e", "5"), ("d", "4")], text
    assert "\n" not in text.replace("\r\n", ""), repr(text)
