"""The kernel's reports of the files any process opens while a test runs (issue 38): what
counts as opened, and everything that makes opens go unseen, so that a test that starts a
process stays selected for every edit. Real inotify on real folders; Linux only."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fidelity.plugins import fidelity_watch as watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def started(tmp_path: Path) -> watch.Watch:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("X = 1\n")
    found = watch.Watch.start(str(tmp_path))
    assert found is not None
    return found


def test_bytecode_counts_as_its_source_whatever_the_interpreter() -> None:
    assert watch.source_of("pkg/__pycache__/m.cpython-311.pyc") == "pkg/m.py"
    assert watch.source_of("__pycache__/m.pypy310.opt-1.pyc") == "m.py"
    assert watch.source_of("pkg/m.py") == "pkg/m.py"
    assert watch.source_of("pkg/__pycache__/notes.txt") == "pkg/__pycache__/notes.txt"


@pytest.mark.parametrize(
    "args",
    [  # the arguments of the audit events subprocess.Popen and os.system
        ("python", ["python", "-X", "pycache_prefix=/t"], None, None),
        ("python", ["python"], None, {"PYTHONPYCACHEPREFIX": "/t"}),
        # red before (review of this change): a shell line, matched case-sensitively
        ("/bin/sh", ["/bin/sh", "-c", "PYTHONPYCACHEPREFIX=/t python"], None, None),
        ("env PythonPycachePrefix=/t python",),
    ],
)
def test_bytecode_kept_outside_the_tree_is_seen_in_any_spelling(args: tuple) -> None:
    assert watch.hides_bytecode(args)


def test_a_plain_process_hides_nothing() -> None:
    assert not watch.hides_bytecode(("git", ["git", "status"], None, {"A": "b"}))


def test_an_overflowed_queue_is_unseen(tmp_path: Path) -> None:
    w = started(tmp_path)
    overflow = watch._EVENT.pack(-1, watch.IN_Q_OVERFLOW, 0, 0)
    assert w._parse(overflow, set()), "events were dropped: opens may have gone unseen"


def test_without_the_kernels_reports_a_test_that_starts_a_process_is_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Off Linux, or when inotify cannot start, every process a test starts is unseen, so
    the test stays selected for every edit, as before the watch."""
    monkeypatch.syspath_prepend(str(Path(watch.__file__).parent))  # as pytest loads it
    plugin = importlib.import_module("fidelity_pytest_controls")

    tracer = plugin.Tracer("/nowhere")
    tracer.active, tracer.watch_tried = True, True  # the watch was tried and is None
    tracer.audit("subprocess.Popen", ("git", ["git", "status"], None, None))
    assert tracer.current.spawned and tracer.current.unseen


def test_opens_by_any_process_are_seen_and_git_reading_the_index_is_unseen(
    tmp_path: Path,
) -> None:
    gitdir = tmp_path / "repo.git" / "worktrees" / "lane"
    gitdir.mkdir(parents=True)
    (gitdir / "index").write_bytes(b"")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {gitdir}\n")  # a worktree's link
    w = started(tree)
    subprocess.run(["cat", "pkg/m.py"], cwd=tree, check=True, capture_output=True)
    assert w.drain() == ({"pkg/m.py"}, False)
    # finding the repository (`git hash-object`, `rev-parse`) reads no index: still seen
    subprocess.run(["cat", ".git", str(gitdir / "HEAD")], cwd=tree, capture_output=True)
    assert not w.drain()[1]
    subprocess.run(["cat", str(gitdir / "index")], cwd=tree, check=True, capture_output=True)
    assert w.drain()[1], "git status tells edits by size and time: the test stays selected"


def test_a_tool_cache_and_files_in_a_new_folder_are_unseen_opens(tmp_path: Path) -> None:
    """Red before (review of this change): mypy reads its cache, not sources whose size and
    time match it; a folder made and filled within one test had no watch when its files
    were opened."""
    w = started(tmp_path)
    (tmp_path / ".mypy_cache").mkdir()
    assert w.drain() == (set(), False), "an empty new folder hides nothing"
    (tmp_path / ".mypy_cache" / "m.meta.json").write_text("{}")
    assert w.drain()[1], "a tool read its cache"
    (tmp_path / "restored").mkdir()
    (tmp_path / "restored" / "data.txt").write_text("x")
    assert w.drain()[1], "files were in a new folder before it was watched"
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
    assert not w.drain()[1], "bytecode: compiled from a source whose open was seen"


def test_a_closed_descriptor_or_a_tree_too_deep_is_unseen_not_a_crash(tmp_path: Path) -> None:
    w = started(tmp_path)
    os.close(w.fd)
    assert w.drain() == (set(), True)
    deep = tmp_path / "deep"
    deep.joinpath(*["d"] * 300).mkdir(parents=True)
    # os.walk recurses on Python 3.11: past the limit the tree is not watched, no crash
    code = (
        "import sys; from fidelity.plugins import fidelity_watch as w; "
        f"sys.setrecursionlimit(200); print(w.Watch.start({str(deep)!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr[-500:]


def test_installed_packages_in_the_tree_are_not_watched(tmp_path: Path) -> None:
    """A child importing from a `.venv` in the tree opened thousands of watched files,
    enough to overflow the queue and leave every test that starts one unseen."""
    for folder in (".venv/lib", "node_modules/a", ".tox/py/lib"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "x.py").write_text("")
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    w = started(tmp_path)
    assert sorted(w.folders.values()) == ["", "pkg"]
    for name in (".venv/lib/x.py", "node_modules/a/x.py", ".tox/py/lib/x.py", "pkg/m.py"):
        subprocess.run(["cat", name], cwd=tmp_path, check=True, capture_output=True)
    assert w.drain() == ({"pkg/m.py"}, False)
