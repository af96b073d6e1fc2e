"""fidelity run against the tightest reasonable shell script doing the same work, through the
installed CLI, arms interleaved, CPU of the process tree and wall.

For each size (10, 200 and 1,000 by default), a repository gets N cases that each write one
small file (or sleep a second first, for the slow set). The script does what any harness
must and no more: per side one `git worktree add --detach`, every case run in its worktree
in a loop (the same `sh -c` case process fidelity starts), one `sha256sum` over all of the
side's outputs, one `cmp` of the two lists, the worktrees removed. With `--jobs 2` the script
runs both sides at once (`&` and `wait`), the same total parallelism. Each round runs the
script and `fidelity run` back to back, in alternating order; a figure is the median over
the rounds (default 5) of CPU (user + system of the command and every process it waited
for, from wait4) and of wall time, with the 1-minute load average before each arm and
fidelity's peak RSS. Figures are ratios to the script measured in the same rounds.
Also: `fidelity --version` against `python -c pass`, and the demo end to end.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_matrix.py [--sizes 10,200,1000] [--slow 20] [--rounds 5]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

SCRIPT = r"""set -eu
repo=$1; out=$2; n=$3; pause=$4; jobs=$5
side() {
  git -C "$repo" worktree add -q --detach "$out/wt-$1" HEAD
  i=0
  while [ "$i" -lt "$n" ]; do
    mkdir -p "$out/$1/c$i"
    (cd "$out/wt-$1" &&
      sh -c 'sleep "$3"; printf %s "$1" > "$2/r.txt"' _ "c$i" "$out/$1/c$i" "$pause")
    i=$((i + 1))
  done
  (cd "$out/$1" && find . -type f -name r.txt | sort | xargs sha256sum > "$out/$1.sums")
}
if [ "$jobs" = 2 ]; then side base & side cand & wait; else side base; side cand; fi
cmp -s "$out/base.sums" "$out/cand.sums" && echo same || echo moved
for s in base cand; do git -C "$repo" worktree remove --force "$out/wt-$s"; done
"""


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b.invalid",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build(where: Path, n: int, pause: float) -> Path:
    repo = where / f"repo-{n}-{pause}"
    (repo / "cases").mkdir(parents=True)
    cases = [
        f'[[case]]\nid = "c{i}"\nargv = ["sh", "-c", "sleep \\"$3\\"; printf %s \\"$1\\" > '
        f'\\"$2/r.txt\\"", "_", "c{i}", "{{out}}", "{pause}"]\noutputs = ["r.txt"]\n'
        for i in range(n)
    ]
    (repo / "cases" / "matrix.toml").write_text("\n".join(cases))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bench")
    return repo


def timed(argv: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds of the process tree, peak RSS in MiB, exit code."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


class Arm:
    """One command measured round after round: walls, CPUs, peak RSS, load before each."""

    def __init__(self, make_argv, cwd: Path, scratch: Path) -> None:  # type: ignore[no-untyped-def]
        self.make_argv, self.cwd, self.scratch = make_argv, cwd, scratch
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.peak = 0.0
        self.loads: list[float] = []

    def once(self) -> None:
        out = self.scratch / f"out-{time.monotonic_ns()}"
        self.loads.append(os.getloadavg()[0])
        wall, cpu, peak, code = timed(self.make_argv(out), self.cwd)
        if code != 0:
            raise SystemExit(f"{self.make_argv(out)} exited {code}")
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.peak = max(self.peak, peak)
        shutil.rmtree(out, ignore_errors=True)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def interleaved(arms: list[Arm], rounds: int) -> None:
    for r in range(rounds):
        for arm in arms if r % 2 == 0 else arms[::-1]:
            arm.once()


def measure(tmp: Path, n: int, pause: float, rounds: int) -> list[str]:
    repo = build(tmp, n, pause)
    script = tmp / "plain.sh"
    script.write_text(SCRIPT)
    rows = []
    kind = f"{n} cases of about {pause:g} s" if pause else f"{n} trivial cases"
    for jobs in (1, 2):
        plain = Arm(
            lambda out, j=jobs: [
                "sh",
                str(script),
                str(repo),
                str(out),
                str(n),
                str(pause),
                str(j),
            ],
            repo,
            tmp,
        )
        ours = Arm(
            lambda out, j=jobs: (
                ["fidelity", "-q", "run", "--baseline", "HEAD", "--jobs", str(j)]
                + ["--out", str(out)]
            ),
            repo,
            tmp,
        )
        interleaved([plain, ours], rounds)
        loads = plain.loads + ours.loads
        name = f"matrix-{n}{'-slow' if pause else ''}-jobs{jobs}"
        per_case = (ours.cpu - plain.cpu) / (2 * n) * 1000
        rows.append(
            f"{name}: CPU {ours.cpu / plain.cpu:.2f}x the tight script ({ours.cpu:.2f} vs "
            f"{plain.cpu:.2f} CPU-s), wall {ours.wall / plain.wall:.2f}x ({ours.wall:.2f} vs "
            f"{plain.wall:.2f} s); {kind} x 2 sides, --jobs {jobs} (the script: "
            f"{'both sides at once' if jobs == 2 else 'one side after the other'}); "
            f"{per_case:+.1f} CPU-ms per case and side; median of {rounds} interleaved rounds; "
            f"load {min(loads):.2f}-{max(loads):.2f}; peak RSS {ours.peak:.0f} MiB"
        )
    shutil.rmtree(repo, ignore_errors=True)
    return rows


def startup(repeats: int) -> str:
    def best(argv: list[str]) -> float:
        return min(timed(argv, Path.cwd())[0] for _ in range(repeats))

    version, bare = best(["fidelity", "--version"]), best([sys.executable, "-c", "pass"])
    load = os.getloadavg()[0]
    return (
        f"cli-version: {version:.3f} s for `fidelity --version` (python -c pass: {bare:.3f} s), "
        f"best of {repeats}, load {load:.2f}"
    )


def demo(repeats: int) -> str:
    """`fidelity demo` end to end, as a user first runs it (three gates, six controls)."""
    walls = []
    for _ in range(repeats):
        where = Path(tempfile.mkdtemp(prefix="bench-demo-"))
        wall, _, _, code = timed(["fidelity", "-q", "demo", "--dir", str(where / "demo")], where)
        shutil.rmtree(where, ignore_errors=True)
        if code != 0:
            raise SystemExit(f"fidelity demo exited {code}")
        walls.append(wall)
    return (
        f"demo-wall: {statistics.median(walls):.2f} s for `fidelity demo` end to end (three "
        f"gates and six controls; budget 60 s), median of {repeats}, load before "
        f"{os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--sizes", default="10,200,1000")
    parser.add_argument("--slow", type=int, default=20, help="cases of about 1 s (0: none)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--slow-rounds", type=int, default=1)
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    if shutil.which("fidelity") is None:
        sys.exit("install fidelity first (pip install .): this measures the installed CLI")
    tmp = Path(tempfile.mkdtemp(prefix="bench-matrix-"))
    try:
        print(startup(max(5, args.rounds)), flush=True)
        print(demo(3), flush=True)
        for n in (int(s) for s in args.sizes.split(",") if s):
            for row in measure(tmp, n, 0.0, args.rounds):
                print(row, flush=True)
        if args.slow:
            for row in measure(tmp, args.slow, 1.0, args.slow_rounds):
                print(row, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
