"""Per-control overhead of `fidelity controls run` on the demo, beyond the test command.

Materialises the demo repository (tinysim and its tests) in a temp dir, writes a control
table holding the demo's six controls repeated to N (default 24), and runs them with
`--jobs 1` and `--jobs 2`. Overhead per control is its wall time minus its test command's
time (worktree add, edits, JUnit read, worktree remove), as measured inside the runner;
the end-to-end figure divides the whole run's wall time (unmodified tree and no-op included)
by the number of controls. A plain `python -m pytest` in the checkout gives the floor.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_controls.py [--controls N] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from importlib import resources
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

from fidelity.controls import gate as controls
from fidelity.controls.table import parse
from fidelity.demo import show as demo
from fidelity.git import command


def demo_repo(where: Path) -> Path:
    demo.materialise(where)
    if not (where / "tests").exists():
        src = resources.files("fidelity.demo").joinpath("files", "tests")
        shutil.copytree(str(src), where / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        command.git(where, "add", "-A")
        command.git(
            where, "-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-qm", "t"
        )
    return where


def many(table_text: str, count: int) -> str:
    """The table with its controls repeated (ids suffixed) until there are `count`."""
    raw = tomllib.loads(table_text)
    head = table_text.split("[[control]]", 1)[0]
    blocks = table_text.split("[[control]]")[1:]
    out = [head]
    for i in range(count):
        block = blocks[i % len(raw["control"])]
        cid = raw["control"][i % len(raw["control"])]["id"]
        out.append("[[control]]" + block.replace(f'id = "{cid}"', f'id = "{cid}-{i}"', 1))
    return "".join(out)


def plain_pytest(repo: Path, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=repo,
            capture_output=True,
            check=True,
        )
        times.append(time.monotonic() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    benchenv.add_arguments(parser)
    parser.add_argument("--controls", type=int, default=24)
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    tmp = Path(tempfile.mkdtemp(prefix="bench-controls-"))
    try:
        repo = demo_repo(tmp / "demo")
        text = many((repo / "cases" / "controls.toml").read_text(), args.controls)
        table = parse(text.encode(), "bench.toml")
        floor = plain_pytest(repo)
        print(f"controls-pytest-floor: {floor:.3f} s for plain `python -m pytest` in the demo")
        for jobs in (1, 2):
            start = time.monotonic()
            report = controls.run(repo, table, jobs=jobs)
            wall = time.monotonic() - start
            assert report.exit_code() == 0, report
            results = [*report.results, report.noop]
            overhead = statistics.mean(r.overhead_s for r in results if r)
            commands = [r.duration_s for r in results if r] + [report.baseline.duration_s]
            beyond = (wall - sum(commands) / jobs) / len(report.results)
            print(
                f"controls-overhead-jobs{jobs}: {overhead:.3f} s per control beyond its test "
                f"command (mean {statistics.mean(commands):.3f} s), mean of {len(results)}; "
                f"end to end {wall:.2f} s for {len(report.results)} controls = "
                f"{wall / len(report.results):.3f} s each, {beyond:.3f} s each beyond the commands"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
