"""The CSV comparator workload against a naive script, through the installed CLI.

200 cases each copy a ~100 KB CSV (1,950 rows x 4 columns: an id and three numbers) into
{out}; the candidate's third column differs in every row by a relative 1e-12, inside the
table's `rtol = 1e-9`. Two pairs of arms, interleaved in every round (the order flips each
round), median of the rounds:

- `fidelity run --jobs 2` against a naive script doing the same case runs (a detached
  worktree per side, one `cp` per case and side, serially) and comparing both sides'
  outputs with Python's `csv` and `math.isclose`;
- `fidelity compare RUN_DIR` re-judging the stored run against the naive compare of the
  same 200 pairs, per pair.

`--fidelity NAME=PATH` (repeatable) measures several installs in the same rounds, e.g. this
branch against main, each a clean non-editable install in its own venv; every arm runs
once a round, the order reversed every other round.

Figures: CPU of the whole process tree (user + system of the arm and every descendant it
waited for, from wait4) and wall; the 1-minute load average before and after each round.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters and numpy's version,
os.cpu_count() and the cores the run may use.
Usage: python scripts/bench_compare.py [--cases 200] [--rounds 5] [--fidelity NAME=PATH ...]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

ROWS = 1_950
RTOL = 1e-9

NAIVE_RUN = r"""
import csv, math, subprocess, sys
from pathlib import Path
repo, base, cand = sys.argv[1:4]
cases, work, rtol = int(sys.argv[4]), Path(sys.argv[5]), float(sys.argv[6])
sides = {}
for role, rev in (("baseline", base), ("candidate", cand)):
    wt = work / role
    add = ["git", "-C", repo, "worktree", "add", "-q", "--detach", str(wt), rev]
    subprocess.run(add, check=True)
    for i in range(cases):
        out = work / "out" / role / f"c{i}"
        out.mkdir(parents=True)
        subprocess.run(["cp", str(wt / "data" / f"c{i}.csv"), str(out / "m.csv")], check=True)
    sides[role] = wt
moved = 0
for i in range(cases):
    with open(work / "out" / "baseline" / f"c{i}" / "m.csv", newline="") as fb, open(
        work / "out" / "candidate" / f"c{i}" / "m.csv", newline=""
    ) as fc:
        for rb, rc in zip(csv.reader(fb), csv.reader(fc)):
            for x, y in zip(rb, rc):
                if x != y:
                    try:
                        close = math.isclose(float(x), float(y), rel_tol=rtol)
                    except ValueError:
                        close = False
                    moved += not close
for wt in sides.values():
    subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", str(wt)], check=True)
print(moved)
"""

NAIVE_COMPARE = r"""
import csv, math, sys
from pathlib import Path
run, cases, rtol = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
moved = 0
for i in range(cases):
    with open(run / "baseline" / "cases" / f"c{i}" / "out" / "m.csv", newline="") as fb, open(
        run / "candidate" / "cases" / f"c{i}" / "out" / "m.csv", newline=""
    ) as fc:
        for rb, rc in zip(csv.reader(fb), csv.reader(fc)):
            for x, y in zip(rb, rc):
                if x != y:
                    try:
                        close = math.isclose(float(x), float(y), rel_tol=rtol)
                    except ValueError:
                        close = False
                    moved += not close
print(moved)
"""


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def write_data(where: Path, cases: int) -> None:
    """Each case's CSV on both sides: the candidate's column c moved by a relative 1e-12."""
    rng = random.Random(24)
    for role in ("base", "cand"):
        (where / role).mkdir(parents=True)
    for i in range(cases):
        rows = [
            (rng.uniform(0, 1000), rng.uniform(0, 1000), rng.uniform(1, 1000)) for _ in range(ROWS)
        ]
        for role, scale in (("base", 1.0), ("cand", 1.0 + 1e-12)):
            lines = [
                f"{n},{a:.15g},{b:.15g},{c * scale:.15g}\n" for n, (a, b, c) in enumerate(rows)
            ]
            (where / role / f"c{i}.csv").write_text("id,a,b,c\n" + "".join(lines))


def build(tmp: Path, cases: int) -> Path:
    """A repository whose `data` link points at the baseline's files, then the candidate's."""
    write_data(tmp / "data", cases)
    repo = tmp / "repo"
    (repo / "cases").mkdir(parents=True)
    table = [
        f'[[case]]\nid = "c{i}"\nargv = ["cp", "{{worktree}}/data/c{i}.csv", "{{out}}/m.csv"]\n'
        'outputs = ["m.csv"]\n'
        for i in range(cases)
    ]
    table.append(f'[matrix.compare."m.csv"]\nkind = "csv"\nkey = ["id"]\nrtol = {RTOL}\n')
    (repo / "cases" / "matrix.toml").write_text("\n".join(table))
    git(repo, "init", "-q", "-b", "main")
    (repo / "data").symlink_to(tmp / "data" / "base")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "data").unlink()
    (repo / "data").symlink_to(tmp / "data" / "cand")
    git(repo, "commit", "-qam", "cand")
    return repo


def measured(argv: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """CPU (user + system of the tree it waited for), wall, exit code and stdout of argv."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode().strip()
    return usage.ru_utime + usage.ru_stime, wall, os.waitstatus_to_exitcode(status), text


def one_round(
    repo: Path, tmp: Path, cases: int, n: int, installs: dict[str, str]
) -> dict[str, tuple[float, float]]:
    scripts = tmp / "scripts"
    runs = {name: tmp / f"run-{name}-{n}" for name in installs}
    arms: dict[str, list[str]] = {
        f"{name}-run": [exe, "-q", "run", "--baseline", "HEAD~1", "--jobs", "2"]
        + ["--out", str(runs[name])]
        for name, exe in installs.items()
    }
    arms["naive-run"] = [sys.executable, str(scripts / "run.py"), str(repo), "HEAD~1", "HEAD"]
    arms["naive-run"] += [str(cases), str(tmp / f"naive-{n}"), str(RTOL)]
    found = {}
    for arm in list(arms) if n % 2 == 0 else list(reversed(arms)):
        cpu, wall, code, _ = measured(arms[arm], repo)
        if code != 0:
            sys.exit(f"{arm} exited {code}: {' '.join(arms[arm])}")
        found[arm] = (cpu, wall)
    first = next(iter(runs.values()))
    compares = {
        f"{name}-compare": [exe, "-q", "compare", str(runs[name])] for name, exe in installs.items()
    }
    compares["naive-compare"] = [sys.executable, str(scripts / "compare.py"), str(first)]
    compares["naive-compare"] += [str(cases), str(RTOL)]
    for arm in list(compares) if n % 2 else list(reversed(compares)):
        cpu, wall, code, _ = measured(compares[arm], repo)
        if code != 0:
            sys.exit(f"{arm} exited {code}")
        found[arm] = (cpu, wall)
    for run_dir in runs.values():
        shutil.rmtree(run_dir, ignore_errors=True)
    shutil.rmtree(tmp / f"naive-{n}", ignore_errors=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fidelity", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    if benchenv.axis(args, numpy=True):
        return  # it ran once per core count, under taskset
    installs = dict(a.split("=", 1) for a in args.fidelity) or {"fidelity": "fidelity"}
    missing = [exe for exe in installs.values() if shutil.which(exe) is None]
    if missing:
        sys.exit(
            f"{missing[0]} not found: install fidelity first (pip install .); "
            "this measures the installed CLI"
        )
    tmp = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    try:
        (tmp / "scripts").mkdir()
        (tmp / "scripts" / "run.py").write_text(NAIVE_RUN)
        (tmp / "scripts" / "compare.py").write_text(NAIVE_COMPARE)
        repo = build(tmp, args.cases)
        rounds, loads = [], []
        for n in range(args.rounds):
            loads.append(os.getloadavg()[0])
            rounds.append(one_round(repo, tmp, args.cases, n, installs))
            loads.append(os.getloadavg()[0])
            print(f"round {n + 1}: {rounds[-1]}", flush=True)
        report(rounds, args.cases, loads, list(installs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(
    rounds: list[dict[str, tuple[float, float]]], cases: int, loads: list[float], names: list[str]
) -> None:
    def med(arm: str, i: int) -> float:
        return statistics.median(r[arm][i] for r in rounds)

    load = f"load {min(loads):.1f}-{max(loads):.1f}"
    pairs = [(f"{name}-{what}", f"naive-{what}") for what in ("run", "compare") for name in names]
    for ours, naive in pairs:
        print(
            f"{ours}: {med(ours, 0):.3f} CPU s vs {naive} {med(naive, 0):.3f} "
            f"= {med(ours, 0) / med(naive, 0):.2f}x; wall {med(ours, 1):.2f} s vs "
            f"{med(naive, 1):.2f} s; per pair {med(ours, 0) / cases * 1e3:.2f} vs "
            f"{med(naive, 0) / cases * 1e3:.2f} ms CPU; median of {len(rounds)}, {load}"
        )


if __name__ == "__main__":
    main()
