"""Ratchets only go down: --update-ratchets lowers to the measurement, never raises or adds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers import ratchets
from checkers.check import Page, check_pages
from checkers.config import ConfigError, from_section

CONFIG = from_section({"max_paragraph_chars": 10})
LONG = "A paragraph over ten.\n\n"


def _repo(tmp_path: Path, paragraphs: int, ratchet: dict[str, dict[str, int]]) -> Path:
    (tmp_path / "records").mkdir()
    (tmp_path / "page.md").write_text(LONG * paragraphs)
    (tmp_path / "records" / "ratchets.json").write_text(json.dumps(ratchet))
    return tmp_path


def _ratchet(root: Path) -> dict[str, dict[str, int]]:
    loaded: dict[str, dict[str, int]] = json.loads((root / "records/ratchets.json").read_text())
    return loaded


def test_update_lowers_to_the_measurement_and_then_passes(tmp_path: Path) -> None:
    root = _repo(tmp_path, 1, {"page.md": {"FD103": 3}})
    page = (Page("page.md", "page.md"),)
    assert [f.code for f in check_pages(root, page, CONFIG).findings] == ["FD602"]
    result = check_pages(root, page, CONFIG, update_ratchets=True)
    assert result.findings == ()
    assert [(m.old, m.new) for m in result.lowered] == [(3, 1)]
    assert _ratchet(root) == {"page.md": {"FD103": 1}}


def test_update_never_raises_a_ratchet_or_adds_a_page(tmp_path: Path) -> None:
    root = _repo(tmp_path, 3, {"page.md": {"FD103": 1}})
    (root / "new.md").write_text(LONG)
    pages = (Page("page.md", "page.md"), Page("new.md", "new.md"))
    result = check_pages(root, pages, CONFIG, update_ratchets=True)
    assert result.lowered == ()
    assert _ratchet(root) == {"page.md": {"FD103": 1}}
    assert sorted(str(f.code) for f in result.findings) == ["FD103"] * 4 + ["FD601"]


def test_a_ratchet_lowered_to_zero_is_removed(tmp_path: Path) -> None:
    root = _repo(tmp_path, 0, {"page.md": {"FD103": 2}, "elsewhere.md": {"FD101": 1}})
    check_pages(root, (Page("page.md", "page.md"),), CONFIG, update_ratchets=True)
    assert _ratchet(root) == {"elsewhere.md": {"FD101": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "must be an object"),
        ('{"p.md": 3}', "'p.md' must map finding codes to counts"),
        ('{"p.md": {"FD999": 1}}', "unknown code 'FD999'"),
        ('{"p.md": {"FD601": 1}}', "unknown code 'FD601'"),
        ('{"p.md": {"FD103": -1}}', "FD103 must be a count >= 0"),
        ('{"p.md": {"FD103": true}}', "FD103 must be a count >= 0"),
        ("{", "invalid JSON"),
    ],
)
def test_bad_ratchet_files_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="ratchets.json") as info:
        ratchets.parse(text, "records/ratchets.json")
    assert message in str(info.value)


def test_dump_is_stable_and_drops_empty_pages() -> None:
    text = ratchets.dump({"b.md": {"FD103": 1, "FD101": 2}, "a.md": {}})
    assert text == '{\n  "b.md": {\n    "FD101": 2,\n    "FD103": 1\n  }\n}\n'
