"""Time `fidelity check-docs` and measure its peak memory, against markdown-it-py itself.

Generates, in a temp dir, N Markdown files (default 600) of headings, prose, lists, quotes,
keyed tables, fences and cross-file links with anchors, plus one page of ~250 KB built from
the same pieces. Times the checkers in-process (parse + every rule, median of repeats) and
the real CLI as a subprocess (adds interpreter start-up and imports).

``--cache``: a larger corpus (``--cache-files``, default 1,000 files of ~8 KB) checked by
the installed CLI with an empty cache, then again unchanged, each against the floor measured
in the same run: a subprocess that reads the same files and runs markdown-it-py's bare
parse (commonmark + tables) on each, nothing else. Median of ``--repeats``.

``--memory``: peak RSS of the CLI (the child's ``ru_maxrss``, one fresh process per figure)
on one page of each size in ``--pages-mb``, with ``max_page_bytes`` raised so that each is
parsed, and on the largest with the default ``max_page_bytes`` (not parsed: FD702).

Deterministic text; prints one line per figure.
Core-count axis: `--cores 1,2,all` runs the whole script once under each (`taskset -c`,
scripts/benchenv.py): a flag, since each run is minutes long; without it, one run as
started. The first line printed names both interpreters, os.cpu_count() and the
cores the run may use.
Usage: python scripts/bench_check_docs.py [--files N] [--cache] [--memory] [--cores 1,2,all]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import benchenv  # scripts/: the header and the --cores axis

from checkers.check import Page, check_pages, check_text
from checkers.config import from_section
from checkers.site import Site

WORDS = [
    *("fidelity", "record", "baseline", "candidate", "matrix", "case", "moved", "prediction"),
    *("held", "control", "survived", "ratchet", "fence", "anchor", "table", "row", "cell"),
    *("commit", "harness", "worktree", "evidence", "gate", "figure"),
]
CONFIG = from_section({"page": [{"path": "*.md", "keyed_tables": {"key": "row"}}]})


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def section(rng: random.Random, index: int, files: int) -> str:
    other = rng.randrange(files)
    word = rng.choice(WORDS)
    rows = "".join(
        f"| r{index}-{k} | {rng.random():.3f} s \\| wall | abc{k:04d} |\n" for k in range(6)
    )
    parts = [
        f"## Section {index} {word}\n",
        sentence(rng, 30) + f" See [page {other}](page{other:04d}.md#page-{other}) and "
        f"[above](#section-{index}-{word}) and `inline [code](nope.md)`.\n",
        "\n".join(f"- {sentence(rng, 8)}" for _ in range(3)) + "\n",
        "> " + sentence(rng, 20) + "\n",
        "```python\nprint('[not a link](nowhere.md)')\n```\n",
        "| row | figure | commit |\n|---|---|---|\n" + rows,
    ]
    return "\n".join(parts)


def page(rng: random.Random, number: int, files: int, sections: int) -> str:
    body = "\n".join(section(rng, i, files) for i in range(sections))
    return f"# Page {number}\n\n{body}"


def build(root: Path, files: int) -> tuple[list[Page], Page]:
    rng = random.Random(20260101)
    pages = []
    for n in range(files):
        name = f"page{n:04d}.md"
        (root / name).write_text(page(rng, n, files, 3), encoding="utf-8")
        pages.append(Page(name, name))
    text = f"# Page {files}\n\n"
    i = 0
    while len(text.encode()) < 250_000:
        text += section(rng, i, files) + "\n"
        i += 1
    (root / "big.md").write_text(text, encoding="utf-8")
    return pages, Page("big.md", "big.md")


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    """Median CPU seconds of this process (the machine is shared: waiting is not cost)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def cli_seconds(root: Path, args: list[str], repeats: int) -> float:
    """Median CPU seconds of the installed CLI, every page checked (no cache)."""
    cmd = ["fidelity", "-q", "check-docs", "--no-cache", "--root", str(root), *args]
    return statistics.median(timed(cmd, root)[0] for _ in range(repeats))


FLOOR = """
import pathlib, sys
from markdown_it import MarkdownIt
md = MarkdownIt("commonmark").enable("table")
for name in sys.argv[1:]:
    md.parse(pathlib.Path(name).read_text(encoding="utf-8"))
"""

PEAK = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and what it printed.

    CPU time rather than wall time: the machine is shared, and waiting for a core is not
    the command's cost. Start-up and imports are included.
    """
    start = _children_cpu()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    return _children_cpu() - start, done.stdout


def cache_figures(files: int, repeats: int) -> None:
    """First run and unchanged re-run of the CLI, each as a ratio of the parse floor."""
    floors, firsts, reruns, plain = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        rng = random.Random(20261130)
        names = []
        for n in range(files):
            name = f"page{n:04d}.md"
            (root / name).write_text(page(rng, n, files, 8), encoding="utf-8")
            names.append(name)
        size = sum((root / n).stat().st_size for n in names) / 1e6
        cli = ["fidelity", "-q", "check-docs", "--root", str(root), "--json", "-", "."]
        for _ in range(repeats):
            floors.append(timed([sys.executable, "-c", FLOOR, *names], root)[0])
            shutil.rmtree(root / ".fidelity", ignore_errors=True)
            seconds, first = timed(cli, root)
            firsts.append(seconds)
            seconds, again = timed(cli, root)
            reruns.append(seconds)
            assert json.loads(first) == json.loads(again), "the cache changed the answer"
            plain.append(timed([*cli, "--no-cache"], root)[0])
    floor = statistics.median(floors)
    reps = f"median of {repeats}"
    print(f"cache corpus: {files} files, {size:.1f} MB")
    print(f"floor, markdown-it-py bare parse in a subprocess: {floor:.3f} CPU s ({reps})")
    for label, runs in (
        ("first run, empty cache", firsts),
        ("unchanged re-run", reruns),
        ("--no-cache", plain),
    ):
        median = statistics.median(runs)
        print(f"CLI {label}: {median:.3f} CPU s = {median / floor:.2f}x the floor ({reps})")


def peak_kb(cmd: list[str], cwd: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *cmd], cwd=cwd, capture_output=True, text=True, check=True
    )
    code, kb = done.stdout.split()
    return int(code), int(kb)


def memory_figures(sizes_mb: list[float]) -> None:
    """Peak RSS of the CLI per page size, and on a page over the default max_page_bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        (root / "tiny.md").write_text("# Tiny\n")
        cli = ["fidelity", "-q", "check-docs", "--no-cache", "--root", str(root)]
        _, base = peak_kb([*cli, "tiny.md"], root)
        print(f"peak RSS, CLI on a 7-byte page (start-up floor): {base / 1024:.0f} MB")
        rng = random.Random(7)
        for mb in sizes_mb:
            parts, size, i = [], 0, 0
            while size < mb * 1e6:
                parts.append(section(rng, i, 50) + "\n")
                size += len(parts[-1])
                i += 1
            name = f"big{mb:g}.md"
            (root / name).write_text("# Big\n\n" + "".join(parts), encoding="utf-8")
            (root / "pyproject.toml").write_text(
                "[tool.fidelity.docs]\nmax_page_bytes = 1000000000\n"
            )
            _, kb = peak_kb([*cli, name], root)
            per = (kb - base) * 1024 / (size)
            print(
                f"peak RSS, CLI on one {size / 1e6:.1f} MB page: {kb / 1024:.0f} MB "
                f"({per:.0f}x the page above the start-up floor)"
            )
        (root / "pyproject.toml").unlink()
        code, kb = peak_kb([*cli, name], root)
        print(
            f"peak RSS, CLI on the {size / 1e6:.1f} MB page with the default max_page_bytes "
            f"(exit {code}, FD702, not parsed): {kb / 1024:.0f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benchenv.add_arguments(parser)
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cache", action="store_true", help="only the cache figures")
    parser.add_argument("--cache-files", type=int, default=1000)
    parser.add_argument("--memory", action="store_true", help="only the memory figures")
    parser.add_argument("--pages-mb", type=float, nargs="+", default=[1.0, 4.0, 21.0])
    args = parser.parse_args()
    if benchenv.axis(args):
        return  # it ran once per core count, under taskset
    if args.cache or args.memory:
        if args.cache:
            cache_figures(args.cache_files, min(args.repeats, 3))
        if args.memory:
            memory_figures(args.pages_mb)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pages, big = build(root, args.files)
        corpus_kb = sum((root / p.rel).stat().st_size for p in pages) / 1000
        big_kb = (root / "big.md").stat().st_size / 1000
        result = check_pages(root, tuple(pages), CONFIG)
        assert not result.findings, result.findings[:3]  # the corpus is clean by construction
        corpus = median_seconds(lambda: check_pages(root, tuple(pages), CONFIG), args.repeats)
        single = median_seconds(lambda: check_pages(root, (big,), CONFIG), args.repeats)
        text = (root / big.rel).read_text(encoding="utf-8")
        site = Site(root)
        rules = CONFIG.rules_for(big.rel)
        check_text(text, big, rules, site)  # warm the link-target cache
        own = median_seconds(lambda: check_text(text, big, rules, site), args.repeats)
        targets = len(site.anchor_files()) - 1
        cli_corpus = cli_seconds(root, [p.rel for p in pages], 3)
        cli_big = cli_seconds(root, ["big.md"], 3)
        cli_floor = cli_seconds(root, ["page0000.md"], 3)
    n, reps = len(pages), f"median of {args.repeats}"
    print(f"corpus: {n} files, {corpus_kb:.0f} KB; page: {big_kb:.0f} KB linking {targets} files")
    print(f"in-process, {n} files: {corpus:.3f} CPU s ({reps})")
    print(
        f"in-process, {big_kb:.0f} KB page with linked files' anchors: {single:.3f} CPU s ({reps})"
    )
    print(f"in-process, {big_kb:.0f} KB page alone (link targets read): {own:.3f} CPU s ({reps})")
    print(f"CLI subprocess, {n} files: {cli_corpus:.3f} CPU s (median of 3)")
    print(f"CLI subprocess, {big_kb:.0f} KB page: {cli_big:.3f} CPU s (median of 3)")
    print(f"CLI subprocess, one 3 KB page (start-up floor): {cli_floor:.3f} CPU s (median of 3)")


if __name__ == "__main__":
    main()
