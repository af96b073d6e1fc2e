"""check-docs' first run, its page shapes and the light commands' start-up, on 1, 2 and
all cores, against markdown-it-py's bare parse and `python -c pass`.

Run it with the interpreter of the installed `fidelity` (a non-editable install, from a
folder outside the source tree, as a user would). Every figure is the CPU time (user +
system, ``RUSAGE_CHILDREN``) of one child process tree, the median of ``--repeats``
interleaved rounds: each round runs every command of every core setting once, so that load
that comes and goes falls on all of them alike. A core setting is ``taskset -c 0`` (1),
``taskset -c 0,1`` (2) or no taskset (all); the floor runs under the same one. The header
states the interpreter, fidelity's and markdown-it-py's versions, ``os.cpu_count()`` and
the cores this process may use; the load average is printed before and after.

- ``--corpus``: 1,000 generated files of ~8 KB (``bench_check_docs.page``): the floor (a
  subprocess that parses each with markdown-it-py, commonmark + tables), the CLI's first
  run with an empty cache, its re-run, and ``--no-cache``.
- ``--shapes``: one page per shape: a 2.2 MB page of 60,000 broken ``#fragments`` (1,000
  listed), 1,000 broken fragments (all listed), bracket-heavy prose (unclosed ``[a``,
  reference-style ``[a][b]``, nested ``[[x]]``); first run with an empty cache and
  ``--no-cache``, each against the floor on the same page.
- ``--pages DIR`` (repeatable): the same four figures on real pages, every ``*.md`` under
  each DIR, copied with their folders so that links between them still resolve (issue 39:
  the generated corpus's prose has no punctuation, so nearly every inline token is bare
  text, a shape few real pages have).
- ``--startup``: ``python -c pass``, ``fidelity --version``, ``cases list`` (two cases) and
  ``check-docs`` on one 3 KB page (answered from the cache, and ``--no-cache``), and the
  floor of any check of a page not in the cache: markdown-it-py imported and the page parsed.

Usage: python scripts/bench_docs_cores.py [--corpus] [--pages DIR ...] [--shapes] [--startup]
       [--cores 1 2 all] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check_docs import FLOOR, page  # a sibling script, not a package

Command = list[str]
WORDS = ("fence", "anchor", "table", "record", "baseline", "matrix")


def cpu_of(cmd: Command, cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds of one child process tree (it must exit 0 or 1)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:5]} exited {done.returncode}: {done.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def core_settings(wanted: list[str]) -> dict[str, Command]:
    """The taskset prefix of each core setting this machine can give."""
    usable = sorted(os.sched_getaffinity(0))
    out: dict[str, Command] = {}
    for spec in wanted:
        if spec == "all":
            out[f"all ({len(usable)})"] = []
        elif int(spec) <= len(usable):
            out[spec] = ["taskset", "-c", ",".join(map(str, usable[: int(spec)]))]
        else:
            print(f"cores {spec}: skipped, this process may use {len(usable)}")
    return out


def header() -> None:
    fidelity = shutil.which("fidelity") or "(not on PATH)"
    version = subprocess.run(["fidelity", "--version"], capture_output=True, text=True).stdout
    print(f"interpreter: {sys.executable} (Python {platform.python_version()})")
    markdown_it = metadata.version("markdown-it-py")
    print(f"fidelity: {fidelity}, {version.strip()}; markdown-it-py {markdown_it}")
    print(f"os.cpu_count(): {os.cpu_count()}; this process may use {len(os.sched_getaffinity(0))}")
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def rounds(jobs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """Median CPU seconds of each job, the jobs run in turn ``repeats`` times."""
    seen: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(repeats):
        for name, job in jobs.items():
            seen[name].append(job())
    return {name: statistics.median(times) for name, times in seen.items()}


def first_run(root: Path, cli: Command, env: dict[str, str]) -> Callable[[], float]:
    def job() -> float:
        shutil.rmtree(root / ".fidelity", ignore_errors=True)
        return cpu_of(cli, root, env)

    return job


def run(cmd: Command, root: Path, env: dict[str, str]) -> Callable[[], float]:
    return lambda: cpu_of(cmd, root, env)


def corpus(root: Path, files: int) -> list[str]:
    rng = random.Random(20261130)
    names = []
    for n in range(files):
        name = f"page{n:04d}.md"
        (root / name).write_text(page(rng, n, files, 8), encoding="utf-8")
        names.append(name)
    return names


def corpus_figures(
    root: Path, env: dict[str, str], cores: dict[str, Command], repeats: int
) -> None:
    names = corpus(root, 1000)
    size = sum((root / n).stat().st_size for n in names) / 1e6
    print(f"corpus: 1,000 files, {size:.1f} MB")
    four_figures(root, env, cores, repeats, names)


def four_figures(
    root: Path, env: dict[str, str], cores: dict[str, Command], repeats: int, names: list[str]
) -> None:
    """The floor, the first run, the re-run and `--no-cache` on `names`, under each core
    setting, in interleaved rounds."""
    cli = ["fidelity", "-q", "check-docs", "--json", "-", "."]
    jobs: dict[str, Callable[[], float]] = {}
    for label, prefix in cores.items():
        jobs[f"{label}|floor"] = run([*prefix, sys.executable, "-c", FLOOR, *names], root, env)
        jobs[f"{label}|first run"] = first_run(root, [*prefix, *cli], env)
        jobs[f"{label}|re-run"] = run([*prefix, *cli], root, env)
        jobs[f"{label}|--no-cache"] = run([*prefix, *cli, "--no-cache"], root, env)
    report(rounds(jobs, repeats), repeats)


def real_figures(
    root: Path, env: dict[str, str], cores: dict[str, Command], repeats: int, sources: list[Path]
) -> None:
    names = []
    for k, source in enumerate(sources):
        for found in sorted(source.rglob("*.md")):
            if not found.is_file():
                continue
            name = Path(f"real{k}") / found.relative_to(source)
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, root / name)
            names.append(str(name))
    if not names:
        raise SystemExit(f"no *.md files under {', '.join(map(str, sources))}")
    size = sum((root / n).stat().st_size for n in names) / 1e6
    print(f"real pages: {len(names):,} files, {size:.1f} MB, from {', '.join(map(str, sources))}")
    four_figures(root, env, cores, repeats, names)


def broken_page(count: int, headings: int) -> str:
    rng = random.Random(5)
    parts = ["# Broken\n\n"]
    parts += [f"## Section {i} {WORDS[i % 6]}\n\nSome text here.\n\n" for i in range(headings)]
    parts += [
        f"See [s](#section-{rng.randrange(headings)}-{WORDS[rng.randrange(6)]}x) now.\n\n"
        for _ in range(count)
    ]
    return "".join(parts)


def brackets_page(unit: str, kb: int) -> str:
    line = unit * 12 + "\n"
    return "# Brackets\n\n" + "\n".join(line for _ in range(kb * 1000 // len(line)))


SHAPES = {
    "60,000 broken fragments (2.2 MB)": lambda: broken_page(60_000, 2_000),
    "1,000 broken fragments (all listed)": lambda: broken_page(1_000, 200),
    "unclosed '[a ' (500 KB)": lambda: brackets_page("[a ", 500),
    "'[a][b] ' undefined references (500 KB)": lambda: brackets_page("[a][b] ", 500),
    "nested '[[[x]]] ' (500 KB)": lambda: brackets_page("[[[x]]] ", 500),
}


def shape_figures(root: Path, env: dict[str, str], cores: dict[str, Command], repeats: int) -> None:
    (root / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_page_bytes = 100000000\n")
    jobs: dict[str, Callable[[], float]] = {}
    for n, (shape, make) in enumerate(SHAPES.items()):
        name = f"shape{n}.md"
        (root / name).write_text(make(), encoding="utf-8")
        cli = ["fidelity", "-q", "check-docs", name]
        for label, prefix in cores.items():
            jobs[f"{label}|{shape}|floor"] = run(
                [*prefix, sys.executable, "-c", FLOOR, name], root, env
            )
            jobs[f"{label}|{shape}|first run"] = first_run(root, [*prefix, *cli], env)
            jobs[f"{label}|{shape}|--no-cache"] = run([*prefix, *cli, "--no-cache"], root, env)
    report(rounds(jobs, repeats), repeats)


def startup_figures(
    root: Path, env: dict[str, str], cores: dict[str, Command], repeats: int
) -> None:
    (root / "cases").mkdir()
    (root / "cases" / "matrix.toml").write_text(
        '[matrix]\nname = "small"\n\n'
        '[[case]]\nid = "one"\nargv = ["sh", "-c", "echo 1 > {out}/a.txt"]\n'
        'outputs = [{ glob = "a.txt" }]\n\n'
        '[[case]]\nid = "two"\nargv = ["sh", "-c", "echo 2 > {out}/b.txt"]\n'
        'outputs = [{ glob = "b.txt" }]\n'
    )
    (root / "one.md").write_text(page(random.Random(3), 0, 1, 1), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "fidelity --version": ["fidelity", "--version"],
        "cases list": ["fidelity", "cases", "list"],
        "cases list -q": ["fidelity", "-q", "cases", "list"],
        "check-docs one page, cached": ["fidelity", "check-docs", "one.md"],
        "check-docs one page, --no-cache": ["fidelity", "check-docs", "--no-cache", "one.md"],
        # what any check of a page not in the cache needs: markdown-it-py imported, one parse
        "markdown-it import and parse of the page": [sys.executable, "-c", FLOOR, "one.md"],
    }
    cpu_of(commands["check-docs one page, cached"], root, env)  # the cache is kept from here
    jobs = {
        f"{label}|{name}": run([*prefix, *cmd], root, env)
        for label, prefix in cores.items()
        for name, cmd in commands.items()
    }
    medians = rounds(jobs, repeats)
    for label in cores:
        floor = medians[f"{label}|python -c pass"]
        for name in commands:
            m = medians[f"{label}|{name}"]
            print(f"cores {label}: {name}: {m:.3f} CPU s, +{m - floor:.3f} beyond python -c pass")
    print(f"(median of {repeats} interleaved rounds)")


def report(medians: dict[str, float], repeats: int) -> None:
    """Each figure, and its ratio to the floor measured under the same cores (and page)."""
    for key, value in medians.items():
        *where, what = key.split("|")
        floor = medians["|".join([*where, "floor"])]
        ratio = "" if what == "floor" else f" = {value / floor:.2f}x the floor"
        print(f"cores {' | '.join(where)}: {what}: {value:.3f} CPU s{ratio}")
    print(f"(median of {repeats} interleaved rounds)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--shapes", action="store_true")
    parser.add_argument("--startup", action="store_true")
    parser.add_argument("--pages", action="append", type=Path, default=[], metavar="DIR")
    parser.add_argument("--cores", nargs="+", default=["1", "2", "all"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    modes = ("corpus", "pages", "shapes", "startup")
    chosen = [m for m in modes if getattr(args, m)] or ["corpus", "shapes", "startup"]
    header()
    cores = core_settings(args.cores)
    figures: dict[str, Callable[..., None]] = {
        "corpus": corpus_figures,
        "pages": functools.partial(real_figures, sources=[p.resolve() for p in args.pages]),
        "shapes": shape_figures,
        "startup": startup_figures,
    }
    for mode in chosen:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / ".git").mkdir()
            env = {**os.environ, "FIDELITY_CACHE_KEY_FILE": str(root / "cache.key")}
            print(f"-- {mode}")
            figures[mode](root, env, cores, args.repeats)
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
