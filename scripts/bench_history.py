"""`fidelity landed`, `trailers` and `stale` on a generated 20,000-commit history, each
against the plain git command that answers the same question, in the same run.

The history (scripts/history_gen.py, one `git fast-import`) has merges, squash merges,
cherry-picks, reverts and unmerged branches. Each figure is the median wall time of R
runs of the installed CLI (`python -m fidelity -q ...`, start-up included) and of the git
baseline, and their ratio; CPU seconds (user + system of the child processes) are given
too, since the machine has 2 cores shared with other jobs:
- landed: N claims (old unmerged, squash-merged and cherry-picked commits) in one call,
  against one `git cherry HEAD CLAIM` per claim; and one claim against one git cherry.
- trailers: `--range ROOT..HEAD` (required Signed-off-by, forbidden Change-Id) against
  `git log --format=%(trailers) ROOT..HEAD`.
- stale: a record of M rows measured along the history (some on squash-merged branches),
  watching src/, against one `git rev-list --count --no-merges --full-history C..HEAD --
  src/` per row; the counts of the ancestor rows are checked equal to git's.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_history.py [--commits 20000] [--repeats 3] [--rows 200]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis
import history_gen

CONFIG = """\
[tool.fidelity.trailers]
required = { "Signed-off-by" = ".+" }
forbidden = ["Change-Id"]

[[tool.fidelity.records]]
path = "records/bench.md"
watch = ["src/"]
stale_after = 50
"""
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def timed(run: Callable[[], None], repeats: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds of child processes) over repeats."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        run()
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def sh(repo: Path, *argv: str, ok: tuple[int, ...] = (0,)) -> str:
    result = subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True)
    if result.returncode not in ok:
        raise SystemExit(f"{argv} exited {result.returncode}: {result.stderr[-2000:]}")
    return result.stdout


def fidelity(repo: Path, *argv: str) -> str:
    return sh(repo, sys.executable, "-m", "fidelity", "-q", *argv, ok=(0, 1))


def record(repo: Path, facts: history_gen.Facts, rows: int) -> list[str]:
    """A record of rows measured along the main line, a tenth of them on squashed branches."""
    squashed = facts.squashed[:: max(1, len(facts.squashed) // max(1, rows // 10))][: rows // 10]
    main = facts.main[:: max(1, len(facts.main) // (rows - len(squashed)))]
    shas = (main[: rows - len(squashed)] + squashed)[:rows]
    body = "".join(f"| r{i} | 1.0 s | {sha[:12]} |\n" for i, sha in enumerate(shas))
    (repo / "records").mkdir(exist_ok=True)
    (repo / "records" / "bench.md").write_text(
        f"# Bench\n\n| row | figure | commit |\n|---|---|---|\n{body}"
    )
    return shas


def report(name: str, ours: tuple[float, float], base: tuple[float, float], what: str) -> None:
    print(
        f"{name}: {ours[0]:.3f} s (cpu {ours[1]:.2f} s) vs {base[0]:.3f} s (cpu {base[1]:.2f} s)"
        f" for {what}: ratio {ours[0] / base[0]:.2f}x wall, {ours[1] / base[1]:.2f}x cpu"
    )


def bench_landed(repo: Path, facts: history_gen.Facts, claims: int, repeats: int) -> None:
    chosen = (facts.unmerged[:2] + facts.squashed[:2] + facts.picked[:1])[:claims]
    args = [a for sha in chosen for a in ("--commit", sha)]
    data = json.loads(fidelity(repo, "landed", *args, "--json", "-"))
    statuses = [c["status"] for c in data["commits"]]
    ours = timed(lambda: fidelity(repo, "landed", *args), repeats)
    base = timed(lambda: [sh(repo, "git", "cherry", "HEAD", sha) for sha in chosen], repeats)
    report(f"landed x{len(chosen)}", ours, base, f"{len(chosen)} git cherry calls ({statuses})")
    one = timed(lambda: fidelity(repo, "landed", "--commit", chosen[0]), repeats)
    cherry = timed(lambda: sh(repo, "git", "cherry", "HEAD", chosen[0]), repeats)
    behind = sh(repo, "git", "rev-list", "--count", f"{chosen[0]}..HEAD").strip()
    report("landed x1", one, cherry, f"one git cherry ({behind} commits on the ref side)")


def bench_trailers(repo: Path, repeats: int) -> None:
    root = sh(repo, "git", "rev-list", "--max-parents=0", "HEAD").split()[0]
    spec = f"{root}..HEAD"
    summary = fidelity(repo, "trailers", "--range", spec).strip().splitlines()[-1]
    ours = timed(lambda: fidelity(repo, "trailers", "--range", spec), repeats)
    base = timed(lambda: sh(repo, "git", "log", "--format=%(trailers)", spec), repeats)
    report("trailers", ours, base, f"git log --format=%(trailers) ({summary})")


def bench_stale(repo: Path, facts: history_gen.Facts, rows: int, repeats: int) -> None:
    shas = record(repo, facts, rows)
    data = json.loads(fidelity(repo, "stale", "--json", "-"))
    on_main = set(facts.main)

    def baseline() -> list[int]:
        return [
            int(
                sh(
                    repo,
                    "git",
                    "rev-list",
                    "--count",
                    "--no-merges",
                    "--full-history",
                    f"{sha}..HEAD",
                    "--",
                    "src/",
                )
            )
            for sha in shas
        ]

    counts = baseline()
    for row, sha, expected in zip(data["rows"], shas, counts, strict=True):
        if sha in on_main and row["since"] != expected:
            raise SystemExit(f"row {row['key']}: fidelity counts {row['since']}, git {expected}")
    statuses = {
        s: sum(r["status"] == s for r in data["rows"]) for s in {r["status"] for r in data["rows"]}
    }
    ours = timed(lambda: fidelity(repo, "stale"), repeats)
    base = timed(baseline, repeats)
    report(f"stale x{len(shas)}", ours, base, f"{len(shas)} git rev-list calls ({statuses})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--commits", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--only", choices=["landed", "trailers", "stale"])
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        start = time.perf_counter()
        facts = history_gen.generate(repo, args.commits)
        print(
            f"history: {facts.commits} commits, {facts.merges} merges, "
            f"{len(facts.squashed)} squash merges, {len(facts.picked)} cherry-picks, "
            f"{len(facts.reverted)} reverts, {len(facts.unmerged)} unmerged branches "
            f"(built in {time.perf_counter() - start:.1f} s); median of {args.repeats}"
        )
        (repo / "pyproject.toml").write_text(CONFIG)
        if args.only in (None, "landed"):
            bench_landed(repo, facts, args.claims, args.repeats)
        if args.only in (None, "trailers"):
            bench_trailers(repo, args.repeats)
        if args.only in (None, "stale"):
            bench_stale(repo, facts, args.rows, args.repeats)


if __name__ == "__main__":
    main()
