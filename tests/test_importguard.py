"""The editable-install trap, built for real: pip installs another checkout in editable mode.

Without the guard both sides import the other checkout, so a changed candidate compares
identical; the guard turns that false pass into a shadowed-import finding (exit 3).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from support import Repo, editable_venv

from fidelity.matrix import gate
from fidelity.matrix.run.importguard import classify
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code


def table(python: Path, name: str, argv: list[str], env: str = "") -> str:
    return "\n".join(
        [
            "[matrix]",
            f"python = {json.dumps(str(python))}",
            f'import_check = ["{name}"]',
            env,
            "[[case]]",
            'id = "value"',
            f"argv = {json.dumps([str(python), *argv])}",
            'outputs = ["v.txt"]',
        ]
    )


WRITE = "import {name}, sys; open(sys.argv[1] + '/v.txt', 'w').write({name}.VALUE)"


@pytest.fixture(scope="module")
def src_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return editable_venv(tmp_path_factory.mktemp("trap"), "pkgsrc", "src")


def test_src_layout_editable_install_shadows_both_sides(src_venv: Path, make_repo) -> None:
    repo: Repo = make_repo("user")
    argv = ["-c", WRITE.format(name="pkgsrc"), "{out}"]
    files = {"cases/matrix.toml": table(src_venv, "pkgsrc", argv)}
    base = repo.commit({**files, "src/pkgsrc/__init__.py": 'VALUE = "base"\n'})
    repo.commit({"src/pkgsrc/__init__.py": 'VALUE = "changed"\n'})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    # the trap: both sides ran the other checkout, so the change looks like nothing moved
    assert [str(r.verdict) for r in outcome.comparison.cases] == ["identical"]
    shadowed = [f for f in outcome.findings if f.code is Code.SHADOWED_IMPORT]
    assert {f.side for f in shadowed} == {"baseline", "candidate"}
    assert "other-pkgsrc" in shadowed[0].message
    assert outcome.exit_code == 3


def test_pythonpath_to_the_worktree_clears_the_src_layout_trap(src_venv: Path, make_repo) -> None:
    repo: Repo = make_repo("user")
    argv = ["-c", WRITE.format(name="pkgsrc"), "{out}"]
    env = '[matrix.env]\nPYTHONPATH = "{worktree}/src"'
    files = {"cases/matrix.toml": table(src_venv, "pkgsrc", argv, env)}
    base = repo.commit({**files, "src/pkgsrc/__init__.py": 'VALUE = "base"\n'})
    repo.commit({"src/pkgsrc/__init__.py": 'VALUE = "changed"\n'})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert outcome.findings == ()
    assert [str(r.verdict) for r in outcome.comparison.cases] == ["moved"]
    assert outcome.exit_code == 1


def test_flat_layout_finder_shadows_a_script_run_from_a_subdirectory(
    make_repo, tmp_path: Path
) -> None:
    python = editable_venv(tmp_path, "pkgflat", "flat")
    repo: Repo = make_repo("user")
    script = "import sys\n" + WRITE.format(name="pkgflat").replace("; ", "\n") + "\n"
    files = {
        "cases/matrix.toml": table(python, "pkgflat", ["tools/run.py", "{out}"]),
        "tools/run.py": script,
        "pkgflat/__init__.py": 'VALUE = "base"\n',
    }
    base = repo.commit(files)
    repo.commit({"pkgflat/__init__.py": 'VALUE = "changed"\n'})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD"))
    assert [str(r.verdict) for r in outcome.comparison.cases] == ["identical"]
    shadowed = [f for f in outcome.findings if f.code is Code.SHADOWED_IMPORT]
    assert len(shadowed) == 2
    assert "first sys.path entry" in shadowed[0].message
    assert outcome.exit_code == 3


def test_unresolvable_module_is_a_finding(make_repo) -> None:
    repo: Repo = make_repo("user")
    argv = ["-c", "import sys; open(sys.argv[1] + '/v.txt', 'w').write('x')", "{out}"]
    repo.commit({"cases/matrix.toml": table(Path(sys.executable), "no_such_pkg_zz", argv)})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    assert Code.UNRESOLVED_IMPORT in {f.code for f in outcome.findings}
    assert outcome.exit_code == 3


def test_classify_is_inside_only_when_every_place_is(tmp_path: Path) -> None:
    root = tmp_path / "wt"
    (root / "pkg").mkdir(parents=True)
    ok = {"origin": str(root / "pkg" / "__init__.py"), "locations": [], "error": ""}
    ns = {"origin": None, "locations": [str(root / "pkg"), "/elsewhere/pkg"], "error": ""}
    missing: dict[str, object] = {
        "origin": None,
        "locations": [],
        "error": "no module of that name",
    }
    assert classify("pkg", ok, ok, root.resolve()).inside
    assert classify("pkg", ok, missing, root.resolve()).inside
    assert not classify("pkg", ns, ns, root.resolve()).inside
    assert classify("pkg", missing, missing, root.resolve()).error


def test_a_probe_that_prints_first_still_resolves_and_garbage_is_a_finding(tmp_path: Path) -> None:
    from fidelity.matrix.run.importguard import resolve

    wt = tmp_path / "wt"
    (wt / "pkgp").mkdir(parents=True)
    (wt / "pkgp" / "__init__.py").write_text("")
    (wt / "sitecustomize.py").write_text("print('hello from sitecustomize')\n")
    env = {**os.environ, "PYTHONPATH": str(wt)}
    (found,) = resolve(sys.executable, ["pkgp"], wt, env)
    assert found.inside, found
    (wt / "fake-python").write_text("#!/bin/sh\necho not json\n")
    (wt / "fake-python").chmod(0o755)
    (broken,) = resolve(str(wt / "fake-python"), ["pkgp"], wt, env)
    assert not broken.inside and "printed no resolution" in broken.error
