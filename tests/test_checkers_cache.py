"""The per-page cache: an unchanged tree is answered from it, and every change that can move
a result (the page, a linked file's anchors, the configuration, fidelity's version) re-checks."""

from __future__ import annotations

import json
from pathlib import Path

from support import Repo, fidelity_cli

from checkers.cache import FILE, Cache
from checkers.check import Page, Result, check_pages
from checkers.config import DocsConfig, from_section, load

PAGES = (Page("a.md", "a.md"), Page("b.md", "b.md"), Page("c.md", "c.md"))


def _tree(root: Path) -> None:
    (root / "a.md").write_text("# A\n\n[to b](b.md#install) [to c](c.md)\n")
    (root / "b.md").write_text("# B\n\n## Install\n")
    (root / "c.md").write_text("# C\n\n[self](#c) [gone](gone.md)\n")


def _run(root: Path, config: DocsConfig, salt: str = "1.0") -> tuple[Result, int]:
    cache = Cache(root / ".cache", salt, config.fingerprint)
    result = check_pages(root, PAGES, config, cache=cache)
    return result, cache.hits


def _lines(result: Result) -> list[str]:
    return [f.render() for f in result.findings]


def test_an_unchanged_tree_is_answered_from_the_cache(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    first, hits = _run(tmp_path, config)
    assert hits == 0
    again, hits = _run(tmp_path, config)
    assert (hits, _lines(again)) == (3, _lines(first))
    assert _lines(first) == ["c.md:3:19: FD401 link target 'gone.md' does not exist (gone.md)"]


def test_a_linked_files_anchors_changing_rechecks_the_page_that_links(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    _run(tmp_path, config)
    (tmp_path / "b.md").write_text("# B\n\n## Setup\n")
    result, hits = _run(tmp_path, config)
    assert hits == 1  # c.md only: a.md links into b.md, b.md itself changed
    assert "a.md:3:8: FD402 no anchor '#install' in b.md" in [
        f.render()[:45] for f in result.findings
    ]


def test_nearest_neighbour_a_change_that_keeps_the_anchors_rechecks_only_that_page(
    tmp_path: Path,
) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    _run(tmp_path, config)
    (tmp_path / "b.md").write_text("# B\n\n## Install\n\nMore words.\n")
    _, hits = _run(tmp_path, config)
    assert hits == 2


def test_a_file_appearing_or_disappearing_rechecks_the_page_that_links(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    _run(tmp_path, config)
    (tmp_path / "gone.md").write_text("# Gone\n")
    result, hits = _run(tmp_path, config)
    assert (hits, _lines(result)) == (2, [])
    (tmp_path / "gone.md").unlink()
    result, hits = _run(tmp_path, config)
    assert hits == 2 and len(result.findings) == 1


def test_the_configuration_and_the_version_are_part_of_the_key(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    _run(tmp_path, config)
    _, hits = _run(tmp_path, from_section({"max_paragraph_chars": 3}))
    assert hits == 0
    _run(tmp_path, config)
    _, hits = _run(tmp_path, config, salt="1.1")
    assert hits == 0
    _, hits = _run(tmp_path, config, salt="1.1")
    assert hits == 3


def test_a_corrupt_or_foreign_cache_is_ignored(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    first, _ = _run(tmp_path, config)
    path = tmp_path / ".cache" / FILE
    data = json.loads(path.read_text())
    data["pages"]["c.md"]["findings"] = "not a list"
    data["pages"]["a.md"]["deps"] = None
    path.write_text(json.dumps(data))
    again, hits = _run(tmp_path, config)
    assert _lines(again) == _lines(first)
    path.write_bytes(b"\xff{")
    again, hits = _run(tmp_path, config)
    assert (hits, _lines(again)) == (0, _lines(first))


def test_the_cli_keeps_its_cache_under_dot_fidelity_ignored_by_git(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# Readme\n\n[x](#readme)\n"})
    first = fidelity_cli(repo.path, "-q", "check-docs")
    assert (first.returncode, first.stdout) == (0, "check-docs: 1 file clean\n")
    assert (repo.path / ".fidelity" / "cache" / "check-docs" / FILE).is_file()
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
    (repo.path / "README.md").write_text("# Readme\n\n[x](#nope)\n")
    second = fidelity_cli(repo.path, "-q", "check-docs")
    assert second.returncode == 1
    assert second.stdout.startswith("README.md:3:5: FD402 no anchor '#nope' in README.md")


def test_a_cache_that_cannot_be_made_is_said_and_the_check_still_runs(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# Readme\n\n[x](#nope)\n"})
    (repo.path / ".fidelity").write_text("not a folder\n")
    done = fidelity_cli(repo.path, "-q", "check-docs")
    assert done.returncode == 1, done.stderr
    assert "no cache" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.startswith("README.md:3:5: FD402")
