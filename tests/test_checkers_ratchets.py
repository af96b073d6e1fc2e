"""The baseline file: fingerprints (subjects) judged finding by finding, and count entries
from before fingerprints, which keep working until --update-baseline converts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers import baseline, ratchets
from checkers.check import Page, check_pages
from checkers.config import ConfigError, from_section
from checkers.findings import Code, Finding

CONFIG = from_section({"max_paragraph_chars": 10})
LONG = "A paragraph over ten.\n\n"
PAGE = (Page("page.md", "page.md"),)


def _repo(tmp_path: Path, text: str, entries: dict[str, object]) -> Path:
    (tmp_path / "records").mkdir()
    (tmp_path / "page.md").write_text(text)
    (tmp_path / "records" / "ratchets.json").write_text(json.dumps(entries))
    return tmp_path


def _baseline(root: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((root / "records/ratchets.json").read_text())
    return loaded


def test_a_count_keeps_working_until_update_converts_it(tmp_path: Path) -> None:
    root = _repo(tmp_path, LONG, {"page.md": {"FD103": 3}})
    assert [f.code for f in check_pages(root, PAGE, CONFIG).findings] == ["FD602"]
    result = check_pages(root, PAGE, CONFIG, update_ratchets=True)
    assert result.findings == ()
    assert [(m.old, m.new) for m in result.converted] == [(3, 1)]
    assert _baseline(root) == {"page.md": {"FD103": ["A paragraph over ten."]}}
    (root / "page.md").write_text(LONG + "Another paragraph.\n")
    assert [f.code for f in check_pages(root, PAGE, CONFIG).findings] == ["FD103"]


def test_a_count_that_is_exceeded_stays_a_count_and_red(tmp_path: Path) -> None:
    root = _repo(tmp_path, LONG * 3, {"page.md": {"FD103": 1}})
    (root / "new.md").write_text(LONG)
    pages = (*PAGE, Page("new.md", "new.md"))
    result = check_pages(root, pages, CONFIG, update_ratchets=True)
    assert (result.converted, result.recorded) == ((), ())
    assert _baseline(root) == {"page.md": {"FD103": 1}}
    assert sorted(str(f.code) for f in result.findings) == ["FD103"] * 4 + ["FD601"]


def test_update_removes_fixed_subjects_and_never_adds(tmp_path: Path) -> None:
    entries = {"page.md": {"FD103": ["A paragraph over ten.", "Gone paragraph."]}}
    root = _repo(tmp_path, LONG + "A new paragraph.\n", entries | {"else.md": {"FD101": 1}})
    (root / "else.md").write_text("# A page not checked this run keeps its entries\n")
    held = check_pages(root, PAGE, CONFIG)
    assert [f.code for f in held.findings] == ["FD103"]
    assert held.fixed == (baseline.Fixed("page.md", "FD103", "Gone paragraph."),)
    assert held.held == {"page.md": {"FD103": 1}}
    result = check_pages(root, PAGE, CONFIG, update_ratchets=True)
    assert result.removed == (baseline.Fixed("page.md", "FD103", "Gone paragraph."),)
    assert [f.code for f in result.findings] == ["FD103"]
    assert _baseline(root) == {
        "page.md": {"FD103": ["A paragraph over ten."]},
        "else.md": {"FD101": 1},
    }


def test_the_entries_of_a_page_that_is_gone_are_fixed_then_dropped(tmp_path: Path) -> None:
    """Issue 36: after `git mv` or `git rm` of a page its entries were never reported fixed,
    and --update-baseline kept them for ever."""
    gone = {"FD103": ["Its paragraph."], "FD401": 2}
    odd = {"FD103": ["x"]}  # names no page can have: nothing could ever match them
    entries = {"page.md": {"FD103": ["A paragraph over ten."]}, "old.md": gone}
    root = _repo(tmp_path, LONG, entries | {"../up.md": odd, "./page.md": odd})
    (root / "kept.md").write_text("# Kept\n")
    _repo_entries = _baseline(root) | {"kept.md": {"FD103": ["Not checked this run."]}}
    (root / "records" / "ratchets.json").write_text(json.dumps(_repo_entries))
    held = check_pages(root, PAGE, CONFIG)
    assert held.findings == ()
    fixed = [(f.page, f.code, f.subject, f.gone) for f in held.fixed]
    assert fixed == [
        ("../up.md", "FD103", "x", True),
        ("./page.md", "FD103", "x", True),
        ("old.md", "FD103", "Its paragraph.", True),
        ("old.md", "FD401", "(a count of 2)", True),
    ]
    update = check_pages(root, PAGE, CONFIG, update_ratchets=True)
    assert update.findings == () and update.fixed == ()
    assert sorted(update.removed) == sorted(held.fixed)
    assert _baseline(root) == {
        "page.md": {"FD103": ["A paragraph over ten."]},
        "kept.md": {"FD103": ["Not checked this run."]},
    }


def test_record_lists_only_codes_without_an_entry(tmp_path: Path) -> None:
    root = _repo(tmp_path, LONG + "[x](gone.md)\n", {"page.md": {"FD103": []}})
    result = check_pages(root, PAGE, CONFIG, ratchet_mode="record")
    assert [(m.code, m.new) for m in result.recorded] == [("FD401", 1)]
    assert [f.code for f in result.findings] == ["FD103"]
    assert _baseline(root) == {"page.md": {"FD401": ["link gone.md"]}}


def test_fingerprints_ignore_lines_and_number_repeats() -> None:
    def found(line: int, subject: str) -> Finding:
        return Finding("shown/page.md", line, 1, Code.MISSING_FILE, f"m {line}", subject)

    first = baseline.fingerprinted("page.md", [found(3, "link a"), found(9, "link a")])
    moved = baseline.fingerprinted("page.md", [found(30, "link a"), found(90, "link a")])
    other = baseline.fingerprinted("other.md", [found(3, "link a")])
    assert [f.fingerprint for f in first] == [f.fingerprint for f in moved]
    assert first[0].fingerprint != first[1].fingerprint
    assert first[0].fingerprint != other[0].fingerprint
    assert Finding("p", 1, 1, Code.UNCLOSED_FENCE, "swallows 12 lines").key == "swallows N lines"


def test_only_the_findings_shown_are_fingerprinted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page lists its first `shown` new findings: only those get a fingerprint, the same
    one as when every finding is fingerprinted (occurrences still count every repeat, held
    ones too). Red before: all 3,000 were fingerprinted."""
    found = [
        Finding("page.md", line, 1, Code.MISSING_FILE, f"m {line}", f"link {line % 7}")
        for line in range(1, 3_001)
    ]
    entries: dict[str, ratchets.Entry] = {"FD401": ["link 3", "link 3"]}
    every = baseline.judge("page.md", found, entries, "r.json")
    made: list[int] = []
    original = baseline.fingerprint

    def counted(page: str, finding: Finding, occurrence: int) -> str:
        made.append(occurrence)
        return original(page, finding, occurrence)

    monkeypatch.setattr(baseline, "fingerprint", counted)
    first = baseline.judge("page.md", found, entries, "r.json", 100)
    assert len(made) == 100
    assert first.findings == every.findings and first.held == every.held == {"FD401": 2}
    assert [f.fingerprint for f in first.findings[:100]] == [
        f.fingerprint for f in every.findings[:100]
    ]
    assert first.findings[100].fingerprint == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "must be an object"),
        ('{"p.md": 3}', "'p.md' must map finding codes to entries"),
        ('{"p.md": {"FD999": 1}}', "unknown code 'FD999'"),
        ('{"p.md": {"FD601": 1}}', "unknown code 'FD601'"),
        ('{"p.md": {"FD103": -1}}', "FD103 must be a list of subjects or a count >= 0"),
        ('{"p.md": {"FD103": true}}', "FD103 must be a list of subjects or a count >= 0"),
        ('{"p.md": {"FD103": "link x"}}', "FD103 must be a list of subjects or a count >= 0"),
        ('{"p.md": {"FD103": [1]}}', "FD103 must list subjects (strings)"),
        ("{", "invalid JSON"),
    ],
)
def test_bad_baseline_files_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="ratchets.json") as info:
        ratchets.parse(text, "records/ratchets.json")
    assert message in str(info.value)


def test_dump_is_stable_and_drops_empty_entries() -> None:
    text = ratchets.dump({"b.md": {"FD103": ["z", "a"], "FD101": 2, "FD102": []}, "a.md": {}})
    assert (
        text
        == '{\n  "b.md": {\n    "FD101": 2,\n    "FD103": [\n      "a",\n      "z"\n    ]\n  }\n}\n'
    )


GOOD = {"page.md": {"FD401": ["gone.md"]}}


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (json.dumps(GOOD).encode("utf-16"), "ratchets.json:1:1: the file is UTF-16 (byte 0xff)"),
        (b'{"page.md": {"FD401": ["g\xffne"]}}', "ratchets.json:1:26: the file is not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than Python's JSON reader follows"),
        (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "nested deeper than"),
        (b'{"page.md": {"FD401": ' + b"1" * 5000 + b"}}", "a number of more than 4,300 digits"),
        (b'{"page.md":\n {"FD401": [', "ratchets.json:2:13: invalid JSON: Expecting value"),
    ],
    ids=["utf-16", "not-utf-8", "nested-lists", "nested-objects", "long-number", "truncated"],
)
def test_a_baseline_file_that_cannot_be_read_is_a_located_usage_error(
    tmp_path: Path,
    data: bytes,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Red before the fix: a traceback, exit 3 (UnicodeDecodeError, RecursionError,
    ValueError), and 'truncated' exit 2 but not located as path:line:col."""
    from fidelity.cli.main import main

    (tmp_path / "records").mkdir()
    (tmp_path / "page.md").write_text("# P\n\n[x](gone.md)\n")
    (tmp_path / "records" / "ratchets.json").write_bytes(data)
    monkeypatch.chdir(tmp_path)
    assert main(["check-docs", "--root", str(tmp_path), "page.md"]) == 2
    err = capsys.readouterr().err
    assert said in err and "--record-baseline" in err, err


def test_a_count_exceeded_by_one_lists_every_finding_and_fd601(tmp_path: Path) -> None:
    """Count 1, two findings: both FD103 are listed with FD601 ("exceeded: all of them and
    FD601"); red with the filter at count + 1, which listed FD601 alone."""
    config = from_section({"max_paragraph_chars": 10})
    (tmp_path / "records").mkdir()
    (tmp_path / "page.md").write_text("A paragraph over ten.\n\n" * 2)
    (tmp_path / "records" / "ratchets.json").write_text(json.dumps({"page.md": {"FD103": 1}}))
    found = check_pages(tmp_path, (Page("page.md", "page.md"),), config).findings
    assert sorted(str(f.code) for f in found) == ["FD103", "FD103", "FD601"]
