"""[tool.fidelity.docs]: defaults, page overrides in order, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkers.config import DEFAULT_PATHS, ConfigError, KeyedTable, PageRules, from_section, load


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    config = load(tmp_path)
    assert config.rules_for("anything.md") == PageRules()
    assert config.paths == DEFAULT_PATHS
    assert config.ratchets == "records/ratchets.json"


def test_page_entries_apply_in_order_over_the_defaults() -> None:
    config = from_section(
        {
            "max_cell_chars": 100,
            "page": [
                {"path": "records/*.md", "max_row_chars": 600, "keyed_tables": {"key": "row"}},
                {"path": "records/benchmarks.md", "max_row_chars": 700, "link_bases": ["docs/"]},
            ],
        }
    )
    bench = config.rules_for("records/benchmarks.md")
    assert (bench.max_row_chars, bench.max_cell_chars) == (700, 100)
    assert bench.keyed_tables == (KeyedTable("row"),)
    assert bench.link_bases == ("docs/",)
    assert config.rules_for("README.md").max_row_chars == PageRules().max_row_chars


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"max_rows": 3}, "[tool.fidelity.docs]: unknown key 'max_rows'; allowed:"),
        ({"page": [{"path": "a.md", "colour": 1}]}, ".page[0]: unknown key 'colour'"),
        ({"page": [{"max_row_chars": 3}]}, "'path' is a required property"),
        ({"max_cell_chars": -1}, ".max_cell_chars: -1 is less than the minimum of 0"),
        ({"max_cell_chars": True}, ".max_cell_chars: True is not of type 'integer'"),
        ({"keyed_tables": {"column": "row"}}, '.keyed_tables: must be a table {key = "..."}'),
        ({"forbidden_headings": "("}, ".forbidden_headings: bad regex"),
    ],
)
def test_bad_config_names_the_key(section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="pyproject.toml") as info:
        from_section(section)
    assert message in str(info.value)


def test_the_valid_neighbour_of_each_bad_config_loads() -> None:
    caps = from_section({"max_row_chars": 3, "page": [{"path": "a.md"}], "max_cell_chars": 0})
    rules = caps.rules_for("a.md")
    assert (rules.max_row_chars, rules.max_cell_chars) == (3, 0)
    keyed = from_section({"keyed_tables": [{"key": "row", "heading": "Scoreboard"}]})
    assert keyed.rules_for("x.md").keyed_tables == (KeyedTable("row", "Scoreboard"),)


def test_load_reads_only_the_docs_section(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fidelity]\ncases = "x"\n[tool.fidelity.docs]\nparagraph_cap = 1\n'
    )
    with pytest.raises(ConfigError, match="unknown key 'paragraph_cap'"):
        load(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.fidelity.docs\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load(tmp_path)
