"""What a run costs must not grow with the machine's cores: every pool fidelity starts is
sized by the work and `--jobs`, never by `os.cpu_count()` (issue 39).

Timing-free: the threads are counted. A case counts the threads of the fidelity process
that started it (`/proc/PPID/task`), so the runner's pools are seen from outside while
they run, under `--jobs 1` and `--jobs 4`; and a process that compares two CSV files the
way fidelity does counts its own threads afterwards, where OpenBLAS, left to itself, starts
one per core as numpy loads (each spinning before it sleeps: 135 CPU-ms for `import numpy`
on 2 cores against 75 with one thread). That second test was red before `fidelity.blas`
on any machine of 2 cores or more (2 threads on the 2-core machine it was written on).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import PY, Repo

ROOT = Path(__file__).resolve().parents[1]
LINUX = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts /proc tasks")

# each case writes how many threads its parent, fidelity, has while the case runs
COUNT = "ls /proc/$PPID/task | wc -l > {out}/threads.txt"


def threads_seen(repo: Repo, tmp_path: Path, jobs: int) -> list[int]:
    run = tmp_path / f"run-{jobs}"
    done = subprocess.run(
        [PY, "-m", "fidelity", "-q", "run", "--baseline", "HEAD", "--jobs", str(jobs)]
        + ["--out", str(run)],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # the counts may differ between the sides (moved, exit 1): they are read, not judged
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return [int(p.read_text()) for p in sorted(run.glob("*/cases/*/out/threads.txt"))]


@LINUX
def test_the_runners_threads_come_from_jobs_not_from_the_cores(make_repo, tmp_path: Path) -> None:
    """The main thread, one per side, and per side half of --jobs (rounded up) for its
    cases: 5 threads under --jobs 1 and 7 under --jobs 4, on any machine. A pool sized by
    the machine (ThreadPoolExecutor's default, min(32, cores + 4)) shows more."""
    repo: Repo = make_repo("r")
    cases = [
        f'[[case]]\nid = "c{i}"\noutputs = ["threads.txt"]\nshell = true\nargv = """{COUNT}"""\n'
        for i in range(6)
    ]
    repo.commit({"cases/matrix.toml": "\n".join(cases)})
    for jobs, threads in ((1, 1 + 2 + 2), (4, 1 + 2 + 4)):
        seen = threads_seen(repo, tmp_path, jobs)
        assert len(seen) == 12 and max(seen) <= threads, (jobs, seen, os.cpu_count())


PROBE = """
import json, os, subprocess, sys
from fidelity.kinds import registry
rows = [(i, i * 0.1) for i in range(200)]
base = "".join(f"{i},{x!r}\\n" for i, x in rows).encode()
cand = "".join(f"{i},{x * (1 + 1e-12)!r}\\n" for i, x in rows).encode()
found = registry.explain("t.csv", b"id,x\\n" + base, b"id,x\\n" + cand, {"kind": "csv", "rtol": 1e-9})
child = subprocess.run(["sh", "-c", "echo ${OPENBLAS_NUM_THREADS-unset}"], capture_output=True)
print(json.dumps({
    "numpy": "numpy" in sys.modules,
    "threads": len(os.listdir("/proc/self/task")),
    "child": child.stdout.decode().strip(),
    "here": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
    "judged": found.kind,
}))
"""


def compare_probe(**env: str) -> dict[str, object]:
    """Run the probe in a fresh interpreter, none of the BLAS variables set but `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@LINUX
def test_a_numeric_compare_starts_no_blas_thread_per_core_and_leaks_no_setting() -> None:
    found = compare_probe()
    assert found["numpy"] is True and found["judged"] == "csv", found
    assert found["threads"] == 1, (found, os.cpu_count())
    assert found["child"] == "unset" and found["here"] == "unset", found


@LINUX
def test_a_blas_setting_of_the_users_own_is_left_as_it_is() -> None:
    found = compare_probe(OPENBLAS_NUM_THREADS="2")
    assert found["child"] == "2" and found["here"] == "2", found
