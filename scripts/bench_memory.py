"""Peak memory of the value-aware comparators on large outputs, through the installed CLI.

Builds a repository whose cases copy pre-generated large files into {out} (a CSV with a
key column, a JSON document, a text log; the candidate's differ in a few values), runs
`fidelity run` once per comparator kind, then times `fidelity compare RUN_DIR`, which
re-runs that comparator on the stored files, and reads its peak RSS from wait4(). A compare
of a tiny file of the same kind gives the floor (interpreter and that comparator's
imports). Figures: peak RSS, and (peak - floor) per byte of the larger input.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters and numpy's version,
os.cpu_count() and the cores the run may use.
Usage: python scripts/bench_memory.py [--csv-mib 128] [--json-mib 24] [--text-mib 256]
    [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

MIB = 2**20


def write_csv(path: Path, mib: int, moved: bool) -> None:
    rows = mib * MIB // 24
    with path.open("w") as f:
        f.write("id,value,bucket\n")
        for i in range(rows):
            value = i * 1.5 + (0.0001 if moved and i % 1000 == 0 else 0.0)
            f.write(f"{i},{value:.6f},{i % 7}\n")


def write_json(path: Path, mib: int, moved: bool) -> None:
    n = mib * MIB // 11  # about 11 bytes a number
    values = [round(i * 0.25, 3) for i in range(n)]
    if moved:
        values[n // 2] += 1.0
    path.write_text(json.dumps({"name": "bench", "values": values}))


def write_text(path: Path, mib: int, moved: bool) -> None:
    line = "step {:>10} state ok load 0.5 queue 12 lane 3 replica 1 ---------------\n"
    lines = mib * MIB // len(line.format(0))
    with path.open("w") as f:
        for i in range(lines):
            f.write(
                line.format(i).replace("ok", "KO") if moved and i == lines // 2 else line.format(i)
            )


KINDS = {
    "csv": ("m.csv", write_csv, '{ kind = "csv", key = ["id"], rtol = 1e-3 }'),
    "json": ("m.json", write_json, '{ kind = "json", rtol = 1e-3 }'),
    "text": ("m.txt", write_text, '{ kind = "text" }'),
}


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def peak_rss_mib(argv: list[str], cwd: Path) -> tuple[float, int]:
    """Run argv and return its peak RSS (MiB, from wait4) and exit code."""
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, child.returncode


def build(where: Path, kind: str, mib: int) -> tuple[Path, Path]:
    """A repository with one case copying the kind's file; return (repo, the larger file)."""
    name, writer, spec = KINDS[kind]
    data = where / "data"
    for variant, moved in (("base", False), ("cand", True)):
        (data / variant).mkdir(parents=True, exist_ok=True)
        if mib:  # in a child process: this one stays small, so the children it forks do too
            argv = [
                sys.executable,
                __file__,
                "--write",
                kind,
                str(data / variant / name),
                str(mib),
                str(int(moved)),
            ]
            subprocess.run(argv, check=True)
        else:
            (data / variant / name).write_text("id,value\n1,1\n" if moved else "id,value\n1,2\n")
    repo = where / "repo"
    (repo / "cases").mkdir(parents=True)
    script = f"cp {data}/$(cat variant.txt)/{name} {{out}}/"
    (repo / "cases" / "matrix.toml").write_text(
        f'[[case]]\nid = "{kind}"\nargv = {json.dumps(script)}\nshell = true\n'
        f'outputs = ["{name}"]\ntimeout_s = 600\n[case.compare]\n"{name}" = {spec}\n'
    )
    git(repo, "init", "-q", "-b", "main")
    (repo / "variant.txt").write_text("base")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "variant.txt").write_text("cand")
    git(repo, "commit", "-qam", "cand")
    biggest = max((data / v / name for v in ("base", "cand")), key=lambda p: p.stat().st_size)
    return repo, biggest


def compared(kind: str, mib: int, tmp: Path) -> tuple[float, int, int, Path]:
    """Peak RSS of `fidelity compare` over a run of one kind and size, and exit codes."""
    repo, biggest = build(tmp / f"{kind}-{mib}", kind, mib)
    run_dir = tmp / f"run-{kind}-{mib}"
    argv = ["fidelity", "-q", "run", "--baseline", "HEAD~1", "--out", str(run_dir)]
    code = subprocess.run(argv, cwd=repo, capture_output=True, check=False).returncode
    rss, again = peak_rss_mib(["fidelity", "-q", "compare", str(run_dir)], repo)
    shutil.rmtree(tmp / f"{kind}-{mib}", ignore_errors=True)
    shutil.rmtree(run_dir, ignore_errors=True)
    return rss, code, again, biggest


def measure(kind: str, mib: int, tmp: Path) -> str:
    floor, *_ = compared(kind, 0, tmp)  # the same comparator's imports, on a tiny file
    repo, biggest = build(tmp / "sizes" / kind, kind, mib)
    size = biggest.stat().st_size / MIB
    shutil.rmtree(tmp / "sizes", ignore_errors=True)
    rss, code, again, _ = compared(kind, mib, tmp)
    per = (rss - floor) / size
    return (
        f"memory-{kind}: peak RSS {rss:.0f} MiB for `fidelity compare` over a {size:.0f} MiB "
        f"{kind} output (floor {floor:.0f} MiB for a tiny one): {per:.2f}x the file above the "
        f"floor; run exit {code}, compare exit {again}"
    )


def main() -> None:
    if sys.argv[1:2] == ["--write"]:
        kind, path, mib, moved = sys.argv[2:6]
        KINDS[kind][1](Path(path), int(mib), moved == "1")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--csv-mib", type=int, default=128)
    parser.add_argument("--json-mib", type=int, default=24)
    parser.add_argument("--text-mib", type=int, default=256)
    args = parser.parse_args()
    if benchenv.axis(args, numpy=True):
        return  # it ran once per core count, under taskset
    if shutil.which("fidelity") is None:
        sys.exit("install fidelity first (pip install .): this measures the installed CLI")
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        for kind, mib in (("csv", args.csv_mib), ("json", args.json_mib), ("text", args.text_mib)):
            print(measure(kind, mib, tmp), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
