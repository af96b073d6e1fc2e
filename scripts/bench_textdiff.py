"""`fidelity compare` on text and JSON outputs against a naive compare, through the installed CLI.

Each workload is a repository whose cases copy files into {out}; `fidelity run` runs it
once, then every round re-judges the stored run with `fidelity -q compare RUN_DIR` (the
comparators read both sides' files again) and runs a naive Python script over the same
pairs; the arms are interleaved, their order flipped every other round, median of the
rounds. Workloads (`--workloads`, comma-separated):

- `one-change`: one text file of 100,000 lines, one line changed (goal: under 1 CPU-s);
- `shuffled`, `reversed`, `block-moved`, `duplicates`: 20,000 lines reordered (the last
  with 50 distinct lines, so no line is unique), 3 of them also edited (goal: under 3 CPU-s
  each, and said as a reorder);
- `text-pairs`: 200 cases of 2,000 lines, 3 changed in each; naive: `difflib.unified_diff`;
- `json-pairs`: 200 cases of a ~100 KB JSON document (1,000 records), every float moved by
  a relative 1e-12 inside `rtol = 1e-9` and one string changed; naive: `json.load` both
  and a recursive walk with `math.isclose` (goal for both: at most 1.0x the naive compare).

Figures: CPU of the whole process tree (user + system of the arm and every descendant it
waited for, from wait4), and for a one-file workload the words the first install says.
The pair workloads also run `--small` pairs (default 20) in the same rounds: (CPU at 200 -
CPU at 20) / 180 is what one pair costs beyond a process's fixed cost (start-up, reading
the run), for both arms. Each line states the 1-minute load before and after the rounds,
the machine's cores (`os.cpu_count()`), the cores the arms may run on (`--cpus` runs every
arm under `taskset -c CPUS`), and the interpreter. `--fidelity NAME=PATH` (repeatable)
measures several installs in the same rounds, e.g. this branch against main, each a clean
non-editable install. `--cores 1,2,all` runs the whole script once per core count under
`taskset -c` (scripts/benchenv.py; the first line names the interpreters and the cores).
Usage: python scripts/bench_textdiff.py [--rounds 5] [--workloads ...] [--cpus 0]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import benchenv  # scripts/: the header and the --cores axis

NAIVE_TEXT = r"""
import difflib, sys
from pathlib import Path
from typing import Any
run, names = Path(sys.argv[1]), sys.argv[2:]
changed = 0
for name in names:
    b = (run / "baseline" / "cases" / name / "out" / "f.txt").read_text().splitlines()
    c = (run / "candidate" / "cases" / name / "out" / "f.txt").read_text().splitlines()
    if b != c:
        diff = difflib.unified_diff(b, c, "baseline", "candidate", lineterm="", n=1)
        changed += sum(1 for line in list(diff)[2:] if line[:1] in "+-")
print(changed)
"""

NAIVE_JSON = r"""
import json, math, sys
from pathlib import Path
from typing import Any
run, names = Path(sys.argv[1]), sys.argv[2:]
def walk(b, c):
    if isinstance(b, dict) and isinstance(c, dict):
        return sum(walk(b.get(k), c.get(k)) for k in {*b, *c})
    if isinstance(b, list) and isinstance(c, list) and len(b) == len(c):
        return sum(walk(x, y) for x, y in zip(b, c))
    if isinstance(b, float) and isinstance(c, float):
        return not math.isclose(b, c, rel_tol=1e-9)
    return b != c
moved = 0
for name in names:
    with open(run / "baseline" / "cases" / name / "out" / "f.json") as fb:
        b = json.load(fb)
    with open(run / "candidate" / "cases" / name / "out" / "f.json") as fc:
        c = json.load(fc)
    moved += b != c and walk(b, c)
print(moved)
"""


def _rows(n: int) -> list[str]:
    return [f"row {i}: step {i * 7919 % 100_003} took {i % 97}.{i % 13} ms" for i in range(n)]


def _edited(lines: list[str], at: tuple[int, ...]) -> list[str]:
    out = list(lines)
    for k in at:
        out[k] = f"edited {k}: " + out[k]
    return out


def _reordered(kind: str) -> Callable[[], tuple[list[str], list[str]]]:
    def make() -> tuple[list[str], list[str]]:
        base = _rows(20_000) if kind != "duplicates" else [f"value {i % 50}" for i in range(20_000)]
        if kind == "reversed":
            cand = base[::-1]
        elif kind == "block-moved":
            cand = base[:100] + base[8_000:12_000] + base[100:8_000] + base[12_000:]
        else:
            cand = random.Random(39).sample(base, len(base))
        return base, _edited(cand, (5, 900, 1_500))

    return make


def _one_change() -> tuple[list[str], list[str]]:
    base = _rows(100_000)
    return base, _edited(base, (50_000,))


PAIRS = ("text-pairs", "json-pairs")
SINGLE = {
    "one-change": _one_change,
    "shuffled": _reordered("shuffled"),
    "reversed": _reordered("reversed"),
    "block-moved": _reordered("block-moved"),
    "duplicates": _reordered("duplicates"),
}


def _record(i: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"request-{i}",
        "ok": rng.random() < 0.9,
        "latency_ms": rng.uniform(1, 500),
        "tokens": rng.randrange(1, 4096),
        "scores": [rng.random() for _ in range(3)],
    }


def _json_pair(seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    records = [_record(i, rng) for i in range(1_000)]
    base = json.dumps({"run": seed, "records": records}, indent=1)
    for r in records:
        r["latency_ms"] *= 1 + 1e-12
        r["scores"] = [s * (1 + 1e-12) for s in r["scores"]]
    records[seed % 1_000]["name"] = "renamed"
    return base, json.dumps({"run": seed, "records": records}, indent=1)


def _text_pair(seed: int) -> tuple[str, str]:
    base = _rows(2_000)
    cand = _edited(base, (seed % 2_000, (seed * 7) % 2_000, (seed * 13) % 2_000))
    return "\n".join(base) + "\n", "\n".join(cand) + "\n"


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build(where: Path, files: dict[str, tuple[str, str]], output: str, spec: str) -> Path:
    """A repository of one case per file, whose `data` link points at the baseline's files,
    then the candidate's."""
    for role, side in (("base", 0), ("cand", 1)):
        (where / "data" / role).mkdir(parents=True)
        for name, pair in files.items():
            (where / "data" / role / name).write_text(pair[side])
    repo = where / "repo"
    (repo / "cases").mkdir(parents=True)
    table = [
        f'[[case]]\nid = "{name}"\nargv = ["cp", "{{worktree}}/data/{name}", "{{out}}/{output}"]\n'
        f'outputs = ["{output}"]\n'
        for name in files
    ]
    table.append(f'[matrix.compare."{output}"]\n{spec}\n')
    (repo / "cases" / "matrix.toml").write_text("\n".join(table))
    git(repo, "init", "-q", "-b", "main")
    (repo / "data").symlink_to(where / "data" / "base")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "data").unlink()
    (repo / "data").symlink_to(where / "data" / "cand")
    git(repo, "commit", "-qam", "cand")
    return repo


def workload(name: str, where: Path, pairs: int) -> tuple[Path, str, list[str]]:
    """The repository, the naive script's kind and the case ids of one workload."""
    if name in SINGLE:
        base, cand = SINGLE[name]()
        files = {name: ("\n".join(base) + "\n", "\n".join(cand) + "\n")}
        return build(where, files, "f.txt", 'kind = "text"'), "text", list(files)
    if name == "text-pairs":
        files = {f"t{i}": _text_pair(i) for i in range(pairs)}
        return build(where, files, "f.txt", 'kind = "text"'), "text", list(files)
    files = {f"j{i}": _json_pair(i) for i in range(pairs)}
    spec = 'kind = "json"\nrtol = 1e-9'
    return build(where, files, "f.json", spec), "json", list(files)


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


def rounds_of(arms: dict[str, list[str]], cwd: Path, n: int) -> list[dict[str, float]]:
    """n interleaved rounds of every arm (order flipped every other round): CPU seconds."""
    found = []
    for k in range(n):
        order = list(arms) if k % 2 == 0 else list(reversed(arms))
        cpu: dict[str, float] = {}
        for arm in order:
            used, _, code, out = measured(arms[arm], cwd)
            if code not in (0, 1):
                sys.exit(f"{arm} exited {code}: {' '.join(arms[arm])}")
            cpu[arm] = used
        found.append(cpu)
        print(f"  round {k + 1}: {json.dumps({a: round(c, 3) for a, c in cpu.items()})}")
    return found


def arms_for(
    name: str, where: Path, pairs: int, installs: dict[str, str], args: argparse.Namespace
) -> tuple[Path, dict[str, list[str]]]:
    """A workload of `pairs` pairs, run once; the arms that judge it again."""
    repo, naive, cases = workload(name, where, pairs)
    run_dir = where / "run"
    exe = next(iter(installs.values()))
    code = measured([exe, "-q", "run", "--baseline", "HEAD~1", "--out", str(run_dir)], repo)[2]
    if code not in (0, 1):
        sys.exit(f"fidelity run exited {code} on {name}")
    pin = ["taskset", "-c", args.cpus] if args.cpus else []
    arms = {f"{n}-compare": [*pin, e, "-q", "compare", str(run_dir)] for n, e in installs.items()}
    script = args.scripts / f"naive_{naive}.py"
    arms["naive"] = [*pin, sys.executable, str(script), str(run_dir), *cases]
    return repo, {f"{arm}@{pairs}": argv for arm, argv in arms.items()}


def one(name: str, tmp: Path, installs: dict[str, str], args: argparse.Namespace) -> None:
    """One workload; for pairs, also `--small` pairs in the same rounds: the difference is
    what a pair costs beyond a process's fixed cost."""
    sizes = (args.pairs, args.small) if name in PAIRS else (1,)
    arms: dict[str, list[str]] = {}
    for pairs in sizes:
        repo, more = arms_for(name, tmp / name / str(pairs), pairs, installs, args)
        arms |= more
    loads = [os.getloadavg()[0]]
    found = rounds_of(arms, repo, args.rounds)
    loads.append(os.getloadavg()[0])
    report(name, found, sizes, loads, args.cpus)
    if name in SINGLE:  # what a reader is told
        said = measured(next(iter(arms.values())), repo)[3].splitlines()
        print("  said: " + next((line[:300] for line in said if "f.txt:" in line), "(nothing)"))


def report(
    name: str, found: list[dict[str, float]], sizes: tuple[int, ...], loads: list[float], cpus: str
) -> None:
    def med(arm: str) -> float:
        return statistics.median(r[arm] for r in found)

    where = (
        f"load {min(loads):.1f}-{max(loads):.1f}; {os.cpu_count()} cores, arms on "
        f"{cpus or 'any'} (affinity {len(os.sched_getaffinity(0))}); "
        f"{platform.python_implementation()} {platform.python_version()}"
    )
    pairs = sizes[0]
    naive = med(f"naive@{pairs}")
    for arm in (a.split("@")[0] for a in found[0] if a.endswith(f"@{pairs}")):
        if arm == "naive":
            continue
        ours = med(f"{arm}@{pairs}")
        line = f"{name}: {arm} {ours:.3f} CPU s vs naive {naive:.3f} = {ours / naive:.2f}x"
        if len(sizes) > 1:
            extra = pairs - sizes[1]
            mine = (ours - med(f"{arm}@{sizes[1]}")) / extra
            theirs = (naive - med(f"naive@{sizes[1]}")) / extra
            line += (
                f" ({pairs} pairs); per pair beyond a process's fixed cost ({pairs} - "
                f"{sizes[1]} pairs) {mine * 1e3:.2f} vs {theirs * 1e3:.2f} ms = "
                f"{mine / theirs:.2f}x"
            )
        print(f"{line}; median of {len(found)}; {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default=",".join([*SINGLE, "text-pairs", "json-pairs"]))
    parser.add_argument("--cpus", default="", help="run every arm under `taskset -c CPUS`")
    parser.add_argument("--pairs", type=int, default=200, help="pairs of the pair workloads")
    parser.add_argument("--small", type=int, default=20, help="pairs of their small variant")
    parser.add_argument("--fidelity", action="append", default=[], metavar="NAME=PATH")
    benchenv.add_arguments(parser)
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    installs = dict(a.split("=", 1) for a in args.fidelity) or {"fidelity": "fidelity"}
    missing = [exe for exe in installs.values() if shutil.which(exe) is None]
    if missing:
        sys.exit(f"{missing[0]} not found: install fidelity first (pip install .)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-textdiff-"))
    try:
        (tmp / "naive_text.py").write_text(NAIVE_TEXT)
        (tmp / "naive_json.py").write_text(NAIVE_JSON)
        args.scripts = tmp
        for name in args.workloads.split(","):
            print(f"{name}:", flush=True)
            one(name, tmp, installs, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
