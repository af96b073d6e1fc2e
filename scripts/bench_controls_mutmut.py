"""CPU per mutation control (fidelity) against CPU per mutant (mutmut), same library, same run.

`--library` picks the library (`LIBRARIES`: what differs per library is in one `Library`
each), from its sdist on PyPI (its sha256 printed), in a git repository of its own; one venv
holds pytest, what the library's tests import and mutmut 3.8.1, which is installed here for
this benchmark only and is no dependency of fidelity.

- toolz 1.2.0 (the default, so older rows keep their meaning): pure Python, 193 tests,
  parametrized and class-based; toolz itself is installed into the venv (its version test
  reads the installed metadata).
- humanize 4.17.0 (issue 38's library): a src layout (`src/humanize`, `tests/`), its
  pyproject's pytest settings kept (`--doctest-modules`, `testpaths = src tests`, pytest>=9),
  893 tests with the docstrings' examples; freezegun installed for them. humanize itself is
  not installed: the controls table's `env = { PYTHONPATH = "{worktree}/src" }` makes each
  control's tests import its own tree (no test reads installed metadata).
  `tests/test_benchmarks.py` (it needs pytest-codspeed) is left out of both arms alike:
  `--ignore=tests/test_benchmarks.py` in fidelity's command and in mutmut's pytest args.
  mutmut reads `[tool.mutmut]` from pyproject.toml (before setup.cfg; keys from mutmut
  3.8.1's `mutmut/configuration.py`): `source_paths = ["src"]` (it copies `src/` to
  `mutants/src` and puts that first on sys.path), `only_mutate` the two modules, the same
  tests (`src tests`), `also_copy = ["scripts"]` (a translation test runs
  `scripts/update-translations.sh`), and two settings without which its run is wrong, not
  slower: `process_isolation = "forkserver"` (by default it forks every mutant from the
  process that ran the whole suite for its stats, and `test_naturalsize` negates its own
  parameter lists in place, so the clean run fails), and pytest's
  `disable_test_id_escaping_and_forfeit_all_rights_to_community_support` (it passes the test
  ids back to pytest, which finds no escaped id such as `test_metric[[0.00012]-120 \\u03bc]`;
  every mutant of `metric` and `scientific` was then reported `timeout` after 0.2 s).
  Its doctests run in `mutants/` too, where every mutant's copy of a function keeps its
  docstring: mutmut collects those copies' examples as tests of their own.

fidelity runs ten one-edit controls (realistic defects) whose expectations it writes itself
first (`controls suggest`, not timed; the script stops when no test catches an edit, since a
residue entry would pass, and when any `controls run` exits non-zero), then judges them
three ways, each timed as the CPU (user + system) of the whole command and every process it
waited for:

- default: the tests that ran the edited function, in a warm forked pytest;
- `--full`: every test in a fresh interpreter per control (what fidelity did before);
- one control alone, to split the fixed cost (table checks, the traced unmodified run,
  worktree, warm start) from the cost per control;
- all ten again on the same tree, reading the trace the runs before it kept (what an author
  pays for a second run); the three arms above pass `--fresh`, so each traces the tree.

mutmut runs every mutant of the two modules most controls edit (toolz: `dicttoolz.py`,
`itertoolz.py`; humanize: `number.py`, `time.py`) with one child (`--max-children 1`, like
`--jobs 1`). Its figure per mutant is its total CPU over its mutant count: its fixed cost
(stats run, mutant generation) is spread over hundreds of mutants, fidelity's over ten
controls, so the marginal figure is the like-for-like one.

The arms are interleaved: each round runs fidelity (all ten, one alone, `--full`, all ten
again) and mutmut (its `mutants/` folder removed first, so that it works afresh) back to
back, and each figure
is the median over the rounds (default 3), with the load average before every arm reported.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_controls_mutmut.py [--library toolz|humanize] [--rounds N]
       [--keep DIR] [--cores 1,2,all]
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
from dataclasses import dataclass
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

MUTMUT = "mutmut==3.8.1"


@dataclass(frozen=True, slots=True)
class Library:
    """What differs per library; everything else in the script is the same for each."""

    name: str  # the sdist's name, its archive's prefix
    sdist: str  # the pip requirement it is downloaded by
    folder: str  # the folder it unpacks to
    title: str  # how the printed figures name it
    edits: list[tuple[str, str, str, str]]  # (id, file, find, replace): the ten controls
    command: list[str]  # the test command after `python -m pytest`, both arms' tests
    packages: list[str]  # what the venv needs besides mutmut (and the library, if installed)
    install_itself: bool  # into the venv (toolz's version test reads its installed metadata)
    env: str  # the controls table's `env` line, or ""
    mutmut_file: str  # where mutmut 3.8.1 reads its config (pyproject.toml before setup.cfg)
    mutmut_config: str  # appended to it
    drop: str = ""  # a folder of the sdist not to commit (toolz's egg-info)


TOOLZ = Library(
    name="toolz",
    sdist="toolz==1.2.0",
    folder="toolz-1.2.0",
    title="toolz 1.2.0",
    edits=[
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
        (  # was first-defaults, `next(iter(seq), None)`, which no toolz test catches: it was
            # counted as caught until the script checked (rows before bf8d7a5 hold it)
            "second-skips-nothing",
            "toolz/itertoolz.py",
            "    seq = iter(seq)\n    next(seq)\n",
            "    seq = iter(seq)\n",
        ),
        (
            "nth-off-by-one",
            "toolz/itertoolz.py",
            "        return seq[n]",
            "        return seq[n - 1]",
        ),
        (
            "frequencies-double",
            "toolz/itertoolz.py",
            "        d[item] += 1",
            "        d[item] += 2",
        ),
        (
            "count-lazy-plus-one",
            "toolz/itertoolz.py",
            "    return sum(1 for i in seq)",
            "    return sum(1 for i in seq) + 1",
        ),
        ("do-skips-func", "toolz/functoolz.py", "    func(x)\n    return x\n", "    return x\n"),
    ],
    command=["-q", "-p", "no:randomly"],
    packages=["pytest"],
    install_itself=True,
    env="",
    mutmut_file="setup.cfg",
    mutmut_config=(
        "\n[mutmut]\nsource_paths = toolz\n"
        "only_mutate = toolz/dicttoolz.py\n    toolz/itertoolz.py\n"
        "pytest_add_cli_args_test_selection = toolz/tests\n"
    ),
    drop="toolz.egg-info",
)
NUMBER, TIME = "src/humanize/number.py", "src/humanize/time.py"
HUMANIZE = Library(
    name="humanize",
    sdist="humanize==4.17.0",
    folder="humanize-4.17.0",
    title="humanize 4.17.0",
    edits=[
        ("ordinal-teens", NUMBER, "value % 100 in (11, 12, 13)", "value % 100 in (11, 12)"),
        (
            "intcomma-swaps-separators",
            NUMBER,
            'str.maketrans(",.", thousands_sep + decimal_sep)',
            'str.maketrans(",.", decimal_sep + thousands_sep)',
        ),
        ("intword-drops-sign", NUMBER, 'negative_prefix = "-"', 'negative_prefix = ""'),
        ("apnumber-stops-at-eight", NUMBER, "if not 0 <= value < 10:", "if not 0 <= value < 9:"),
        (
            "scientific-drops-exponent-sign",
            NUMBER,
            "str(int(part2)).translate",
            "str(abs(int(part2))).translate",
        ),
        ("naturaldelta-sixty-seconds", TIME, "if delta.seconds < 60:", "if delta.seconds <= 60:"),
        (
            "naturaldelta-hours-in-minutes",
            TIME,
            "hours = round(delta.seconds / 3600)",
            "hours = round(delta.seconds / 60)",
        ),
        (
            "naturaltime-future-swapped",
            TIME,
            'ago = _("%s from now") if future else _("%s ago")',
            'ago = _("%s ago") if future else _("%s from now")',
        ),
        (
            "precisedelta-late-minute-carry",
            TIME,
            "if secs >= 60 and MINUTES not in suppress_set:",
            "if secs > 60 and MINUTES not in suppress_set:",
        ),
        (
            "naturalsize-binary-in-decimal",
            "src/humanize/filesize.py",
            "base = 1024 if (gnu or binary) else 1000",
            "base = 1024 if gnu else 1000",
        ),
    ],
    command=["-q", "-p", "no:randomly", "--ignore=tests/test_benchmarks.py"],
    packages=["pytest>=9", "freezegun"],
    install_itself=False,
    env='env = { PYTHONPATH = "{worktree}/src" }\n',
    mutmut_file="pyproject.toml",
    mutmut_config=(
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f'only_mutate = ["{NUMBER}", "{TIME}"]\n'
        'also_copy = ["scripts"]\n'
        'process_isolation = "forkserver"\n'
        'pytest_add_cli_args = ["--ignore=tests/test_benchmarks.py", "-o", '
        '"disable_test_id_escaping_and_forfeit_all_rights_to_community_support=true"]\n'
        'pytest_add_cli_args_test_selection = ["src", "tests"]\n'
    ),
)
LIBRARIES = {library.name: library for library in (TOOLZ, HUMANIZE)}
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


def prepare(work: Path, lib: Library) -> tuple[Path, Path]:
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
            lib.sdist,
        ]
    )
    archive = next(sdists.glob(f"{lib.name}-*.tar.gz"))
    itself = [str(archive)] if lib.install_itself else []
    sh([str(python), "-m", "pip", "install", "-q", *lib.packages, MUTMUT, *itself])
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    repo = work / lib.folder
    if lib.drop:
        shutil.rmtree(repo / lib.drop, ignore_errors=True)
    sh(["git", "init", "-q"], repo)
    (repo / ".gitignore").write_text("__pycache__/\n.fidelity/\nmutants/\n")
    command = [str(python), "-m", "pytest", *lib.command]
    (repo / "cases").mkdir()
    table = repo / "cases" / "controls.toml"
    table.write_text(f"[controls]\ncommand = {json.dumps(command)}\n{lib.env}\n")
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-q", "-m", f"{lib.title} sdist"], repo)
    return repo, python


def write_controls(repo: Path, lib: Library) -> None:
    """Each control's expectation, observed by fidelity itself (not timed)."""
    entries = []
    for cid, file, find, replace in lib.edits:
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
        if "caught_by = [" not in out.stdout:  # a residue entry would pass `controls run`
            raise SystemExit(f"{cid}: no test catches this edit; choose one a test catches")
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


def configure_mutmut(repo: Path, lib: Library) -> None:
    setup = repo / lib.mutmut_file
    setup.write_text(setup.read_text() + lib.mutmut_config)


def arms(lib: Library) -> dict[str, list[str]]:
    """fidelity's four commands' extra arguments, by arm, in the order they run: `again`
    right after `selected`, whose trace it reads (after `one`, it found only the trace of
    one control's files, traced again, and cost what `selected` did)."""
    return {
        "selected": ["--fresh"],
        "again": [],
        "one": ["--only", lib.edits[0][0], "--fresh"],
        "full": ["--full"],
    }


def fidelity(repo: Path, extra: list[str]) -> tuple[float, float]:
    cpu, wall, result = cpu_of(["fidelity", "-q", "controls", "run", "--jobs", "1", *extra], repo)
    if result.returncode != 0:
        tail = result.stdout[-3000:]
        raise SystemExit(f"fidelity controls run {extra} exited {result.returncode}:\n{tail}")
    return cpu, wall


def rounds(
    repo: Path, python: Path, n: int, lib: Library
) -> tuple[dict[str, list[float]], int, list[float]]:
    """CPU per arm per round, mutmut's mutant count, and the 1-minute load before each arm."""
    cpu: dict[str, list[float]] = {name: [] for name in [*arms(lib), "mutmut"]}
    loads, mutants = [], 0
    for _ in range(n):
        for name, extra in arms(lib).items():
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
    parser.add_argument(
        "--library", choices=sorted(LIBRARIES), default="toolz", help="(default toolz)"
    )
    args = parser.parse_args()
    lib = LIBRARIES[args.library]
    if benchenv.axis(args):
        return 0  # it ran once per core count, under taskset
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo, python = prepare(work, lib)
        write_controls(repo, lib)
        configure_mutmut(repo, lib)
        commit = sh(["git", "rev-parse", "HEAD"], repo).stdout.strip()
        archive = next((work / "sdist").glob(f"{lib.name}-*.tar.gz"))
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        cpu, mutants, loads = rounds(repo, python, args.rounds, lib)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    med = {name: statistics.median(values) for name, values in cpu.items()}
    n = len(lib.edits)
    per_selected = med["selected"] / n
    marginal = (med["selected"] - med["one"]) / (n - 1)
    per_full = med["full"] / n
    per_again = med["again"] / n
    per_mutant = med["mutmut"] / mutants
    lines = [
        f"{lib.title} (sdist sha256 {digest[:16]}, committed as {commit[:10]}), {n} controls, "
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
