"""False claims and power of `fidelity ab` on real commands, side by side with pyperf.

Two scenarios, each tried T times through the installed CLI at its defaults
(`python -m fidelity -q ab --a A --b B --json -`): identical arms (the same busy loop; any
established difference is a false claim) and a slowed arm (B runs 1.25x the loop; an
established slowdown is a detection). The very same samples of every try are handed to
pyperf's `compare_to` (a t-test on the values), so both judge identical data. pyperf is not
a dependency of fidelity: pass --pyperf PYTHON, an interpreter that has it installed
(e.g. a venv made for this benchmark); without it the pyperf column is skipped.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters and numpy's version,
os.cpu_count() and the cores the run may use.
Usage: python scripts/bench_ab.py [--tries 20] [--loop 300000] [--pyperf /path/to/python]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

PYPERF = """
import json, subprocess, sys, pyperf
data = json.load(open(sys.argv[1]))
paths = []
for arm in ("a", "b"):
    runs = [pyperf.Run([v], metadata={"name": "cmd"}, collect_metadata=False) for v in data[arm]]
    path = sys.argv[2] + f"/{arm}.json"
    pyperf.Benchmark(runs).dump(path, replace=True)
    paths.append(path)
out = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", *paths], capture_output=True,
                     text=True).stdout
print(out.strip().splitlines()[-1] if out.strip() else "")
"""


def loop(n: int) -> str:
    return f"{sys.executable} -c 's = 0\nfor i in range({n}): s += i'"


def one_try(a: str, b: str) -> tuple[str, dict[str, list[float]], float]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "fidelity", "-q", "ab", "--a", a, "--b", b, "--json", "-"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    data = json.loads(out.stdout)
    j = data["judgement"]
    low = j["interval"]["low"]
    claim = "same"
    if j["verdict"] == "established":
        claim = "slower" if low > 1 else "faster"
    samples = {
        arm: [r["seconds"] for r in data["repetitions"] if r["arm"] == arm and not r["warmup"]]
        for arm in ("a", "b")
    }
    return claim, samples, wall


def pyperf_claim(python: str, samples: dict[str, list[float]]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "s.json").write_text(json.dumps(samples))
        line = subprocess.run(
            [python, "-c", PYPERF, str(Path(tmp, "s.json")), tmp],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    if "Not significant" in line:
        return "same"
    return "slower" if "slower" in line else "faster" if "faster" in line else f"? {line}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--loop", type=int, default=300000)
    parser.add_argument("--pyperf", help="a Python interpreter with pyperf installed")
    args = parser.parse_args()
    if benchenv.axis(args, numpy=True):
        return  # it ran once per core count, under taskset
    scenarios = {
        "identical": (loop(args.loop), loop(args.loop)),
        "slowed 1.25x": (loop(args.loop), loop(int(args.loop * 1.25))),
    }
    for name, (a, b) in scenarios.items():
        ours, theirs, walls = [], [], []
        for _ in range(args.tries):
            claim, samples, wall = one_try(a, b)
            ours.append(claim)
            walls.append(wall)
            if args.pyperf:
                theirs.append(pyperf_claim(args.pyperf, samples))
        n = len(samples["a"])
        line = (
            f"{name}: fidelity ab {ours.count('slower')} slower / {ours.count('faster')} "
            f"faster of {args.tries} tries ({n} runs per arm, {sum(walls) / len(walls):.1f} s "
            "per try)"
        )
        if theirs:
            line += (
                f"; pyperf compare_to on the same samples {theirs.count('slower')} slower / "
                f"{theirs.count('faster')} faster"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
