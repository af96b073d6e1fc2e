"""`{harness}`: source at two revisions, harness at one. A driver script added today drives
both sides, older commits that never had it included; what a case does to the harness
checkout is a finding; an uncommitted harness is said before any case runs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from support import PY, Repo, snapshot

from fidelity.errors import TableError, UsageError
from fidelity.matrix import gate
from fidelity.matrix.cases import table
from fidelity.matrix.run.request import RunHooks, RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.predict import Held

LIB_V1 = "def scale(x):\n    return x * 2\n"
LIB_V2 = "def scale(x):\n    return x + x  # same values, other code\n"
LIB_FIX = "def scale(x):\n    return x * 3\n"
DRIVE = """
import json, pathlib, sys
sys.path.insert(0, ".")  # the side's own source: the working directory is its worktree
import lib
out = pathlib.Path(sys.argv[1])
(out / "values.json").write_text(json.dumps([lib.scale(x) for x in range(5)]))
"""


def harness_table(extra_case: str = "", extra_matrix: str = "") -> str:
    return f"""[matrix]
name = "h"
{extra_matrix}

[[case]]
id = "scale"
argv = [{json.dumps(PY)}, "{{harness}}/cases/drive.py", "{{out}}"]
outputs = ["values.json"]
timeout_s = 30
{extra_case}
"""


def history(repo: Repo, refactor: Mapping[str, str] | None = None) -> dict[str, str]:
    """first: the library only; refactor: same values (with `refactor`'s files); then the
    harness (table + driver) arrives, as it does in a project that starts gating today."""
    shas = {"first": repo.commit({"lib.py": LIB_V1}, "first")}
    shas["refactor"] = repo.commit({"lib.py": LIB_V2, **(refactor or {})}, "refactor")
    shas["harness"] = repo.commit(
        {"cases/matrix.toml": harness_table(), "cases/drive.py": DRIVE}, "harness"
    )
    return shas


def test_the_harness_revision_drives_a_side_that_never_had_the_script(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    before = snapshot(repo.path)
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    assert outcome.exit_code == 0, outcome.findings
    assert [r.verdict.value for r in outcome.comparison.cases] == ["identical"]
    assert outcome.harness.reads and outcome.harness.tree
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    assert outcome.harness.tree == tree
    assert outcome.manifest["harness"]["tree"] == tree
    assert snapshot(repo.path) == before  # checkout, index, worktree list all as they were

    # without {harness}, the script comes from each side: both fail at the older commits
    repo.commit({"cases/matrix.toml": harness_table().replace("{harness}/", "")}, "side-relative")
    old = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    assert [r.verdict.value for r in old.comparison.cases] == ["both-failed"]
    assert old.exit_code != 0


def test_a_harness_revision_given_with_harness_is_checked_out(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    repo.commit({"cases/drive.py": DRIVE.replace("range(5)", "range(6)")}, "later driver")
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"], harness_rev="HEAD~1"))
    assert outcome.exit_code == 0
    assert outcome.harness.tree == repo.git("rev-parse", "HEAD~1^{tree}").strip()
    values = outcome.run_dir / "baseline" / "cases" / "scale" / "out" / "values.json"
    assert json.loads(values.read_text()) == [0, 2, 4, 6, 8]  # the HEAD~1 driver's range


def test_a_fix_moves_the_case_through_the_harness_driver(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    fix = repo.commit({"lib.py": LIB_FIX}, "fix")
    outcome = gate.run(repo.path, RunRequest(shas["first"], fix))
    assert [r.verdict.value for r in outcome.comparison.cases] == ["moved"]
    assert outcome.exit_code == 1


def test_a_case_that_writes_into_the_harness_is_a_finding(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    tamper = (
        "import pathlib, os, stat; p = pathlib.Path(os.environ['H']) / 'cases' / 'drive.py';"
        "p.chmod(p.stat().st_mode | stat.S_IWUSR); p.write_text(p.read_text() + '# x')"
    )
    extra = (
        '[[case]]\nid = "tamper"\n'
        f'argv = [{json.dumps(PY)}, "-c", {json.dumps(tamper)}]\n'
        'env = { H = "{harness}" }\noutputs = []\ncache_env = "C"\n'
    )
    repo.commit({"cases/matrix.toml": harness_table() + extra}, "tampering case")
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    codes = {f.code for f in outcome.findings}
    assert Code.HARNESS_CHANGED in codes, outcome.findings
    assert outcome.exit_code == 3
    assert outcome.manifest["harness"]["changed"] == ["cases/drive.py"]


def test_the_harness_checkout_is_read_only_and_removed(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    probe = (
        "import os, pathlib, sys; h = pathlib.Path(os.environ['H']);"
        "pathlib.Path(sys.argv[1], 'where.txt').write_text("
        "str(h) + ' ' + oct((h / 'cases' / 'drive.py').stat().st_mode & 0o222))"
    )
    extra = (
        '[[case]]\nid = "probe"\n'
        f'argv = [{json.dumps(PY)}, "-c", {json.dumps(probe)}, "{{out}}"]\n'
        'env = { H = "{harness}" }\noutputs = ["where.txt"]\n'
    )
    repo.commit({"cases/matrix.toml": harness_table() + extra}, "probe")
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    where = (outcome.run_dir / "candidate" / "cases" / "probe" / "out" / "where.txt").read_text()
    folder, mode = where.split()
    assert mode == "0o0"  # no write bit for anyone
    assert not Path(folder).exists()
    assert outcome.exit_code == 0, outcome.findings


@pytest.mark.parametrize("spelled", ["cases/", "./cases", "cases/."])
def test_harness_paths_limit_what_is_checked_out_and_what_dirt_counts(
    make_repo, spelled: str
) -> None:
    """Each spelling of the folder is the folder (red before for "./cases": an empty
    harness, and an uncommitted cases/drive.py not called dirt)."""
    repo: Repo = make_repo("h")
    shas = history(repo)
    count = (
        "import os, pathlib, sys; h = pathlib.Path(os.environ['H']);"
        "pathlib.Path(sys.argv[1], 'files.txt').write_text("
        "' '.join(sorted(p.relative_to(h).as_posix() for p in h.rglob('*') if p.is_file())))"
    )
    extra = (
        '[[case]]\nid = "files"\n'
        f'argv = [{json.dumps(PY)}, "-c", {json.dumps(count)}, "{{out}}"]\n'
        'env = { H = "{harness}" }\noutputs = ["files.txt"]\n'
    )
    table_text = harness_table(extra, extra_matrix=f'harness_paths = ["{spelled}"]')
    repo.commit({"cases/matrix.toml": table_text}, "paths")
    (repo.path / "lib.py").write_text("# uncommitted, outside the harness paths\n")
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    out = outcome.run_dir / "baseline" / "cases" / "files" / "out" / "files.txt"
    assert out.read_text() == "cases/drive.py cases/matrix.toml"
    assert outcome.exit_code == 0, outcome.findings

    (repo.path / "cases" / "drive.py").write_text(DRIVE + "# uncommitted\n")
    dirty = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    found = [f for f in dirty.findings if f.code is Code.DIRTY_HARNESS]
    assert found and "cases/drive.py" in found[0].message
    assert dirty.exit_code == 3


def test_an_uncommitted_harness_is_said_before_any_case_runs(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    slow = harness_table().replace('"{out}"]', '"{out}"]\ncwd = "{harness}"')
    (repo.path / "cases" / "matrix.toml").write_text(slow)
    proc = subprocess.run(
        [sys.executable, "-m", "fidelity", "run", "--baseline", shas["first"]],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=repo.env(),
        check=False,
    )
    assert proc.returncode == 3, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert "will end untrusted (exit 3)" in first
    assert "dirty-harness" in proc.stderr.splitlines()[1]
    # before any case runs, not merely first on stderr (red with the warning after the runs)
    marker = repo.path.parent / "a-case-ran"
    touch = f"import pathlib; pathlib.Path({str(marker)!r}).touch()"
    marked = harness_table(
        f'[[case]]\nid = "mark"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(touch)}]\n'
        'cache_env = "MARK_CACHE"\n'
    )
    (repo.path / "cases" / "matrix.toml").write_text(marked)
    said: list[bool] = []
    gate.run(
        repo.path,
        RunRequest(shas["first"], "HEAD"),
        RunHooks(warn=lambda found: said.append(marker.exists())),
    )
    assert said == [False] and marker.exists()


def test_cwd_runs_a_case_in_the_harness(make_repo) -> None:
    repo: Repo = make_repo("h")
    shas = history(repo)
    cwd_case = (
        '[[case]]\nid = "cwd"\n'
        f'argv = [{json.dumps(PY)}, "-c", "import os, pathlib, sys; '
        "pathlib.Path(sys.argv[1], 'cwd.txt').write_text(str(sorted(os.listdir('.'))))\", "
        '"{out}"]\ncwd = "{harness}/cases"\noutputs = ["cwd.txt"]\n'
    )
    repo.commit({"cases/matrix.toml": harness_table() + cwd_case}, "cwd")
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    text = (outcome.run_dir / "baseline" / "cases" / "cwd" / "out" / "cwd.txt").read_text()
    assert text == "['drive.py', 'matrix.toml']"
    assert outcome.exit_code == 0


def test_cwd_and_harness_paths_are_validated() -> None:
    bad = b"""[matrix]
harness_paths = ["../up", "/abs", "./", "."]
[[case]]
id = "a"
argv = ["x"]
cwd = "/tmp"
outputs = ["o"]
[[case]]
id = "b"
argv = ["x"]
cwd = "{harness}/../x"
outputs = ["o"]
"""
    try:
        table.parse(bad, "t.toml")
    except TableError as exc:
        text = "\\n".join(exc.problems)
    else:
        raise AssertionError("an invalid cwd was accepted")
    assert "$.case[0].cwd: must start with {worktree} or {harness}" in text
    assert "$.case[1].cwd: must not leave its folder" in text
    assert text.count("$.matrix.harness_paths[") == 4


def test_a_table_without_harness_does_not_check_it_out(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose table never names {harness} checks nothing out (red with every run
    checking the harness out: the copy of the tree it does not need)."""
    from fidelity.matrix.run import harness_tree

    def refused(*args: object) -> None:
        raise AssertionError("the harness was checked out for a table that never reads it")

    monkeypatch.setattr(harness_tree, "checked_out", refused)
    repo: Repo = make_repo("plain")
    write = "import pathlib, sys; pathlib.Path(sys.argv[1], 'o.txt').write_text('o')"
    text = (
        f'[[case]]\nid = "a"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(write)}, "{{out}}"]\n'
        'outputs = ["o.txt"]\n'
    )
    base = repo.commit({"cases/matrix.toml": text}, "plain")
    outcome = gate.run(repo.path, RunRequest(base, base))
    assert outcome.exit_code == 0, outcome.findings
    plain = table.parse(b'[[case]]\nid = "a"\nargv = ["x", "{out}"]\noutputs = ["o"]\n', "t")
    assert not plain.reads_harness()
    setup = table.parse(
        b'[matrix]\nsetup = [["pip", "install", "{harness}/req"]]\n'
        b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["o"]\n',
        "t",
    )
    assert setup.reads_harness() and setup.reads_harness(cases=False)
    in_case = table.parse(
        b'[[case]]\nid = "a"\nargv = ["x"]\ncwd = "{harness}"\noutputs = ["o"]\n', "t"
    )
    assert in_case.reads_harness() and not in_case.reads_harness(cases=False)


def test_a_run_judged_again_keeps_the_harness_tree(make_repo) -> None:
    from fidelity.matrix import rejudge

    repo: Repo = make_repo("h")
    shas = history(repo)
    outcome = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    again = rejudge.recompare(outcome.run_dir)
    assert again.harness.tree == outcome.harness.tree and again.harness.reads
    assert again.exit_code == 0


def test_a_held_prediction_over_the_harness_driver(make_repo) -> None:
    repo: Repo = make_repo("h")
    # stated with the refactor: a prediction committed after it would be late
    shas = history(repo, {"cases/refactor.toml": '[prediction]\nwhy = "same values"\nmoved = []\n'})
    outcome = gate.run(
        repo.path, RunRequest(shas["first"], shas["refactor"], expect="cases/refactor.toml")
    )
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD


FORGE = r"""
import importlib.util, os, pathlib, stat
from importlib._bootstrap_external import _code_to_timestamp_pyc
cases = pathlib.Path(os.environ["H"]) / "cases"
src = cases / "helper.py"
st = src.stat()  # a .pyc whose header matches the source: Python takes it as the module
code = compile("def scale(x):\n    return 0\n", str(src), "exec")
cases.chmod(cases.stat().st_mode | stat.S_IWUSR)
pyc = pathlib.Path(importlib.util.cache_from_source(str(src)))
pyc.parent.mkdir(exist_ok=True)
pyc.write_bytes(_code_to_timestamp_pyc(code, st.st_mtime, st.st_size))
"""
HELPED = """
import json, os, pathlib, sys
sys.path.insert(1, ".")  # after the script's folder ({harness}/cases): the side's lib
import helper, lib
out = pathlib.Path(sys.argv[1])
(out / "values.json").write_text(json.dumps([helper.scale(x) for x in range(3)]))
(out / "env.txt").write_text(os.environ.get("PYTHONDONTWRITEBYTECODE", "unset"))
"""


def helped(repo: Repo, forge: bool) -> tuple[str, str]:
    """A harness driver that imports a harness helper; the candidate changes the helper's
    input. With forge, each case first writes a .pyc that replaces the helper."""
    base = repo.commit({"lib.py": "K = 1\n"}, "first")
    first = f"{PY} {{harness}}/cases/forge.py && " if forge else ""
    argv = json.dumps(first + f"{PY} {{harness}}/cases/drive.py {{out}}")
    case = f"""[[case]]
id = "helped"
argv = {argv}
shell = true
env = {{ H = "{{harness}}" }}
outputs = ["values.json", "env.txt"]
timeout_s = 30
"""
    files = {
        "cases/matrix.toml": case,
        "cases/drive.py": HELPED,
        "cases/forge.py": FORGE,
        "cases/helper.py": "import lib\n\ndef scale(x):\n    return x * lib.K\n",
        "lib.py": "K = 3\n",
    }
    return base, repo.commit(files, "the harness; K moves")


def test_a_pyc_a_case_writes_into_the_harness_is_a_finding(make_repo) -> None:
    repo: Repo = make_repo("h")
    base, cand = helped(repo, forge=True)
    outcome = gate.run(repo.path, RunRequest(base, cand))
    assert [r.verdict.value for r in outcome.comparison.cases] == ["identical"]  # forged
    changed = [f.message for f in outcome.findings if f.code is Code.HARNESS_CHANGED]
    assert len(changed) == 1 and "cases/__pycache__/helper." in changed[0], outcome.findings
    assert outcome.exit_code == 3


def test_python_writes_no_bytecode_into_the_harness(make_repo, monkeypatch) -> None:
    """Even where the harness's read-only mode does not stop it (a root user), a case's
    Python writes no bytecode there: PYTHONDONTWRITEBYTECODE is set for the cases."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    repo: Repo = make_repo("h")
    base, cand = helped(repo, forge=False)
    outcome = gate.run(repo.path, RunRequest(base, cand))
    assert [r.verdict.value for r in outcome.comparison.cases] == ["moved"]
    assert outcome.findings == () and outcome.manifest["harness"]["changed"] == []
    env = outcome.run_dir / "candidate" / "cases" / "helped" / "out" / "env.txt"
    assert env.read_text() == "1"
    assert outcome.exit_code == 1


@pytest.mark.parametrize("target", ["ABSOLUTE", "../../outside.txt"])
def test_a_harness_link_out_of_the_harness_is_refused_before_anything_runs(
    make_repo, tmp_path: Path, target: str
) -> None:
    """A case could write through such a link into a file both sides read, unseen."""
    repo: Repo = make_repo("h")
    shas = history(repo)
    shared = tmp_path / "shared.txt"
    shared.write_text("as it was\n")
    link = str(shared) if target == "ABSOLUTE" else target
    (repo.path / "cases" / "state").symlink_to(link)
    (repo.path / "cases" / "alias.py").symlink_to("drive.py")  # inside: fine
    through = "import os, pathlib; pathlib.Path(os.environ['H'], 'cases', 'state').write_text('x')"
    extra = (
        '[[case]]\nid = "through"\n'
        f'argv = [{json.dumps(PY)}, "-c", {json.dumps(through)}]\n'
        'env = { H = "{harness}" }\noutputs = []\ncache_env = "C"\n'
    )
    repo.commit({"cases/matrix.toml": harness_table() + extra}, "a link out")
    with pytest.raises(UsageError) as caught:
        gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    said = str(caught.value)
    assert f"cases/state -> {link}" in said and "alias.py" not in said
    assert "harness_paths" in said
    assert shared.read_text() == "as it was\n"
    left_out = harness_table(extra_matrix='harness_paths = ["cases/drive.py"]')
    repo.commit({"cases/matrix.toml": left_out}, "the link left out of the harness")
    fine = gate.run(repo.path, RunRequest(shas["first"], shas["refactor"]))
    assert fine.exit_code == 0, fine.findings


@pytest.mark.parametrize(
    ("links", "out"),
    [
        ({"c/l": "../x"}, False),
        ({"c/l": "../../x"}, True),
        ({"c/l": "/etc/passwd"}, True),
        ({"d": "x/y", "c/l": "../d/../z"}, False),  # d/.. is x: inside
        ({"a": ".", "c/l": "../a/../x"}, True),  # lexically x; a is the top, a/.. above it
        ({"a": "b", "b": "a", "c/l": "../a/x"}, True),  # a loop vouches for nothing
        ({"d": "x/y/z", "c/l": "../d/../../../.."}, True),
    ],
)
def test_a_link_leads_out_as_the_kernel_resolves_it(links: dict[str, str], out: bool) -> None:
    from fidelity.matrix.run import harness_tree

    assert harness_tree.escapes("c/l", links) is out
