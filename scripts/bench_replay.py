"""What `--replay cold-warm` costs beyond the case's own second run, through the installed CLI.

A repository gets N cases that each read a value from their cache (writing it first when
the cache is empty) and copy it to their output: the cold run writes the cache, the warm run
only reads it. Three arms, interleaved round by round, CPU of the process tree (wait4) and
wall: `fidelity run` without replays, the same run with `--replay cold-warm`, and a tight
shell loop that does the replays' own work and nothing else: one `mkdir -p` for every
folder, then for each case and side the cache file written by the shell itself (in place of
the warm run's copy of the cache) and the same `sh -c` case command run once against it:
one process per replayed case-side, as the replays' own runs are. The replay overhead is
(replayed - plain - loop) per case-side; the ratio (replayed - plain) / loop is 1.0 when
the replays cost exactly their own runs.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_replay.py [--cases 100] [--rounds 5] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

sys.path.insert(0, str(Path(__file__).parent))
from bench_matrix import Arm, git, interleaved

CASE = 'if [ ! -f "$C/m" ]; then printf %s "$1" > "$C/m"; fi; cat "$C/m" > "$2/r.txt"'

LOOP = (
    r"""set -eu
out=$1; n=$2
dirs=""
for side in base cand; do
  i=0
  while [ "$i" -lt "$n" ]; do
    dirs="$dirs $out/$side/c$i/cache $out/$side/c$i/out"; i=$((i + 1))
  done
done
mkdir -p $dirs
for side in base cand; do
  i=0
  while [ "$i" -lt "$n" ]; do
    d="$out/$side/c$i"
    printf %s "c$i" > "$d/cache/m"
    C="$d/cache" sh -c '"""
    + CASE.replace("'", "'\\''")
    + r"""' _ "c$i" "$d/out"
    i=$((i + 1))
  done
done
"""
)


def build(where: Path, n: int) -> Path:
    repo = where / f"repo-{n}"
    (repo / "cases").mkdir(parents=True)
    cases = [
        f'[[case]]\nid = "c{i}"\nargv = ["sh", "-c", {json.dumps(CASE)}, "_", "c{i}", "{{out}}"]\n'
        'outputs = ["r.txt"]\ncache_env = "C"\n'
        for i in range(n)
    ]
    (repo / "cases" / "matrix.toml").write_text("\n".join(cases))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bench")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    n = args.cases
    with tempfile.TemporaryDirectory() as where:
        tmp = Path(where)
        repo = build(tmp, n)
        loop = tmp / "loop.sh"
        loop.write_text(LOOP)
        run = ["fidelity", "-q", "run", "--baseline", "HEAD", "--jobs", "1"]

        def fidelity(extra: list[str]):  # type: ignore[no-untyped-def]
            return lambda out: [*run, *extra, "--out", str(out)]

        plain = Arm(fidelity([]), repo, tmp)
        replayed = Arm(fidelity(["--replay", "cold-warm"]), repo, tmp)
        own = Arm(lambda out: ["sh", str(loop), str(out), str(n)], repo, tmp)
        interleaved([plain, replayed, own], args.rounds)
        loads = plain.loads + replayed.loads + own.loads
        extra = replayed.cpu - plain.cpu
        per = (extra - own.cpu) / (2 * n) * 1000
        print(
            f"replay-overhead: `--replay cold-warm` adds {extra:.2f} CPU-s to a run of {n} "
            f"cached trivial cases x 2 sides ({replayed.cpu:.2f} vs {plain.cpu:.2f}), "
            f"{extra / own.cpu:.2f}x the replays' own work in a tight sh loop ({own.cpu:.2f} "
            f"CPU-s: the cache in place and one case run per case-side); {per:+.1f} CPU-ms per "
            f"replayed case-side beyond it; wall {replayed.wall:.2f} vs {plain.wall:.2f} s; "
            f"--jobs 1, median of {args.rounds} interleaved rounds, load "
            f"{min(loads):.2f}-{max(loads):.2f}; {os.cpu_count()} cores"
        )
        print(f"  rounds: plain {plain.cpus}, replayed {replayed.cpus}, loop {own.cpus}")
        print(f"  medians: {statistics.median(plain.cpus):.3f} {statistics.median(own.cpus):.3f}")
        shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
