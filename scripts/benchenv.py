"""What every benchmark script says about where it ran, and its core-count axis.

Each script prints `header()` first: the interpreter running the script and the one behind
the installed `fidelity` command (with numpy's version where the script's workload uses
numpy), `os.cpu_count()` (the machine's cores) and the cores the run may use (its CPU
affinity). A figure measured on 2 cores can differ from one on 16 (issue 39: OpenBLAS
started a thread per core as numpy loaded), so a row names both.

`--cores 1,2,all` (`axis`) runs the whole script once per count, each time again under
`taskset -c` (the affinity is inherited by everything it starts: fidelity, git, the
cases): the first N cores it may use, or all of them. Without `--cores` the script runs
once, as started. A count larger than the cores it may use is skipped, and said.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

HELP = "core counts to run under, e.g. 1,2,all (taskset -c; default: as started, once)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cores", default="", metavar="N,N,all", help=HELP)


def usable() -> list[int]:
    """The cores this process may run on."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _fidelity_python() -> str | None:
    """The interpreter of the installed `fidelity` command (its script's #! line)."""
    found = shutil.which("fidelity")
    if found is None:
        return None
    with open(found, "rb") as script:
        first = script.readline().decode(errors="replace").strip()
    return first[2:].split()[0] if first.startswith("#!") else None


def _describe(python: str, numpy: bool) -> str:
    code = "import sys; print(sys.version.split()[0], end='')"
    if numpy:
        code += "\ntry:\n import numpy; print(', numpy', numpy.__version__, end='')\n"
        code += "except ImportError: print(', no numpy', end='')"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return f"{python} {done.stdout.strip() or '(did not start)'}"


def header(numpy: bool = False) -> str:
    """One line: both interpreters, numpy where used, the machine's and the run's cores."""
    cores = usable()
    run = f"{len(cores)} ({','.join(map(str, cores))})" if cores else "?"
    theirs = _fidelity_python()
    return (
        f"# script: {_describe(sys.executable, numpy)}; fidelity: "
        f"{_describe(theirs, numpy) if theirs else 'not installed'}; "
        f"os.cpu_count() {os.cpu_count()}; cores this run may use: {run}"
    )


def _without_cores(argv: list[str]) -> list[str]:
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--cores":
            skip = True
        elif not arg.startswith("--cores="):
            kept.append(arg)
    return kept


def axis(args: argparse.Namespace, numpy: bool = False) -> bool:
    """With `--cores`, run the script again under taskset for each count and return True
    (the caller then stops); without, print the header and return False (it measures)."""
    if not args.cores:
        print(header(numpy), flush=True)
        return False
    cores = usable()
    for count in [c.strip() for c in args.cores.split(",") if c.strip()]:
        chosen = cores if count == "all" else cores[: int(count)]
        if count != "all" and int(count) > len(cores):
            print(f"# cores {count}: skipped, this run may use {len(cores)}", flush=True)
            continue
        listed = ",".join(map(str, chosen))
        print(f"# cores {count}: taskset -c {listed}", flush=True)
        again = [sys.executable, os.path.abspath(sys.argv[0]), *_without_cores(sys.argv[1:])]
        subprocess.run(["taskset", "-c", listed, *again], check=True)
    return True
