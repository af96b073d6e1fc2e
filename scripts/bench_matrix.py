"""fidelity run against a plain shell script doing the same work, through the installed CLI.

For each size, a repository gets N cases that each write one small file (or sleep a
second first, for the slow set). The plain script does what any harness must: two
`git worktree add --detach`, every case run in its worktree, `sha256sum` of each output,
a comparison, the worktrees removed. `fidelity run` is timed with --jobs 1 and --jobs 2
(both sides at once), as a user runs it (a fresh process: start-up included), and its
peak RSS read from wait4(). Figures are ratios to the script measured in the same run.
Also: `fidelity --version` and `python -c pass` (the interpreter's own start-up).
Usage: python scripts/bench_matrix.py [--sizes 20,200,1000] [--slow 20] [--repeats 3]
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

SCRIPT = r"""set -eu
repo=$1; out=$2; n=$3; pause=$4
for side in base cand; do
  git -C "$repo" worktree add -q --detach "$out/wt-$side" HEAD
  i=0
  while [ "$i" -lt "$n" ]; do
    mkdir -p "$out/$side/c$i"
    (cd "$out/wt-$side" &&
      sh -c 'sleep "$3"; printf %s "$1" > "$2/r.txt"' _ "c$i" "$out/$side/c$i" "$pause")
    i=$((i + 1))
  done
done
moved=0; i=0
while [ "$i" -lt "$n" ]; do
  a=$(sha256sum "$out/base/c$i/r.txt" | cut -d' ' -f1)
  b=$(sha256sum "$out/cand/c$i/r.txt" | cut -d' ' -f1)
  [ "$a" = "$b" ] || moved=$((moved + 1))
  i=$((i + 1))
done
for side in base cand; do git -C "$repo" worktree remove --force "$out/wt-$side"; done
echo "moved $moved"
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


def timed(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB (wait4) and exit code of one process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def median_run(make_argv, cwd: Path, repeats: int, scratch: Path) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    walls, peaks = [], []
    for k in range(repeats):
        out = scratch / f"out-{time.monotonic_ns()}-{k}"
        wall, peak, code = timed(make_argv(out), cwd)
        if code not in (0,):
            raise SystemExit(f"{make_argv(out)} exited {code}")
        walls.append(wall)
        peaks.append(peak)
        shutil.rmtree(out, ignore_errors=True)
    return statistics.median(walls), max(peaks)


def measure(tmp: Path, n: int, pause: float, repeats: int) -> list[str]:
    repo = build(tmp, n, pause)
    script = tmp / "plain.sh"
    script.write_text(SCRIPT)
    plain, _ = median_run(
        lambda out: ["sh", str(script), str(repo), str(out), str(n), str(pause)], repo, repeats, tmp
    )
    rows = []
    kind = f"{n} cases of about {pause:g} s" if pause else f"{n} trivial cases"
    for jobs in (1, 2):
        wall, peak = median_run(
            lambda out, j=jobs: [
                "fidelity",
                "-q",
                "run",
                "--baseline",
                "HEAD",
                "--jobs",
                str(j),
                "--out",
                str(out),
            ],
            repo,
            repeats,
            tmp,
        )
        name = f"matrix-{n}{'-slow' if pause else ''}-jobs{jobs}"
        per_case = (wall - plain) / (2 * n) * 1000
        rows.append(
            f"{name}: {wall / plain:.2f}x the plain script ({wall:.2f} s vs {plain:.2f} s, "
            f"{kind} x 2 sides, median of {repeats}); {per_case:+.1f} ms per case and side; "
            f"peak RSS {peak:.0f} MiB"
        )
    shutil.rmtree(repo, ignore_errors=True)
    return rows


def startup(repeats: int) -> str:
    def best(argv: list[str]) -> float:
        return min(timed(argv, Path.cwd())[0] for _ in range(repeats))

    version, bare = best(["fidelity", "--version"]), best([sys.executable, "-c", "pass"])
    return (
        f"cli-version: {version:.3f} s for `fidelity --version` (python -c pass: {bare:.3f} s), "
        f"best of {repeats}"
    )


def demo(repeats: int) -> str:
    """`fidelity demo` end to end, as a user first runs it (three gates, six controls)."""
    walls = []
    for _ in range(repeats):
        where = Path(tempfile.mkdtemp(prefix="bench-demo-"))
        wall, _, code = timed(["fidelity", "-q", "demo", "--dir", str(where / "demo")], where)
        shutil.rmtree(where, ignore_errors=True)
        if code != 0:
            raise SystemExit(f"fidelity demo exited {code}")
        walls.append(wall)
    return (
        f"demo-wall: {statistics.median(walls):.2f} s for `fidelity demo` end to end (three "
        f"gates and six controls; budget 60 s), median of {repeats}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20,200,1000")
    parser.add_argument("--slow", type=int, default=20, help="cases of about 1 s (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("fidelity") is None:
        sys.exit("install fidelity first (pip install .): this measures the installed CLI")
    tmp = Path(tempfile.mkdtemp(prefix="bench-matrix-"))
    try:
        print(startup(max(5, args.repeats)), flush=True)
        print(demo(args.repeats), flush=True)
        for n in (int(s) for s in args.sizes.split(",") if s):
            for row in measure(tmp, n, 0.0, args.repeats if n < 1000 else 1):
                print(row, flush=True)
        if args.slow:
            for row in measure(tmp, args.slow, 1.0, 1):
                print(row, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
