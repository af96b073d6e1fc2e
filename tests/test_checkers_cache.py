"""The per-page cache: an unchanged tree is answered from it, and every change that can move
a result (the page, a linked file's anchors, the configuration, fidelity's version) re-checks.
A cache can only save time, never change a verdict: what this machine's key did not sign,
and what is not a regular file of sane size, is never trusted or read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import PY, Repo, fidelity_cli

from checkers.cache import FILE, MAX_BYTES, Cache
from checkers.check import Page, Result, check_pages
from checkers.config import DocsConfig, from_section, load

PAGES = (Page("a.md", "a.md"), Page("b.md", "b.md"), Page("c.md", "c.md"))
KEY = b"k" * 32


def _tree(root: Path) -> None:
    (root / "a.md").write_text("# A\n\n[to b](b.md#install) [to c](c.md)\n")
    (root / "b.md").write_text("# B\n\n## Install\n")
    (root / "c.md").write_text("# C\n\n[self](#c) [gone](gone.md)\n")


def _run(
    root: Path,
    config: DocsConfig,
    salt: str = "1.0",
    key: bytes = KEY,
    pages: tuple[Page, ...] = PAGES,
) -> tuple[Result, int]:
    cache = Cache(root / ".cache", salt, config.fingerprint, key)
    result = check_pages(root, pages, config, cache=cache)
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


def test_a_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    _tree(tmp_path)
    config = load(tmp_path)
    first, _ = _run(tmp_path, config)
    path = tmp_path / ".cache" / FILE
    path.write_bytes(b"\xff{")
    again, hits = _run(tmp_path, config)
    assert (hits, _lines(again)) == (0, _lines(first))
    assert again.notes == (
        f"check-docs cache ignored: {path} is not a check-docs cache of this fidelity "
        "version; every page is checked (a fresh cache replaces it)",
    )


def test_a_cache_fidelity_signed_before_format_4_is_ignored_with_a_note(tmp_path: Path) -> None:
    """Format 3 was signed with HMAC-SHA256 under the same key; it is not read, even where
    its signature is genuine, and the note says why (red if the old magic were accepted)."""
    import hashlib
    import hmac

    _tree(tmp_path)
    config = load(tmp_path)
    first, _ = _run(tmp_path, config)
    path = tmp_path / ".cache" / FILE
    payload = path.read_bytes().partition(b"\n")[2]
    signature = hmac.new(KEY, payload, hashlib.sha256).hexdigest().encode()
    path.write_bytes(b"fidelity-check-docs-cache " + signature + b"\n" + payload)
    again, hits = _run(tmp_path, config)
    assert (hits, _lines(again)) == (0, _lines(first))
    assert again.notes == (
        f"check-docs cache ignored: {path} is not a check-docs cache of this fidelity "
        "version; every page is checked (a fresh cache replaces it)",
    )
    _, hits = _run(tmp_path, config)
    assert hits == 3  # replaced by one of this format


def test_a_cache_signed_with_another_key_is_recomputed_never_trusted(tmp_path: Path) -> None:
    """Another machine's cache, even one its own fidelity signed, that says a page with a
    broken link is clean: this machine checks every page again."""
    _tree(tmp_path)
    config = load(tmp_path)
    first, _ = _run(tmp_path, config)
    other = b"o" * 32
    forged = Cache(tmp_path / ".cache", "1.0", config.fingerprint, other)
    check_pages(tmp_path, PAGES, config, cache=forged)
    forged.pages["c.md"]["findings"] = []
    forged.dirty = True
    assert forged.save()
    trusted, hits = _run(tmp_path, config, key=other)
    assert (hits, _lines(trusted)) == (3, [])  # the forgery would pass if it were trusted
    forged.save()
    again, hits = _run(tmp_path, config)
    assert (hits, _lines(again)) == (0, _lines(first))
    assert len(again.notes) == 1
    assert "is not signed with this machine's cache key" in again.notes[0]
    _, hits = _run(tmp_path, config)
    assert hits == 3  # re-signed with this machine's key


def test_a_cache_path_that_is_a_folder_or_a_symlink_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _tree(root)
    config = load(root)
    first, _ = _run(root, config)
    outside = tmp_path / "elsewhere.json"
    (root / ".cache" / FILE).rename(outside)  # authentic, but reached through a symlink
    (root / ".cache" / FILE).symlink_to(outside)
    again, hits = _run(root, config)
    assert (hits, _lines(again)) == (0, _lines(first))
    assert again.notes == (
        f"check-docs cache ignored: {root / '.cache' / FILE} is a symlink, not a regular "
        "file; every page is checked (a fresh cache replaces it)",
    )
    assert not (root / ".cache" / FILE).is_symlink() and outside.is_file()
    (root / ".cache" / FILE).unlink()
    (root / ".cache" / FILE).mkdir()
    again, hits = _run(root, config)
    assert (hits, _lines(again)) == (0, _lines(first))
    assert again.notes == (
        f"check-docs cache ignored: {root / '.cache' / FILE} is a folder, not a regular file; "
        "every page is checked (remove that folder to keep a cache)",
    )


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


def _page_with_a_broken_link(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# Readme\n\n[x](gone.md)\n"})
    return repo


BROKEN = "README.md:3:5: FD401 link target 'gone.md' does not exist (gone.md)"


def test_a_hand_edited_cache_that_clears_a_pages_findings_still_exits_1(tmp_path: Path) -> None:
    repo = _page_with_a_broken_link(tmp_path)
    first = fidelity_cli(repo.path, "-q", "check-docs")
    assert (first.returncode, first.stdout.splitlines()[0]) == (1, BROKEN)
    path = repo.path / ".fidelity" / "cache" / "check-docs" / FILE
    raw = path.read_bytes()
    edited = re.sub(rb'"findings":\[\[.*?\]\]', b'"findings":[]', raw)
    assert edited != raw
    path.write_bytes(edited)
    again = fidelity_cli(repo.path, "-q", "check-docs")
    assert (again.returncode, again.stdout.splitlines()[0]) == (1, BROKEN)
    assert again.stderr == (
        f"fidelity check-docs: check-docs cache ignored: {path} is not signed with this "
        "machine's cache key (edited, or made on another machine or from another key); every "
        "page is checked (a fresh cache replaces it)\n"
    )


def test_a_fifo_at_the_cache_path_does_not_hang_the_check(tmp_path: Path) -> None:
    repo = _page_with_a_broken_link(tmp_path)
    folder = repo.path / ".fidelity" / "cache" / "check-docs"
    folder.mkdir(parents=True)
    os.mkfifo(folder / FILE)
    done = fidelity_cli(repo.path, "-q", "check-docs", timeout=30)
    assert (done.returncode, done.stdout.splitlines()[0]) == (1, BROKEN)
    assert f"{folder / FILE} is a FIFO, not a regular file" in done.stderr
    assert (folder / FILE).is_file()  # replaced by this run's cache, through no open()


PEAK = """
import resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=60)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, peak, time.monotonic() - start)
sys.stderr.write(done.stderr)
"""


def test_an_oversize_cache_is_refused_without_being_read(tmp_path: Path) -> None:
    repo = _page_with_a_broken_link(tmp_path)
    folder = repo.path / ".fidelity" / "cache" / "check-docs"
    folder.mkdir(parents=True)
    with open(folder / FILE, "wb") as handle:
        handle.truncate(1 << 30)  # sparse: 1 GiB that costs no disk
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [PY, "-c", PEAK, PY, "-m", "fidelity", "-q", "check-docs"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    code, peak_kb, seconds = done.stdout.split()
    assert code == "1", done.stderr
    assert f"is 1,073,741,824 bytes, over the cache's cap of {MAX_BYTES:,}" in done.stderr
    assert int(peak_kb) < 200_000, f"peak RSS {peak_kb} kB: the file was read"
    assert float(seconds) < 30


def test_a_cache_key_that_cannot_be_made_means_no_cache_said_once(tmp_path: Path) -> None:
    repo = _page_with_a_broken_link(tmp_path)
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be\n")  # unwritable, even for root
    env = {"FIDELITY_CACHE_KEY_FILE": "", "XDG_CACHE_HOME": "", "HOME": str(home)}
    for _ in range(2):
        done = fidelity_cli(repo.path, "-q", "check-docs", env=env)
        assert (done.returncode, done.stdout.splitlines()[0]) == (1, BROKEN)
        key = home / ".cache" / "fidelity" / "cache.key"
        assert done.stderr.startswith(
            f"fidelity check-docs: no cache: cannot read or make the cache key {key} "
        ), done.stderr
        assert done.stderr.count("\n") == 1
        assert not (repo.path / ".fidelity" / "cache" / "check-docs" / FILE).exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_the_key_is_made_outside_the_repository_with_mode_0600(tmp_path: Path) -> None:
    repo = _page_with_a_broken_link(tmp_path)
    env = {"FIDELITY_CACHE_KEY_FILE": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    fidelity_cli(repo.path, "-q", "check-docs", env=env)
    key = tmp_path / "xdg" / "fidelity" / "cache.key"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    made = key.read_bytes()
    again = fidelity_cli(repo.path, "-q", "check-docs", env=env)
    assert again.stderr == "" and key.read_bytes() == made


def test_a_targets_anchors_are_hashed_once_however_many_links_point_into_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's dependencies name each target's anchors by a hash of them all, sorted. Red
    before: it was worked out again for every link (3,000 times here: 60,000 links into a
    page of 2,000 anchors took 14.5 CPU-s with the cache, 4.3 without)."""
    from checkers import site
    from checkers.linkcheck import Anchors

    hashed: list[int] = []
    original = site.anchors_key

    def counted(value: Anchors) -> str:
        hashed.append(1)
        return original(value)

    monkeypatch.setattr(site, "anchors_key", counted)
    heads = "".join(f"## Part {i}\n\n" for i in range(200))
    (tmp_path / "a.md").write_text("# A\n\n" + heads + "[x](#part-1) [y](b.md#b) \n\n" * 1_500)
    (tmp_path / "b.md").write_text("# B\n\n" + heads)
    pages = (Page("a.md", "a.md"),)
    result, _ = _run(tmp_path, from_section({}), pages=pages)
    assert not result.findings
    assert len(hashed) <= 2  # a.md (itself) and b.md, once each
    again, hits = _run(tmp_path, from_section({}), pages=pages)
    assert hits == 1 and not again.findings
