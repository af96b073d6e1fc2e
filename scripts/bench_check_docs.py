"""Time `fidelity check-docs` over a synthetic corpus and one ~250 KB page.

Generates, in a temp dir, N Markdown files (default 600) of headings, prose, lists, quotes,
keyed tables, fences and cross-file links with anchors, plus one page of ~250 KB built from
the same pieces. Times the checkers in-process (parse + every rule, median of repeats) and
the real CLI as a subprocess (adds interpreter start-up and imports). Deterministic text;
prints one line per figure. Usage: python scripts/bench_check_docs.py [--files N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli_seconds(root: Path, args: list[str], repeats: int) -> float:
    cmd = ["fidelity", "-q", "check-docs", "--root", str(root), *args]  # the installed CLI

    def once() -> None:
        subprocess.run(cmd, cwd=root, capture_output=True, timeout=600, check=False)

    return median_seconds(once, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
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
    print(f"in-process, {n} files: {corpus:.3f} s ({reps})")
    print(f"in-process, {big_kb:.0f} KB page with linked files' anchors: {single:.3f} s ({reps})")
    print(f"in-process, {big_kb:.0f} KB page alone (link targets cached): {own:.3f} s ({reps})")
    print(f"CLI subprocess, {n} files: {cli_corpus:.3f} s (median of 3)")
    print(f"CLI subprocess, {big_kb:.0f} KB page: {cli_big:.3f} s (median of 3)")
    print(f"CLI subprocess, one 3 KB page (start-up floor): {cli_floor:.3f} s (median of 3)")


if __name__ == "__main__":
    main()
