"""Time `fidelity preflight --staged` on this repository's own recent changes.

Clones the repository into a temp dir; for each of the last N non-merge commits, stages
that commit's change on top of its parent (`git checkout C; git reset --soft C^`: the index
holds C, HEAD is C^) and times the installed CLI, `fidelity -q preflight --staged`, as a
subprocess (start-up and imports included; median of repeats per commit). In the same run
it times the plain alternative: the separate commands for the same gates one after another
(`check-docs`, `stale`, `cases validate`), and the start-up floor (`fidelity --version`).
Wall and CPU time (user + system, git children included) are both reported: the machine
is shared (2 cores, other jobs), so wall time swings with load while CPU time does not.
`--profile` prints where one run's time goes (cProfile, cumulative; it imports fidelity from
the clone, so run it on a committed tree).
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_preflight.py [--commits N] [--repeats R] [--profile] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

ROOT = Path(__file__).resolve().parents[1]
FIDELITY = shutil.which("fidelity") or "fidelity"  # the installed CLI


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


# as installed packages run: byte-compiled modules are cached (a session may set this off)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def seconds(argv: list[str], cwd: Path, repeats: int) -> tuple[float, float, int]:
    """Median wall time and median CPU time (user + system, git included) of argv, and its
    last exit code; one warm-up run first writes the bytecode caches."""
    subprocess.run(argv, cwd=cwd, capture_output=True, timeout=600, env=ENV)
    walls, cpus, code = [], [], 0
    for _ in range(repeats):
        start, cpu = time.perf_counter(), _cpu()
        code = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=600, env=ENV).returncode
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus), code


PLAIN = [["check-docs"], ["stale"], ["cases", "validate"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp, "clone")
        git(ROOT, "clone", "-q", str(ROOT), str(clone))
        shas = git(clone, "rev-list", "--no-merges", f"-{args.commits}", "HEAD").split()
        rows = []
        for sha in shas:
            git(clone, "checkout", "-q", "--force", "--detach", sha)  # drop the last change
            git(clone, "reset", "-q", "--soft", f"{sha}^")
            files = len(git(clone, "diff", "--cached", "--name-only").splitlines())
            pre, cpu, code = seconds([FIDELITY, "-q", "preflight", "--staged"], clone, args.repeats)
            plain = sum(seconds([FIDELITY, "-q", *cmd], clone, args.repeats)[0] for cmd in PLAIN)
            rows.append((sha[:7], files, pre, plain, cpu))
            print(
                f"{sha[:7]} {files:3d} files: preflight {pre:.3f} s wall, {cpu:.3f} s CPU "
                f"(exit {code}); plain commands {plain:.3f} s wall"
            )
        floor, floor_cpu, _ = seconds([FIDELITY, "--version"], clone, args.repeats)
        if args.profile:
            git(clone, "checkout", "-q", "--force", "--detach", shas[0])
            git(clone, "reset", "-q", "--soft", f"{shas[0]}^")
            profile = [sys.executable, "-m", "cProfile", "-s", "cumulative", "-m", "fidelity"]
            out = subprocess.run(
                [*profile, "-q", "preflight", "--staged"],
                cwd=clone,
                capture_output=True,
                text=True,
                env=ENV,
            ).stdout
            print("\n".join(out.splitlines()[:45]))
    pre = statistics.median(r[2] for r in rows)
    plain = statistics.median(r[3] for r in rows)
    cpu = statistics.median(r[4] for r in rows)
    print(
        f"median over {len(rows)} commits: preflight --staged {pre:.3f} s wall, {cpu:.3f} s "
        f"CPU (max {max(r[2] for r in rows):.3f} s wall); plain commands {plain:.3f} s wall "
        f"(ratio {pre / plain:.2f}); start-up floor {floor:.3f} s wall, {floor_cpu:.3f} s CPU"
    )


if __name__ == "__main__":
    main()
