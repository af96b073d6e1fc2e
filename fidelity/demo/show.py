"""`fidelity demo`: a tiny simulator repository with three commits, gated by each entry of
`GATES` in turn, then its mutation controls, while the fix gate's page is drawn.

The repository is materialised from files shipped in the package (so it works from a
non-editable install): a baseline whose DP lane index restarts at lane 0 on every
scheduling call, a refactor that changes no behaviour, and a fix that keeps the rotation.
A new gate is one more `Gate`; a new case is one more `[[case]]` in files/cases/matrix.toml.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from fidelity import blas
from fidelity.controls import gate as controls
from fidelity.controls import render as controls_render
from fidelity.errors import UsageError
from fidelity.git import command, objects
from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict import render
from fidelity.matrix.verdict.outcome import Outcome

EXPECTED_MOVES = frozenset({"dp2-online", "dp2-online-r2", "dp4-online"})
RULE_WIDTH = 80  # a heading rule, even on a console as wide as a log (fidelity.cli.console)
_IDENTITY = ("-c", "user.name=fidelity demo", "-c", "user.email=demo@fidelity.invalid")


def _copy(src: Traversable, dest: Path) -> None:
    if src.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        for child in src.iterdir():
            if child.name != "__pycache__":
                _copy(child, dest / child.name)
    else:
        dest.write_bytes(src.read_bytes())


def _commit(repo: Path, variant: Traversable, message: str) -> str:
    (repo / "tinysim" / "scheduler.py").write_bytes(variant.read_bytes())
    command.git(repo, "add", "-A")
    command.git(repo, *_IDENTITY, "commit", "-q", "--no-verify", "-m", message)
    return objects.rev_parse(repo, "HEAD")


def materialise(dest: Path) -> dict[str, str]:
    """Build the demo repository at dest; return the three commits by name."""
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"demo directory {dest} is not empty; pass an empty or new --dir")
    files = resources.files("fidelity.demo").joinpath("files")
    dest.mkdir(parents=True, exist_ok=True)
    command.git(dest, "init", "-q", "-b", "main")
    for name in ("tinysim", "cases", "tests"):
        _copy(files.joinpath(name), dest / name)
    (dest / "README.md").write_bytes(files.joinpath("README.md").read_bytes())
    (dest / ".gitignore").write_bytes(files.joinpath("gitignore").read_bytes())
    variants = files.joinpath("variants")
    return {
        "baseline": _commit(dest, variants.joinpath("scheduler_baseline.py"), "baseline"),
        "refactor": _commit(
            dest, variants.joinpath("scheduler_refactor.py"), "refactor: extract _slot"
        ),
        "fix": _commit(
            dest, variants.joinpath("scheduler_fix.py"), "fix: keep DP lane rotation across calls"
        ),
    }


def _rule(console: Console, title: str) -> None:
    console.print(Rule(title), width=RULE_WIDTH)


@dataclass(frozen=True, slots=True)
class Gate:
    """One `fidelity run` of the demo and the verdict it exists to show. The sides name
    commits of `materialise`; the case table is the fix commit's (it holds the harness)."""

    title: str  # shown after its number, its place in GATES
    baseline: str
    candidate: str
    claim: str  # the summary's line when the verdict is the one shown
    exit_code: int
    expect: str | None = None
    moved: frozenset[str] | None = None  # the moved set the verdict must rest on, if any
    page: bool = False  # the one gate whose HTML page the demo writes
    replayed: str | None = None  # a case whose warm replay must reproduce on both sides


GATES = (
    Gate(
        "refactor vs baseline: nothing may move",
        "baseline",
        "refactor",
        "refactor gate holds, and dp1-online's cache reproduces its cold run (exit 0)",
        0,
        replayed="dp1-online",
    ),
    Gate(
        "fix vs refactor, predicted: the online multi-lane cases",
        "refactor",
        "fix",
        "fix prediction HELD (exit 0)",
        0,
        "cases/predict-fix.toml",
        EXPECTED_MOVES,
        page=True,
    ),
    Gate(
        "the same fix, against a deliberately wrong prediction",
        "refactor",
        "fix",
        "wrong prediction FALSIFIED (exit 1)",
        1,
        "cases/predict-wrong.toml",
    ),
)
HARNESS = "fix"


def _gate(
    console: Console, repo: Path, n: int, commits: Mapping[str, str], quiet: bool
) -> tuple[bool, Outcome]:
    """Run gate n (from 1) and show its verdict; True when it is the one it exists to show."""
    g = GATES[n - 1]
    _rule(console, f"{n}. {g.title}")
    asked = RunRequest(
        commits[g.baseline],
        commits[g.candidate],
        cases="cases/matrix.toml",
        harness_rev=commits[HARNESS],
        jobs=2,
        expect=g.expect,
    )
    outcome = gate.run(repo, asked)
    render.outcome(console, outcome, plain=quiet)
    moved = outcome.judged.moved if outcome.judged is not None else ()
    held = outcome.exit_code == g.exit_code and (g.moved is None or g.moved == frozenset(moved))
    return held and _reproduced(outcome, g.replayed), outcome


def _reproduced(outcome: Outcome, case_id: str | None) -> bool:
    """The case's warm replay reproduced its cold run on both sides (or none was asked)."""
    if case_id is None:
        return True
    sides = (outcome.baseline.cases.get(case_id), outcome.candidate.cases.get(case_id))
    return all(
        ev is not None and ev.replay is not None and ev.replay.verdict == "cache-reproduces"
        for ev in sides
    )


def control_jobs() -> int:
    """Lanes for the controls: one (a single worktree and warm pytest) on a machine of two
    cores or fewer, where a second lane costs more CPU than it saves wall time (records/
    benchmarks.md, controls-overhead-jobs2), and where the page is drawn meanwhile."""
    return 2 if (os.cpu_count() or 1) >= 4 else 1


def _controls(console: Console, repo: Path, quiet: bool) -> int:
    """The demo's cases/controls.toml against its HEAD."""
    table = controls.load(repo, "cases/controls.toml")
    _rule(console, f"{len(GATES) + 1}. mutation controls: every test must be seen to fail")
    report = controls.run(repo, table, "HEAD", jobs=control_jobs())
    controls_render.report(console, report, quiet=quiet)
    return report.exit_code()


def page_path(where: Path | None) -> Path:
    """Where the demo's page goes: under the demo repository's ignored .fidelity/ when it is
    kept (--dir), else a new file in the system's temp folder, kept after the demo."""
    if where is not None:
        return where.absolute() / ".fidelity" / "demo-report.html"
    handle, name = tempfile.mkstemp(prefix="fidelity-demo-", suffix=".html")
    os.close(handle)
    return Path(name)


def _page(outcome: Outcome, path: Path) -> Path:
    """The fix gate's HTML page: the moved cases with their plots."""
    blas.load_numpy()  # one BLAS thread, before the page's modules import numpy
    from fidelity.htmlreport import runpage  # numpy and the page's modules: in the page's thread

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(runpage.page(outcome), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the demo's HTML report {path}: {exc.strerror}") from exc
    return path


def _show_page(console: Console, n: int, drawn: Future[Path]) -> None:
    console.print(
        f"HTML report of gate {n} (what moved, with plots): {drawn.result()}; open it in a browser",
        markup=False,
        soft_wrap=True,
    )


def _demo(
    console: Console, where: Path, html: Path, pool: ThreadPoolExecutor, quiet: bool
) -> dict[str, bool]:
    """Every gate, then the controls, while the page is drawn in `pool` (its plots cost
    about as much CPU as a gate, and the controls leave a core to it)."""
    commits = materialise(where)
    console.print(f"demo repository: {where} (baseline, refactor, fix)", markup=False)
    shown: dict[str, bool] = {}
    drawn: dict[int, Future[Path]] = {}
    for n, g in enumerate(GATES, 1):
        shown[g.claim], outcome = _gate(console, where, n, commits, quiet)
        if g.page:
            drawn[n] = pool.submit(_page, outcome, html)
    ok = _controls(console, where, quiet) == 0
    shown["every control met its expectation (exit 0)"] = ok
    for n, page in drawn.items():
        _show_page(console, n, page)
    return shown


def main(
    console: Console, where: Path | None, html: Path | None = None, quiet: bool = False
) -> int:
    """Run the gates and the controls; 0 when each verdict is the one the demo exists to show.
    The fix gate's page is written to html (default: `page_path`); `quiet` (-q) prints each
    verdict one record per line, as the commands do for CI logs."""
    tmp = None
    if where is not None:  # the gates run in other folders: a relative --dir would move
        where = where.absolute()
    html = html or page_path(where)
    if where is None:
        tmp = Path(tempfile.mkdtemp(prefix="fidelity-demo-"))
        where = tmp / "tinysim"
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="demo-page") as pool:
            shown = _demo(console, where, html, pool, quiet)
        _rule(console, "demo")
        for claim, held in shown.items():
            console.print(f"{'ok  ' if held else 'FAIL'} {claim}", markup=False)
        if tmp is not None:
            console.print(
                f"the demo repository and the run directories named above were built in {tmp} "
                "and are now removed (the HTML page stays); pass --dir DIR to keep them",
                markup=False,
                soft_wrap=True,
            )
        return 0 if all(shown.values()) else 1
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
