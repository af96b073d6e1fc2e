"""Known failures, stated: a case that fails the same way on both sides (same status, exit
code and error class) can be accepted by the table (`[[accept]] finding = "both-failed"`)
or predicted (`failing`), each with its why; a failure that changes kind is not covered."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from support import PY, Repo

from fidelity import report_junit
from fidelity.errors import TableError
from fidelity.matrix import gate, rejudge, reports
from fidelity.matrix.cases import table
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict import words
from fidelity.matrix.verdict.compare import Verdict, failure_kind
from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.matrix.verdict.predict import Held, PredictionError

# v1 loads; "old" raises ValueError (exit 1); "key" raises KeyError (exit 1); "exit" exits 4
PROG = """
import pathlib, sys
out = pathlib.Path(sys.argv[1])
value = pathlib.Path("value.txt").read_text().strip()
if value.startswith("old"):
    raise ValueError("no loader for " + value)
if value == "key":
    raise KeyError(value)
if value == "exit":
    sys.exit(4)
(out / "result.txt").write_text(value)
"""
ACCEPT = (
    '[[accept]]\nfinding = "both-failed"\ncase = "loader"\n'
    'why = "the v0 loader crashes on both releases (issue 9)"\nuntil = "2999-01-01"\n'
)


def case(cid: str, script: str) -> str:
    return (
        f'[[case]]\nid = "{cid}"\nargv = [{json.dumps(PY)}, "{script}", "{{out}}"]\n'
        'outputs = ["result.txt"]\ntimeout_s = 30\n'
    )


@pytest.fixture
def releases(make_repo) -> Repo:
    """Case `loader` crashes with ValueError at the baseline; `steady` never moves. The
    table accepts the crash; predictions are stated before any candidate."""
    repo: Repo = make_repo("old")
    steady = PROG.replace('pathlib.Path("value.txt").read_text().strip()', '"1"')
    cases = case("loader", "prog.py") + case("steady", "steady.py")
    files = {
        "prog.py": PROG,
        "steady.py": steady,
        "value.txt": "old-1\n",
        "cases/matrix.toml": cases,
        "cases/accepting.toml": cases + ACCEPT,
        "cases/failing.toml": '[prediction]\nwhy = "loader crashes as before"\nfailing = ["loader"]\n',
    }
    repo.commit(files, "release 1")
    repo.git("tag", "base")
    return repo


def run(repo: Repo, cand: str, cases: str, expect: str | None = None) -> Outcome:
    return gate.run(repo.path, RunRequest("base", cand, cases=cases, expect=expect))


def test_a_both_sides_crash_fails_the_gate_unless_stated(releases: Repo) -> None:
    cand = releases.commit({"value.txt": "old-2\n"}, "release 2: the same crash")
    outcome = run(releases, cand, "cases/matrix.toml")
    [loader, _] = outcome.comparison.cases
    assert loader.verdict is Verdict.BOTH_FAILED
    assert loader.same_failure == "failed (exit 1, ValueError)"
    assert outcome.exit_code == 1
    assert words.verdict(outcome) == "MOVED: 0 moved, 1 failed of 2 (exit 1)"


def test_a_both_sides_crash_the_table_accepts_holds_and_is_shown(releases: Repo) -> None:
    cand = releases.commit({"value.txt": "old-2\n"}, "release 2: the same crash")
    outcome = run(releases, cand, "cases/accepting.toml")
    assert outcome.exit_code == 0, outcome.findings
    assert [(f.code, f.case_id) for f, _ in outcome.accepted] == [(Code.BOTH_FAILED, "loader")]
    said = words.verdict(outcome)
    assert said.startswith("HOLDS: 1 of 2 declared cases identical")
    assert "1 fails the same way on both sides, as the table accepts" in said
    assert "the v0 loader crashes on both releases (issue 9), until 2999-01-01" in "\n".join(
        words.allowed_lines(outcome)
    )
    assert outcome.manifest["accepted"][0]["by"]["finding"] == "both-failed"
    xml = ET.fromstring(report_junit.to_xml("fidelity", reports.junit_cases(outcome)))
    assert xml.find("testsuite").get("failures") == "0"  # type: ignore[union-attr]
    assert "Accepted findings (1)" in reports.markdown(outcome)
    again = rejudge.recompare(outcome.run_dir)
    assert again.exit_code == 0 and len(again.accepted) == 1, again.findings


def test_a_both_sides_crash_predicted_failing_holds(releases: Repo) -> None:
    cand = releases.commit({"value.txt": "old-2\n"}, "release 2: the same crash")
    outcome = run(releases, cand, "cases/matrix.toml", "cases/failing.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD, outcome.findings
    assert outcome.exit_code == 0 and outcome.judged.confirmed == ("loader",)
    assert words.verdict(outcome).startswith("HELD: every case did as predicted (0 moved")
    assert "1 failing as before" in words.verdict(outcome)
    assert outcome.manifest["prediction"]["failing"] == ["loader"]
    assert rejudge.verify(outcome.run_dir, None).exit_code == 0


def test_a_crash_the_table_accepts_needs_no_mention_in_a_prediction(releases: Repo) -> None:
    """A prediction that names no failing case holds when the one failure is the table's
    accepted crash (red with `judge` counting accepted failures as failed: no other test
    judges a prediction against a table that accepts one)."""
    none = '[prediction]\nwhy = "release 2 changes no output"\nmoved = []\n'
    releases.commit({"cases/none.toml": none}, "the prediction, stated first")
    cand = releases.commit({"value.txt": "old-2\n"}, "release 2: the same crash")
    outcome = run(releases, cand, "cases/accepting.toml", "cases/none.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD, outcome.findings
    assert outcome.exit_code == 0 and outcome.judged.failed == ()
    assert [(f.code, f.case_id) for f, _ in outcome.accepted] == [(Code.BOTH_FAILED, "loader")]


@pytest.mark.parametrize(
    ("value", "kind"),
    [("key", "failed (exit 1, KeyError)"), ("exit", "failed (exit 4)")],
)
def test_a_failure_that_changes_kind_is_not_covered(releases: Repo, value: str, kind: str) -> None:
    cand = releases.commit({"value.txt": f"{value}\n"}, "release 2: another failure")
    accepted = run(releases, cand, "cases/accepting.toml")
    [loader, _] = accepted.comparison.cases
    assert loader.verdict is Verdict.BOTH_FAILED and loader.same_failure == ""
    assert f"the failure changed kind: baseline failed (exit 1, ValueError), candidate {kind}" in (
        loader.detail
    )
    assert accepted.exit_code == 1 and not accepted.accepted, accepted.findings
    predicted = run(releases, cand, "cases/matrix.toml", "cases/failing.toml")
    assert predicted.judged is not None and predicted.judged.verdict is Held.FALSIFIED
    assert predicted.judged.failed == ("loader",) and predicted.exit_code == 1


def test_a_known_failure_that_was_fixed_leaves_its_entry_unused(releases: Repo) -> None:
    cand = releases.commit({"value.txt": "2\n"}, "release 2 fixes the loader")
    accepted = run(releases, cand, "cases/accepting.toml")
    assert [f.code for f in accepted.findings] == [Code.ACCEPTED_UNUSED]
    assert accepted.exit_code == 3
    predicted = run(releases, cand, "cases/matrix.toml", "cases/failing.toml")
    assert predicted.judged is not None and predicted.judged.missed == ("loader",)
    assert predicted.exit_code == 1


def test_both_failed_names_one_case_in_the_table_and_none_in_a_prediction(
    releases: Repo,
) -> None:
    bad = (
        b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["o"]\n'
        b'[[accept]]\nfinding = "both-failed"\nwhy = "no case"\n'
        b'[[accept]]\nfinding = "both-failed"\ncase = "a"\nside = "baseline"\nwhy = "a side"\n'
    )
    with pytest.raises(TableError) as caught:
        table.parse(bad, "t.toml")
    text = "\n".join(caught.value.problems)
    assert "add `case = ID`" in text and "drop `side`" in text
    said = '[prediction]\nwhy = "x"\n[[prediction.findings]]\nfinding = "both-failed"\nwhy = "y"\n'
    cand = releases.commit({"cases/p.toml": said}, "predict")
    with pytest.raises(PredictionError, match="`failing`"):
        run(releases, cand, "cases/matrix.toml", "cases/p.toml")


def test_failure_kind_is_status_exit_code_and_error_class() -> None:
    def ev(status: CaseStatus, code: int | None, tail: str = "") -> CaseEvidence:
        return CaseEvidence("a", "0" * 64, status, exit_code=code, stderr_tail=tail)

    trace = "Traceback (most recent call last): | x = f() | json.decoder.JSONDecodeError: bad"
    assert (
        failure_kind(ev(CaseStatus.FAILED, 1, trace))
        == "failed (exit 1, json.decoder.JSONDecodeError)"
    )
    assert failure_kind(ev(CaseStatus.FAILED, 1, "error: no such file")) == "failed (exit 1)"
    assert failure_kind(ev(CaseStatus.TIMEOUT, None)) == "timeout"
    assert failure_kind(ev(CaseStatus.CRASHED, -11)) == "crashed (exit -11)"


def test_an_untrusted_verdict_counts_its_findings_in_words(releases: Repo) -> None:
    """'1 provenance finding', not '1 provenance findings'."""
    from dataclasses import replace

    cand = releases.commit({"value.txt": "old-2\n"}, "release 2: the same crash")
    outcome = run(releases, cand, "cases/accepting.toml")
    [(finding, _)] = outcome.accepted
    one = replace(outcome, exit_code=3, findings=(finding,), accepted=())
    assert words.verdict(one).startswith("UNTRUSTED: 1 provenance finding; ")
    two = replace(one, findings=(finding, finding))
    assert words.verdict(two).startswith("UNTRUSTED: 2 provenance findings; ")
