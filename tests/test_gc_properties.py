"""A property over hostile `.fidelity/` trees (issue 36): `fidelity gc --apply` removes
nothing but the entries fidelity made, and every one of those that the rule lets go.

A tree is drawn from: `.fidelity` a folder or a link to another disk; `runs` a folder, a
link, or a link loop; in `runs/` and `controls/` real run directories (made by
`workdir.fresh`, as runs make them), runs made before fidelity marked its runs, plain
folders and files, links to the user's own worktree, to a run fidelity made elsewhere, and
loops; in `setups/` real kept set-ups (made by `setups.prepared`, as a run makes them),
another repository's worktree, the user's own worktree of this repository, a plain folder,
a link, a loop, and set-up files no run made (an empty lock, a record that is a link). Everything under the example's folder outside fidelity's own entries
(every path's type, mode, content or link target) and both repositories' worktree lists
are compared before and after.

Each example builds real git worktrees (up to a dozen git processes), so the example count
is a sixth of the profile's: 25 derandomized in CI, 250 in the explore profile.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import Repo, run_cli

from fidelity import workdir
from fidelity.matrix.cases.table import parse
from fidelity.matrix.run import setups

OLD = 30 * 86400.0
RUN_ENTRIES = ["run", "legacy", "plain", "file", "link-mine", "link-run", "loop", "back"]
SETUP_ENTRIES = ["kept", "foreign", "mine-inside", "plain", "link-mine", "loop", "stray-lock"]


@dataclass(frozen=True, slots=True)
class Layout:
    fidelity: str  # "dir" | "link"
    runs: str  # "dir" | "link" | "loop"
    runs_entries: tuple[str, ...]
    controls_entries: tuple[str, ...]
    setup_entries: tuple[str, ...]


layouts = st.builds(
    Layout,
    st.sampled_from(["dir", "link"]),
    st.sampled_from(["dir", "link", "loop"]),
    st.lists(st.sampled_from(RUN_ENTRIES), max_size=4).map(tuple),
    st.lists(st.sampled_from(["run", "legacy", "plain"]), max_size=2).map(tuple),
    st.lists(st.sampled_from(SETUP_ENTRIES), max_size=3).map(tuple),
)


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A repository of the user's and another repository, copied for every example."""
    base = tmp_path_factory.mktemp("gc-templates")
    mine, other = Repo(base / "repo"), Repo(base / "other")
    mine.commit({"a.txt": "a\n"})
    other.commit({"theirs.txt": "theirs\n"})
    return mine.path, other.path


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.hooksPath=/dev/null", *args],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    return out.stdout


def worktrees(repo: Path) -> set[str]:
    lines = git(repo, "worktree", "list", "--porcelain").splitlines()
    return {line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")}


def old(path: Path) -> None:
    then = time.time() - OLD
    os.utime(path, (then, then), follow_symlinks=False)


def tree(root: Path, skip: set[str]) -> dict[str, tuple[str, ...]]:
    """Every path under root (links not followed) with its type, mode, content or target;
    paths under a skipped real path are left out."""
    found: dict[str, tuple[str, ...]] = {}
    for top, folders, files in os.walk(root):
        folders[:] = [f for f in folders if os.path.join(top, f) not in skip]
        for name in folders + files:
            path = os.path.join(top, name)
            if path in skip:
                continue
            st_ = os.lstat(path)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                found[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[rel] = ("dir", oct(st_.st_mode))
            else:
                found[rel] = ("file", oct(st_.st_mode), Path(path).read_bytes().hex()[:64])
    return found


@dataclass(slots=True)
class Built:
    root: Path
    repo: Path
    other: Path
    own: list[Path] = field(default_factory=list)  # what gc may remove (real paths)


def _mine(b: Built) -> Path:
    where = b.root / "mine"
    if not where.exists():
        git(b.repo, "worktree", "add", "-q", "--detach", str(where))
        (where / "wip.txt").write_text("uncommitted\n")
    return where


def _run_entry(b: Built, folder: Path, kind: str, what: str, n: int) -> None:
    name = f"e{n}-{what}"
    entry = folder / name
    if what == "run":
        made = workdir.fresh(b.repo, kind, name)
        (made / ("run.json" if kind == "runs" else "report.json")).write_text("{}\n")
        b.own.append(Path(os.path.realpath(made)))
    elif what in ("legacy", "plain"):
        entry.mkdir()
        (entry / ("run.json" if what == "legacy" else "notes.txt")).write_text("mine\n")
    elif what == "file":
        entry.write_text("a file\n")
    elif what == "link-mine":
        entry.symlink_to(_mine(b))
    elif what == "link-run":
        (b.root / "elsewhere").mkdir(exist_ok=True)
        elsewhere = workdir.fresh(b.root / "elsewhere", "runs", name)
        (elsewhere / "run.json").write_text("{}\n")
        old(elsewhere)
        entry.symlink_to(elsewhere)
    else:
        entry.symlink_to(name if what == "loop" else "..")
    old(entry)


def _kept(b: Built, n: int) -> None:
    table = (
        f'[matrix]\nreuse_setup = true\nenv = {{ N = "{n}" }}\n'
        '[[case]]\nid = "c"\nargv = ["x"]\noutputs = ["o"]\n'
    )
    sha = git(b.repo, "rev-parse", "HEAD").strip()
    with setups.prepared(b.repo, sha, "baseline", parse(table.encode(), "t")) as place:
        place.record()
        path = place.path
    b.own.append(Path(os.path.realpath(path)))
    for companion in (path, *setups.companions(path)):
        b.own.append(Path(os.path.realpath(companion)))
        old(companion)


def _setup_entry(b: Built, root: Path, what: str, n: int) -> None:
    entry = root / f"{n:012d}-{n:012d}"
    if what == "kept":
        _kept(b, n)
        return
    if what == "foreign":
        git(b.other, "worktree", "add", "-q", "--detach", str(entry))
        (entry / "wip.txt").write_text("their work\n")
    elif what == "mine-inside":
        git(b.repo, "worktree", "add", "-q", "--detach", str(entry))
    elif what == "plain":
        (entry / "sub").mkdir(parents=True)
        (entry / "sub" / "f.txt").write_text("mine\n")
    elif what == "link-mine":
        entry.symlink_to(_mine(b))
    elif what == "stray-lock":  # a lock no run made, and companions that are links
        entry = entry.with_name(entry.name + ".lock")
        entry.write_text("")
        manifest = entry.with_name(entry.name.removesuffix(".lock") + ".setup.json")
        manifest.symlink_to(_mine(b) / "wip.txt")
        old(manifest)
    else:
        entry.symlink_to(entry.name)
    old(entry)


def build(layout: Layout, base: Path, templates: tuple[Path, Path]) -> Built:
    b = Built(base, base / "repo", base / "other")
    shutil.copytree(templates[0], b.repo, symlinks=True)
    shutil.copytree(templates[1], b.other, symlinks=True)
    fid = b.repo / workdir.ROOT
    if layout.fidelity == "link":
        (base / "disk" / "fid").mkdir(parents=True)
        fid.symlink_to(base / "disk" / "fid")
    else:
        fid.mkdir()
    if layout.runs == "link":
        (base / "disk" / "runs").mkdir(parents=True)
        (fid / "runs").symlink_to(base / "disk" / "runs")
    elif layout.runs == "loop":
        (fid / "runs").symlink_to("runs")
    for kind, entries in (("runs", layout.runs_entries), ("controls", layout.controls_entries)):
        if kind == "runs" and layout.runs == "loop":
            continue
        folder = workdir.folder(b.repo, kind)
        for n, what in enumerate(entries):
            _run_entry(b, folder, kind, what, n)
    root = workdir.folder(b.repo, setups.KIND)
    for n, what in enumerate(layout.setup_entries):
        _setup_entry(b, root, what, n)
    return b


def outside(b: Built) -> dict[str, object]:
    admin = str(b.repo / ".git" / "worktrees")  # git's records of fidelity's own worktrees
    own = {str(p) for p in b.own}
    return {
        "files": tree(b.root, own | {admin}),
        "theirs": worktrees(b.other),
        "ours": {w for w in worktrees(b.repo) if w not in own},
    }


@settings(max_examples=max(1, settings().max_examples // 6))
@given(layout=layouts)
def test_gc_removes_only_its_own_entries_and_all_of_them(
    templates: tuple[Path, Path], layout: Layout
) -> None:
    with tempfile.TemporaryDirectory(prefix="gc-prop-") as tmp:
        b = build(layout, Path(os.path.realpath(tmp)), templates)
        before = outside(b)
        argv = ["gc", "-q", "--repo", str(b.repo)]
        code, out = run_cli([*argv, "--keep-runs", "0", "--keep-days", "0", "--apply"])
        assert outside(b) == before, out
        assert [p for p in b.own if os.path.lexists(p)] == [], out
        assert code == 0, out
