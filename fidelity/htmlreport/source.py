"""`fidelity report RUN_DIR`: the page for a matrix run directory (run.json, judged again
as `fidelity compare` judges it) or a controls run directory (report.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fidelity.errors import UsageError
from fidelity.htmlreport import controlspage, runpage
from fidelity.matrix import rejudge
from fidelity.matrix.run import rundir
from fidelity.matrix.verdict import words

CONTROLS_REPORT = "report.json"
REPORT_BYTES = 64 * 2**20  # a controls report.json larger than this is not read


@dataclass(frozen=True, slots=True)
class Made:
    html: str
    verdict: str  # the verdict's words, as the terminal says them
    exit_code: int  # the verdict's, as `fidelity compare` (or `controls run`) exits


def _controls(path: Path) -> Made:
    if path.stat().st_size > REPORT_BYTES:
        raise UsageError(f"{path} is over {REPORT_BYTES // 2**20} MiB: not a controls report")
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{path} is not JSON ({exc}); is it a controls run's report.json?"
        ) from None
    ok = isinstance(data, dict) and isinstance(data.get("controls"), list)
    if not ok or not all(isinstance(c, dict) and "id" in c for c in data["controls"]):
        raise UsageError(f"{path} is not a controls report (no list of controls in it)")
    code = data.get("exit_code")
    return Made(
        controlspage.page(data), str(data.get("summary", "")), code if code in (0, 1) else 3
    )


def is_run(run_dir: Path) -> bool:
    """Whether run_dir holds a run of either kind (its files are evidence, never a page's)."""
    return any(
        (run_dir / name).is_file() for name in (rundir.MANIFEST, "plan.json", CONTROLS_REPORT)
    )


def make(run_dir: Path) -> Made:
    """The page of a run directory; UsageError when it holds neither kind of run."""
    if (run_dir / rundir.MANIFEST).is_file() or (run_dir / "plan.json").is_file():
        outcome = rejudge.recompare(run_dir)
        return Made(runpage.page(outcome), words.verdict(outcome), outcome.exit_code)
    if (run_dir / CONTROLS_REPORT).is_file():
        return _controls(run_dir / CONTROLS_REPORT)
    raise UsageError(
        f"{run_dir} holds neither run.json (a `fidelity run` directory) nor {CONTROLS_REPORT} "
        "(a `fidelity controls run` directory, named at the end of its output); name one"
    )
