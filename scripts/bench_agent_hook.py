"""Time the installed `fidelity preflight --agent-hook` as an agent runs it: one process per
tool call, the event on stdin.

Measured, interleaved round by round (so a load change hits every command alike), CPU
(user + system of the process and its git children) and wall time:

- the start-up floor, `fidelity --version`;
- calls that cannot commit (`ls -la`, a chain of git queries, `python -m pytest ...`, a
  200-line script in a here-document): the hook's cost beyond start-up is what an agent
  pays on every Bash call (goal: under 0.1 CPU-s);
- commits with a message of 0.5, 1, 2 and 4 MiB in a repository with nothing configured
  (the line is read, the commit found, the gates find nothing to judge): the cost must grow
  linearly with the message (the shlex reader this replaced took 60 CPU-s at 2 MiB).

Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_agent_hook.py [--rounds N] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

FIDELITY = shutil.which("fidelity") or "fidelity"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def event(command: str, cwd: Path) -> bytes:
    data = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)}
    return json.dumps(data).encode()


def once(argv: list[str], stdin: bytes | None, cwd: Path) -> tuple[float, float, int]:
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(argv, input=stdin, cwd=cwd, capture_output=True, env=ENV, timeout=600)
    return time.perf_counter() - start, _cpu() - cpu, done.returncode


def repository(where: Path) -> Path:
    repo = where / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "README.md").write_text("# r\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "root"], cwd=repo, check=True)
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    script = "\n".join(f"echo step {i} && ls -la > /dev/null" for i in range(200))
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        repo = repository(Path(tmp))
        hook = [FIDELITY, "preflight", "--agent-hook"]
        calls: dict[str, tuple[list[str], bytes | None]] = {
            "start-up (--version)": ([FIDELITY, "--version"], None),
            "ls -la": (hook, event("ls -la", repo)),
            "git queries": (hook, event("git status && git log --oneline -5 | cat", repo)),
            "pytest": (hook, event("python -m pytest -q tests/test_x.py -k 'a and b'", repo)),
            "200-line script": (hook, event(f"bash <<'EOF'\n{script}\nEOF", repo)),
        }
        for mib in (0.5, 1, 2, 4):
            message = "x" * int(mib * 1024 * 1024)
            calls[f"commit, {mib} MiB message"] = (hook, event(f"git commit -m '{message}'", repo))
        for argv, stdin in calls.values():  # warm-up: bytecode caches written
            once(argv, stdin, repo)
        walls: dict[str, list[float]] = {name: [] for name in calls}
        cpus: dict[str, list[float]] = {name: [] for name in calls}
        codes: dict[str, int] = {}
        for _ in range(args.rounds):
            for name, (argv, stdin) in calls.items():
                wall, cpu, codes[name] = once(argv, stdin, repo)
                walls[name].append(wall)
                cpus[name].append(cpu)
    floor = statistics.median(cpus["start-up (--version)"])
    print(f"rounds {args.rounds}, load average {os.getloadavg()[0]:.2f} at the end")
    print(f"{'call':<28} {'exit':>4} {'wall s':>8} {'CPU s':>8} {'CPU beyond start-up':>20}")
    for name in calls:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:<28} {codes[name]:>4} {wall:>8.3f} {cpu:>8.3f} {cpu - floor:>20.3f}")


if __name__ == "__main__":
    main()
