"""CPU per mutation control (fidelity) against CPU per mutant (mutmut), same library, same run.

The library is toolz 1.2.0 (pure Python, 193 tests, parametrized and class-based), from its
sdist on PyPI, in a git repository of its own; one venv holds pytest, toolz itself (so its
version test passes) and mutmut 3.8.1, which is installed here for this benchmark only and is
no dependency of fidelity. fidelity runs ten one-edit controls whose expectations it writes
itself first (`controls suggest`, not timed), then judges them three ways, each timed as the
CPU (user + system) of the whole command and every process it waited for:

- default: the tests that ran the edited function, in a warm forked pytest;
- `--full`: every test in a fresh interpreter per control (what fidelity did before);
- one control alone, to split the fixed cost (table checks, the traced unmodified run,
  worktree, warm start) from the cost per control;
- all ten again on the same tree, reading the trace the runs before it kept (what an author
  pays for a second run); the three arms above pass `--fresh`, so each traces the tree.

mutmut runs every mutant of the two modules most controls edit (`dicttoolz.py`,
`itertoolz.py`) with one child (`--max-children 1`, like `--jobs 1`). Its figure per mutant
is its total CPU over its mutant count: its fixed cost (stats run, mutant generation) is
spread over hundreds of mutants, fidelity's over ten controls, so the marginal figure is the
like-for-like one.

The arms are interleaved: each round runs fidelity (all ten, one alone, `--full`, all ten
again) and mutmut (its `mutants/` folder removed first, so that it works afresh) back to
back, and each figure
is the median over the rounds (default 3), with the load average before every arm reported.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_controls_mutmut.py [--rounds N] [--keep DIR] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

SDIST = "toolz==1.2.0"
MUTMUT = "mutmut==3.8.1"
EDITS = [
    (
        "merge-drops",
        "toolz/dicttoolz.py",
        "    for d in dicts:\n        rv.update(d)",
        "    for d in dicts[:1]:\n        rv.update(d)",
    ),
    ("keyfilter-inverted", "toolz/dicttoolz.py", "if predicate(k):", "if not predicate(k):"),
    ("assoc-forgets", "toolz/dicttoolz.py", "    d2[key] = value\n", ""),
    (
        "get-in-never-raises",
        "toolz/dicttoolz.py",
        "        if no_default:\n            raise\n        return default",
        "        return default",
    ),
    (
        "unique-inverted",
        "toolz/itertoolz.py",
        "            if item not in seen:",
        "            if item in seen:",
    ),
    (
        "first-defaults",
        "toolz/itertoolz.py",
        "return next(iter(seq))",
        "return next(iter(seq), None)",
    ),
    ("nth-off-by-one", "toolz/itertoolz.py", "        return seq[n]", "        return seq[n - 1]"),
    ("frequencies-double", "toolz/itertoolz.py", "        d[item] += 1", "        d[item] += 2"),
    (
        "count-lazy-plus-one",
        "toolz/itertoolz.py",
        "    return sum(1 for i in seq)",
        "    return sum(1 for i in seq) + 1",
    ),
    ("do-skips-func", "toolz/functoolz.py", "    func(x)\n    return x\n", "    return x\n"),
]
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b.invalid",
}


def sh(
    argv: list[str], cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"{argv} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def cpu_of(argv: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(CPU seconds of the command and everything it waited for, wall seconds, result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = sh(argv, cwd, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, result


def prepare(work: Path) -> tuple[Path, Path]:
    venv = work / "venv"
    sh([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    sdists = work / "sdist"
    sh(
        [
            str(python),
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(sdists),
            SDIST,
        ]
    )
    archive = next(sdists.glob("toolz-*.tar.gz"))
    sh([str(python), "-m", "pip", "install", "-q", "pytest", MUTMUT, str(archive)])
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    repo = work / "toolz-1.2.0"
    shutil.rmtree(repo / "toolz.egg-info", ignore_errors=True)
    sh(["git", "init", "-q"], repo)
    (repo / ".gitignore").write_text("__pycache__/\n.fidelity/\nmutants/\n")
    command = [str(python), "-m", "pytest", "-q", "-p", "no:randomly"]
    (repo / "cases").mkdir()
    table = repo / "cases" / "controls.toml"
    table.write_text(f"[controls]\ncommand = {json.dumps(command)}\n\n")
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-q", "-m", "toolz 1.2.0 sdist"], repo)
    return repo, python


def write_controls(repo: Path) -> None:
    """Each control's expectation, observed by fidelity itself (not timed)."""
    entries = []
    for cid, file, find, replace in EDITS:
        out = sh(
            [
                "fidelity",
                "-q",
                "controls",
                "suggest",
                "--file",
                file,
                "--find",
                find,
                "--replace",
                replace,
                "--id",
                cid,
                "--why",
                f"{cid} must be caught",
            ],
            repo,
        )
        entries.append(out.stdout)
    table = repo / "cases" / "controls.toml"
    table.write_text(table.read_text() + "\n".join(entries))
    sh(["git", "commit", "-q", "-am", "ten controls"], repo)


def mutmut(repo: Path, python: Path) -> tuple[float, float, int]:
    """One full `mutmut run` from scratch (its `mutants/` folder removed first)."""
    shutil.rmtree(repo / "mutants", ignore_errors=True)
    cpu, wall, result = cpu_of([str(python.parent / "mutmut"), "run", "--max-children", "1"], repo)
    results = sh([str(python.parent / "mutmut"), "results", "--all", "true"], repo, check=False)
    mutants = sum(1 for line in results.stdout.splitlines() if ": " in line)
    if result.returncode != 0 or not mutants:
        raise SystemExit(f"mutmut failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return cpu, wall, mutants


def configure_mutmut(repo: Path) -> None:
    config = (
        "\n[mutmut]\nsource_paths = toolz\n"
        "only_mutate = toolz/dicttoolz.py\n    toolz/itertoolz.py\n"
        "pytest_add_cli_args_test_selection = toolz/tests\n"
    )
    setup = repo / "setup.cfg"
    setup.write_text(setup.read_text() + config)


ARMS = {
    "selected": ["--fresh"],
    "one": ["--only", EDITS[0][0], "--fresh"],
    "full": ["--full"],
    "again": [],
}


def fidelity(repo: Path, extra: list[str]) -> tuple[float, float]:
    cpu, wall, result = cpu_of(["fidelity", "-q", "controls", "run", "--jobs", "1", *extra], repo)
    if result.returncode != 0:
        tail = result.stdout[-3000:]
        raise SystemExit(f"fidelity controls run {extra} exited {result.returncode}:\n{tail}")
    return cpu, wall


def rounds(repo: Path, python: Path, n: int) -> tuple[dict[str, list[float]], int, list[float]]:
    """CPU per arm per round, mutmut's mutant count, and the 1-minute load before each arm."""
    cpu: dict[str, list[float]] = {name: [] for name in [*ARMS, "mutmut"]}
    loads, mutants = [], 0
    for _ in range(n):
        for name, extra in ARMS.items():
            loads.append(os.getloadavg()[0])
            cpu[name].append(fidelity(repo, extra)[0])
        loads.append(os.getloadavg()[0])
        m_cpu, _, mutants = mutmut(repo, python)
        cpu["mutmut"].append(m_cpu)
    return cpu, mutants, loads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo, python = prepare(work)
        write_controls(repo)
        configure_mutmut(repo)
        commit = sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()
        archive = next((work / "sdist").glob("toolz-*.tar.gz"))
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        cpu, mutants, loads = rounds(repo, python, args.rounds)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    med = {name: statistics.median(values) for name, values in cpu.items()}
    n = len(EDITS)
    per_selected = med["selected"] / n
    marginal = (med["selected"] - med["one"]) / (n - 1)
    per_full = med["full"] / n
    per_again = med["again"] / n
    per_mutant = med["mutmut"] / mutants
    lines = [
        f"toolz 1.2.0 (sdist sha256 {digest[:16]}, committed as {commit[:10]}), {n} controls, "
        f"jobs 1; mutmut 3.8.1 with one child; CPU = user + system of a command and its "
        f"children; {args.rounds} interleaved rounds, medians; load before each arm "
        f"{min(loads):.2f}-{max(loads):.2f}",
        *(f"  {name}: " + ", ".join(f"{v:.2f}" for v in values) for name, values in cpu.items()),
        f"fidelity default (selected, warm): {med['selected']:.2f} CPU-s, "
        f"{per_selected:.3f} per control, {marginal:.3f} marginal",
        f"fidelity --full (every test, cold): {med['full']:.2f} CPU-s, {per_full:.3f} per control",
        f"fidelity one control alone: {med['one']:.2f} CPU-s (fixed cost + one control)",
        f"fidelity again, the kept trace read: {med['again']:.2f} CPU-s, {per_again:.3f} "
        f"per control, {per_again / per_mutant:.2f}x mutmut's per mutant all-in",
        f"mutmut 3.8.1: {med['mutmut']:.2f} CPU-s for {mutants} mutants, "
        f"{per_mutant:.3f} per mutant",
        f"ratio per control / per mutant: {per_selected / per_mutant:.2f} all-in (goal 2), "
        f"{marginal / per_mutant:.2f} marginal (goal 1.5); --full: {per_full / per_mutant:.2f}",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
