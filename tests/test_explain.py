"""Outputs explained while the run runs: the meeting point gives what explaining after the
last case gives, and a comparison holds one of the run's `--jobs` slots."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from support import PY

from fidelity.matrix import gate
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.compare import compare
from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus
from fidelity.matrix.verdict.explain import Arrival, Meeting, explain_case, explanations

SPEC = {"m.csv": {"kind": "csv", "key": ["id"], "rtol": 0.01}}


def _side(run_dir: Path, role: str, text: str) -> Arrival:
    out = run_dir / role / "cases" / "m" / "out"
    out.mkdir(parents=True)
    (out / "m.csv").write_text(text)
    evidence = CaseEvidence("m", "d" * 64, CaseStatus.OK, 0, outputs={"m.csv": role})
    return Arrival(role, evidence, f"/wt/{role}")


def test_the_second_arrival_explains_and_holds_a_slot_meanwhile(tmp_path: Path) -> None:
    base = _side(tmp_path, "baseline", "id,v\n1,1.0\n2,2.0\n")
    cand = _side(tmp_path, "candidate", "id,v\n1,1.001\n2,3.0\n")
    meeting = Meeting(tmp_path, {"m": SPEC, "other": {}})
    budget = threading.Semaphore(1)
    meeting.arrived(cand, budget)
    assert meeting.explained == {}  # one side alone explains nothing
    meeting.arrived(Arrival("baseline", CaseEvidence("other", "d", CaseStatus.OK), ""), budget)
    budget.acquire()  # every slot taken: the comparison waits for one
    second = threading.Thread(target=meeting.arrived, args=(base, budget))
    second.start()
    second.join(0.3)
    assert second.is_alive() and meeting.explained == {}
    budget.release()
    second.join(10)
    assert meeting.explained == {"m": explain_case(tmp_path, base, cand, SPEC, tmp_path)}
    assert meeting.explained["m"][0].keys == ("2",)


def test_a_run_explains_as_it_would_after_the_last_case(make_repo) -> None:
    copy = "import shutil, sys; shutil.copy('m.csv', sys.argv[1])"
    cases = "".join(
        f'[[case]]\nid = "c{i}"\nargv = [{json.dumps(PY)}, "-c", {json.dumps(copy)}, "{{out}}"]\n'
        'outputs = ["m.csv"]\n'
        for i in range(4)
    )
    table = cases + '[matrix.compare."m.csv"]\nkind = "csv"\nkey = ["id"]\natol = 0.01\n'
    repo = make_repo("meet")
    base = repo.commit({"m.csv": "id,v\n1,1.000\n2,2.000\n", "cases/matrix.toml": table})
    repo.commit({"m.csv": "id,v\n2,2.005\n1,1.5\n"})
    outcome = gate.run(repo.path, RunRequest(base, "HEAD", jobs=3))
    assert {str(r.verdict) for r in outcome.comparison.cases} == {"moved"}
    specs = {f"c{i}": {"m.csv": {"kind": "csv", "key": ["id"], "atol": 0.01}} for i in range(4)}
    after = explanations(outcome.run_dir, outcome.baseline, outcome.candidate, specs)
    declared = [(c, e.definition_sha) for c, e in outcome.baseline.cases.items()]
    again = compare(declared, outcome.baseline, outcome.candidate, after)
    assert [r.explained for r in again.cases] == [r.explained for r in outcome.comparison.cases]
    assert outcome.comparison.cases[0].explained[0].keys == ("1",)
