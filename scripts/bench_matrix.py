"""Overhead of `fidelity run` beyond the case commands themselves, and the demo's wall time.

Builds a repository with N trivial cases (each writes one output and one cache file), then
times in one process run: the N case commands run directly, twice over (the floor: what
any harness must spend), and `fidelity run` over the same table with `--jobs 1` and
`--jobs 2`. The overhead per case is (gate wall time - floor) / (2 N): worktree add and
remove, the cleanliness check, the import guard, hashing and the manifest. Figures are
ratios within one run; the machine is shared and noisy. The demo (`fidelity demo`, as a
user runs it) is timed end to end against its one-minute budget.
Usage: python scripts/bench_matrix.py [--cases N] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fidelity.matrix import gate

CASE = (
    "import os, sys; open(sys.argv[1] + '/r.txt', 'w').write('x'); "
    "open(os.environ['CACHE'] + '/c.txt', 'w').write('y')"
)


def build(where: Path, cases: int) -> Path:
    repo = where / "repo"
    (repo / "cases").mkdir(parents=True)
    lines = ['[matrix]\nname = "bench"\nimport_check = ["benchpkg"]\n']
    for i in range(cases):
        lines.append(
            f'[[case]]\nid = "c{i}"\nargv = [{json.dumps(sys.executable)}, "-c", '
            f'{json.dumps(CASE)}, "{{out}}"]\noutputs = ["r.txt"]\ncache_env = "CACHE"\n'
        )
    (repo / "cases" / "matrix.toml").write_text("\n".join(lines))
    (repo / "benchpkg").mkdir()
    (repo / "benchpkg" / "__init__.py").write_text("")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def floor(repo: Path, cases: int) -> float:
    """The case commands alone, run directly, for both sides."""
    out = repo.parent / "floor"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "CACHE": str(out)}
    start = time.perf_counter()
    for _ in range(2 * cases):
        subprocess.run([sys.executable, "-c", CASE, str(out)], env=env, check=True)
    return time.perf_counter() - start


def gated(repo: Path, jobs: int, n: int) -> float:
    start = time.perf_counter()
    outcome = gate.run(
        repo,
        "HEAD",
        "HEAD",
        "cases/matrix.toml",
        harness_rev="HEAD",
        out=repo.parent / f"run-{jobs}-{n}",
        jobs=jobs,
    )
    assert outcome.exit_code == 0, outcome.findings
    return time.perf_counter() - start


def demo_time(where: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fidelity", "--quiet", "demo", "--dir", str(where / "demo")],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = build(Path(tmp), args.cases)
        floors, one, two = [], [], []
        for n in range(args.repeats):
            floors.append(floor(repo, args.cases))
            one.append(gated(repo, 1, n))
            two.append(gated(repo, 2, n))
        demo = demo_time(Path(tmp))
    f, g1, g2 = (statistics.median(x) for x in (floors, one, two))
    per = 2 * args.cases
    print(f"{args.cases} cases x 2 sides, median of {args.repeats}")
    print(f"floor (commands alone): {f:.3f} s = {f / per * 1000:.1f} ms per case-side")
    print(
        f"fidelity run --jobs 1:  {g1:.3f} s; overhead {(g1 - f) / per * 1000:.1f} ms per case-side"
    )
    print(f"fidelity run --jobs 2:  {g2:.3f} s; ratio to floor {g2 / f:.2f}")
    print(f"fidelity demo end to end: {demo:.2f} s (budget 60 s)")


if __name__ == "__main__":
    main()
