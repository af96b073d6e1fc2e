"""A simulator as it is: outputs under a folder named by the run's start time, a config dump
that embeds its own output path, and a declared output it never writes."""

from __future__ import annotations

import json

from support import PY, Repo

from fidelity.matrix import gate, rejudge
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome

SIM = """
import argparse, datetime, json, pathlib, time
p = argparse.ArgumentParser()
p.add_argument("--lanes", type=int)
p.add_argument("--out")
a = p.parse_args()
shift = int(pathlib.Path("shift.txt").read_text())
started = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
folder = pathlib.Path(a.out) / "simulator_output" / started
folder.mkdir(parents=True)
rows = [(i, i * 10 + (shift * (i % a.lanes) if a.lanes > 1 else 0)) for i in range(20)]
(folder / "request_metrics.csv").write_text(
    "request_id,latency_ms\\n" + "".join(f"{i},{v}\\n" for i, v in rows)
)
(folder / "config.json").write_text(json.dumps(
    {"lanes": a.lanes, "output_dir": str(folder.parent.parent), "started": started}
))
"""


def table(optional: bool) -> str:
    flag = "true" if optional else "false"
    cases = []
    for lanes in (1, 2):
        cases.append(f"""
[[case]]
id = "lanes{lanes}"
argv = [{json.dumps(PY)}, "sim.py", "--lanes", "{lanes}", "--out", "{{out}}"]
outputs = [
  {{ glob = "simulator_output/*/**", strip = "simulator_output/*/" }},
  {{ glob = "latency_histogram.csv", optional = {flag} }},
]

[case.compare."request_metrics.csv"]
kind = "csv"
key = ["request_id"]

[case.compare."config.json"]
kind = "json"
ignore = ["started"]
""")
    return "\n".join(cases)


def run(repo: Repo, optional: bool, shift_after: int) -> Outcome:
    base = repo.commit({"sim.py": SIM, "shift.txt": "0", "cases/matrix.toml": table(optional)})
    repo.commit({"shift.txt": str(shift_after), "sim.py": SIM + "\n# refactored\n"})
    return gate.run(repo.path, RunRequest(base, "HEAD"))


def verdicts(outcome: Outcome) -> dict[str, str]:
    return {r.case_id: str(r.verdict) for r in outcome.comparison.cases}


def test_a_refactor_holds_when_the_unwritten_output_is_declared_optional(make_repo) -> None:
    outcome = run(make_repo("sim"), optional=True, shift_after=0)
    assert outcome.findings == (), outcome.findings
    assert verdicts(outcome) == {"lanes1": "within-tolerance", "lanes2": "within-tolerance"}
    assert outcome.exit_code == 0
    assert set(outcome.candidate.cases["lanes2"].outputs) == {"request_metrics.csv", "config.json"}
    assert rejudge.recompare(outcome.run_dir).exit_code == 0


def test_the_same_refactor_reports_a_required_output_that_never_appears(make_repo) -> None:
    outcome = run(make_repo("sim"), optional=False, shift_after=0)
    missing = [f for f in outcome.findings if f.code is Code.MISSING_EVIDENCE]
    assert {f.case_id for f in missing} == {"lanes1", "lanes2"}
    assert "no file matches 'latency_histogram.csv'" in missing[0].message
    assert outcome.exit_code == 3


def test_a_real_change_moves_exactly_the_changed_case_and_still_reports_the_missing_output(
    make_repo,
) -> None:
    outcome = run(make_repo("sim"), optional=False, shift_after=7)
    assert verdicts(outcome) == {"lanes1": "missing-evidence", "lanes2": "moved"}
    moved = outcome.comparison.cases[1]
    by_path = {e.path: e for e in moved.explained}
    assert by_path["request_metrics.csv"].columns == ("latency_ms",)
    assert by_path["config.json"].within_tolerance  # only its own output path differs
    assert any(f.code is Code.MISSING_EVIDENCE and f.case_id == "lanes2" for f in outcome.findings)
    optional = run(make_repo("sim2"), optional=True, shift_after=7)
    assert verdicts(optional) == {"lanes1": "within-tolerance", "lanes2": "moved"}
    assert optional.findings == () and optional.exit_code == 1
