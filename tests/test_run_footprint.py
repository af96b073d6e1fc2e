"""What one `fidelity run` leaves and starts besides its cases: the git processes it needs
and no more, and per case only the folders and files its evidence needs.

The git processes are counted through a `git` first on PATH that logs each call and runs
the real one (fidelity's git runner keeps PATH and drops GIT_TRACE, so tracing cannot
count them). A call that comes back makes the count go over the budget, red.
"""

from __future__ import annotations

import json
from pathlib import Path

from support import PY, Repo

from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest

# `gate.run` of two cases: the toplevel; 3 to snapshot the checkout before (its git
# folder, one porcelain-v2 status for HEAD, its branch, the index and the files, the refs)
# and 2 after (the git folder is the one read before); 3 for the harness (HEAD, the
# committed table, its tree: the dirty paths are the snapshot's); per side 7: worktree add,
# refresh and status before setup (with no setup, also the tree's state before the cases),
# refresh and status after the cases, worktree remove and the listing that proves it gone.
# 23 in all (43 before issue 39: HEAD, its branch and the index each read by its own
# process, the tree's state read again before the cases, the dirty paths read twice; 59
# before issue 24: each file read twice, both tables read again, HEAD's branch, prunes)
GIT_BUDGET = 23


def table(cases: dict[str, str]) -> str:
    """Cases that write out.txt, each with its own extra keys (TOML lines)."""
    lines = ['[matrix]\nname = "t"\n']
    for case_id, extra in cases.items():
        lines += [
            f'[[case]]\nid = "{case_id}"\noutputs = ["out.txt"]\n{extra}\n'
            f"argv = [\"{PY}\", \"-c\", \"import sys; open(sys.argv[1] + '/out.txt', 'w').write('x')\", "
            '"{out}"]\n'
        ]
    return "\n".join(lines)


def test_a_run_starts_no_more_git_processes_than_its_budget(
    make_repo, git_log: Path, tmp_path: Path
) -> None:
    repo: Repo = make_repo("r")
    repo.commit({"cases/matrix.toml": table({"a": "", "b": ""})})
    git_log.write_text("")  # the repository's own making is not the run's
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "run"))
    assert outcome.exit_code == 0
    calls = git_log.read_text().splitlines()
    assert len(calls) <= GIT_BUDGET, "\n".join(calls)
    assert len(calls) == GIT_BUDGET  # the wrapper saw them all: lower it when a call goes


def test_the_budget_is_red_when_a_call_comes_back(make_repo, git_log: Path, tmp_path: Path) -> None:
    """The counting itself: two runs' calls exceed one run's budget."""
    repo: Repo = make_repo("r")
    repo.commit({"cases/matrix.toml": table({"a": ""})})
    git_log.write_text("")
    for name in ("one", "two"):
        gate.run(repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / name))
    assert len(git_log.read_text().splitlines()) > GIT_BUDGET


def test_a_case_gets_a_cache_folder_only_when_it_names_one(make_repo, tmp_path: Path) -> None:
    repo: Repo = make_repo("r")
    cases = {
        "plain": "",
        "cache-env": 'cache_env = "CACHE"',
        "named": 'env = { C = "{cache}" }',
        "escaped": 'env = { C = "{{cache}}" }',
    }
    repo.commit({"cases/matrix.toml": table(cases)})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "run"))
    assert outcome.exit_code == 0
    for role in ("baseline", "candidate"):
        made = {c: (tmp_path / "run" / role / "cases" / c / "cache").is_dir() for c in cases}
        assert made == {"plain": False, "cache-env": True, "named": True, "escaped": False}
        for case_id in cases:
            ev = outcome.baseline.cases[case_id]
            assert dict(ev.cache) == {} and ev.cache_preexisting == ()


def test_a_case_without_a_cache_folder_still_has_one_written_later_caught(
    make_repo, tmp_path: Path
) -> None:
    """No folder made is no blind spot: a cache folder that appears after the run is a
    file added where it would be evidence."""
    from fidelity.matrix.run import rundir
    from fidelity.matrix.run.recheck import altered, declared_outputs

    repo: Repo = make_repo("r")
    repo.commit({"cases/matrix.toml": table({"plain": ""})})
    run = tmp_path / "run"
    gate.run(repo.path, RunRequest("HEAD", "HEAD", out=run))
    planted = run / "candidate" / "cases" / "plain" / "cache"
    planted.mkdir()
    (planted / "x.bin").write_bytes(b"x")
    record = rundir.read(run)
    found = altered(run, record.candidate, declared_outputs(record.raw))
    assert len(found) == 1 and "cache/x.bin added" in found[0].message


def test_a_case_leaves_its_evidence_as_a_line_and_run_json_is_compact(
    make_repo, tmp_path: Path
) -> None:
    repo: Repo = make_repo("r")
    repo.commit({"cases/matrix.toml": table({"a": "", "b": ""})})
    run = tmp_path / "run"
    gate.run(repo.path, RunRequest("HEAD", "HEAD", out=run))
    text = (run / "run.json").read_text()
    assert text == json.dumps(json.loads(text), separators=(",", ":")) + "\n"
    for side in ("baseline", "candidate"):
        lines = (run / side / "evidence.jsonl").read_text().split()
        assert sorted(json.loads(line)["case_id"] for line in lines) == ["a", "b"]
        for case_id in ("a", "b"):
            kept = sorted(p.name for p in (run / side / "cases" / case_id).iterdir())
            assert kept == ["out"]  # silent cases: no empty logs


def test_a_failed_case_keeps_its_logs_even_empty(make_repo, tmp_path: Path) -> None:
    """A failure's message names its stderr.log: it is there, written or not."""
    repo: Repo = make_repo("r")
    fail = (
        f'[[case]]\nid = "f"\noutputs = ["out.txt"]\nargv = ["{PY}", "-c", "raise SystemExit(3)"]\n'
    )
    talk = (
        f'[[case]]\nid = "t"\noutputs = ["out.txt"]\n'
        f'argv = ["{PY}", "-c", "import sys; print(1); sys.exit(2)"]\n'
    )
    repo.commit({"cases/matrix.toml": fail + talk})
    run = tmp_path / "run"
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD", out=run))
    assert outcome.exit_code != 0
    case = run / "baseline" / "cases"
    assert (case / "f" / "stderr.log").read_text() == "" == (case / "f" / "stdout.log").read_text()
    assert (case / "t" / "stdout.log").read_text() == "1\n"


# what a quiet run of text cases must not import: the heavy dependencies, and what they or
# the standard library's conveniences would bring before the first case (issue 39: rich
# ~40, importlib.metadata ~30, concurrent.futures' logging ~10, xml ~8 CPU-ms)
NOT_IMPORTED = (
    "rich",
    "numpy",
    "pandas",
    "jsonschema",
    "markdown_it",
    "importlib.metadata",
    "importlib.resources",
    "email",
    "concurrent.futures",
    "logging",
    "xml.etree.ElementTree",
    "socket",
    "zipfile",
)
PROBE = """
import json, sys
from fidelity.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print()
print(code, json.dumps(sorted(sys.modules)))
"""


def installed_copy(where: Path) -> Path:
    """fidelity and checkers copied into a folder beside a dist-info, as pip installs them."""
    import shutil

    root = Path(__file__).resolve().parents[1]
    site = where / "site"
    for package in ("fidelity", "checkers"):
        shutil.copytree(
            root / package, site / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    info = site / "fidelity_gate-9.9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: fidelity-gate\nVersion: 9.9.9\n")
    return site


def run_imports(site: Path, repo: Path, out: Path) -> list[str]:
    """The modules of NOT_IMPORTED a quiet run of repo's cases imported."""
    import subprocess

    done = subprocess.run(
        [PY, "-c", PROBE, "-q", "run", "--baseline", "HEAD", "--out", str(out)],
        cwd=repo,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    *printed, last = done.stdout.splitlines()
    code, loaded = last.split(" ", 1)
    assert code == "0", done.stdout + done.stderr
    assert json.loads((out / "run.json").read_text())["tool"]["version"] == "9.9.9"
    return [m for m in NOT_IMPORTED if m in json.loads(loaded)]


def text_repo(make_repo) -> Repo:
    repo: Repo = make_repo("r")
    text = 'compare = { "out.txt" = { kind = "text" } }'
    repo.commit({"cases/matrix.toml": table({"a": text, "b": text})})
    return repo


def test_a_quiet_run_of_text_cases_imports_none_of_the_heavy_modules(
    make_repo, tmp_path: Path
) -> None:
    site = installed_copy(tmp_path)
    assert run_imports(site, text_repo(make_repo).path, tmp_path / "run") == []


def test_the_import_check_is_red_when_one_comes_back(make_repo, tmp_path: Path) -> None:
    """A module-level `import logging` planted in the runner (as concurrent.futures was)."""
    site = installed_copy(tmp_path)
    runner = site / "fidelity" / "matrix" / "run" / "runner.py"
    anchor = "from __future__ import annotations\n"
    runner.write_text(runner.read_text().replace(anchor, anchor + "import logging  # noqa\n", 1))
    assert run_imports(site, text_repo(make_repo).path, tmp_path / "run") == ["logging"]
