"""Predictions that say what a change does (fixed, broken, unchanged, expected findings)
and findings a table accepts in the open: each can hold, and each goes red. `moved`, held
and red, is in tests/test_predict.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import PY, Repo

from fidelity import report_junit
from fidelity.errors import TableError, UsageError
from fidelity.matrix import gate, rejudge, reports
from fidelity.matrix.cases import table
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.predict import Held, PredictionError

CRASHY = """
import pathlib, sys
out = pathlib.Path(sys.argv[1])
value = pathlib.Path("value.txt").read_text()
if "crash" in value:
    raise SystemExit("boom: " + value)
(out / "result.txt").write_text(value.replace("crash", ""))
"""


def case(cid: str, extra: str = "") -> str:
    return (
        f'[[case]]\nid = "{cid}"\n'
        f'argv = [{json.dumps(PY)}, "prog.py", "{{out}}"]\n'
        f'outputs = ["result.txt"]\ntimeout_s = 30\n{extra}\n'
    )


def half(cid: str) -> str:
    """A case that writes result.txt but never the second output it declares."""
    return (
        f'[[case]]\nid = "{cid}"\n'
        f'argv = [{json.dumps(PY)}, "prog.py", "{{out}}"]\n'
        'outputs = ["result.txt", "never.txt"]\ntimeout_s = 30\n'
    )


def prediction(**keys: object) -> str:
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items() if k != "findings")
    text = f'[prediction]\nwhy = "the fix"\n{body}'
    for f in keys.get("findings", []):  # type: ignore[attr-defined]
        text += "[[prediction.findings]]\n" + "".join(
            f"{k} = {json.dumps(v)}\n" for k, v in f.items()
        )
    return text


UNMET = {"finding": "dirty-side", "side": "baseline", "why": "replace refs"}


@pytest.fixture
def crash_fix(make_repo) -> tuple[Repo, str, str]:
    """A baseline where case `a` crashes and a candidate that fixes it; `b` never moves."""
    repo: Repo = make_repo("fix")
    tables = {
        "cases/matrix.toml": case("a") + case("b").replace("prog.py", "stable.py"),
        "cases/fixed.toml": prediction(fixed=["a"]),
        "cases/silent.toml": prediction(moved=[]),
        "cases/moved.toml": prediction(moved=["a"]),
        "cases/both.toml": prediction(moved=["a"], fixed=["a"]),
        "cases/unmet.toml": prediction(fixed=["a"], findings=[UNMET]),
    }
    stable = CRASHY.replace('pathlib.Path("value.txt").read_text()', '"1"')
    base = repo.commit({"prog.py": CRASHY, "stable.py": stable, "value.txt": "crash", **tables})
    cand = repo.commit({"value.txt": "1"}, "fix the crash")
    return repo, base, cand


def run(repo: Repo, base: str, cand: str, expect: str | None = None):
    return gate.run(repo.path, RunRequest(base, cand, expect=expect))


def test_a_crash_fix_predicted_fixed_holds(crash_fix) -> None:
    repo, base, cand = crash_fix
    outcome = run(repo, base, cand, "cases/fixed.toml")
    assert [r.verdict.value for r in outcome.comparison.cases] == ["baseline-failed", "identical"]
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD, outcome.findings
    assert outcome.judged.confirmed == ("a",)
    assert outcome.exit_code == 0
    assert outcome.manifest["prediction"]["fixed"] == ["a"]
    again = rejudge.verify(outcome.run_dir, None)
    assert again.exit_code == 0 and again.judged is not None and again.judged.verdict is Held.HELD


@pytest.mark.parametrize("name", ["cases/silent.toml", "cases/moved.toml"])
def test_the_same_pair_without_fixed_falsifies(crash_fix, name: str) -> None:
    repo, base, cand = crash_fix
    outcome = run(repo, base, cand, name)
    assert outcome.judged is not None and outcome.judged.verdict is Held.FALSIFIED
    assert outcome.judged.failed == ("a",)
    assert outcome.exit_code == 1


def test_fixed_that_is_not_fixed_falsifies(crash_fix) -> None:
    repo, base, _ = crash_fix
    still = repo.commit({"value.txt": "crash again"}, "not a fix")
    outcome = run(repo, base, still, "cases/fixed.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.FALSIFIED
    assert outcome.judged.missed == ("a",) and outcome.judged.failed == ("a",)


def test_broken_on_purpose_holds_and_unchanged_names_cases(make_repo) -> None:
    repo: Repo = make_repo("broken")
    tables = {
        "cases/matrix.toml": case("a") + case("b").replace("prog.py", "stable.py"),
        "cases/broken.toml": prediction(broken=["a"], unchanged=["b"]),
    }
    stable = CRASHY.replace('pathlib.Path("value.txt").read_text()', '"1"')
    base = repo.commit({"prog.py": CRASHY, "stable.py": stable, "value.txt": "1", **tables})
    cand = repo.commit({"value.txt": "crash"}, "drop support, on purpose")
    outcome = run(repo, base, cand, "cases/broken.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD
    assert outcome.exit_code == 0


def test_broken_and_unchanged_each_go_red(make_repo) -> None:
    """A case predicted broken that still runs, and a case named unchanged that moves: each
    falsifies the prediction; `unchanged` names cases like every other key (red before: the
    suite held with `broken` left out of the cases expected to change; this goes red)."""
    repo: Repo = make_repo("broken-red")
    tables = {
        "cases/matrix.toml": case("a") + case("b").replace("prog.py", "other.py"),
        "cases/broken.toml": prediction(broken=["a"], unchanged=["b"]),
        "cases/both.toml": prediction(broken=["a"], unchanged=["a"]),
        "cases/nobody.toml": prediction(unchanged=["nobody"]),
    }
    other = 'import pathlib, sys\n(pathlib.Path(sys.argv[1]) / "result.txt").write_text(\n'
    other += '    pathlib.Path("other.txt").read_text())\n'
    files = {"prog.py": CRASHY, "other.py": other, "value.txt": "1", "other.txt": "1"}
    base = repo.commit({**files, **tables})
    kept = repo.commit({"notes.txt": "x"}, "breaks nothing")
    outcome = run(repo, base, kept, "cases/broken.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.FALSIFIED
    assert (outcome.judged.missed, outcome.judged.unexpected) == (("a",), ())
    assert outcome.exit_code == 1
    moved = repo.commit({"value.txt": "crash", "other.txt": "2"}, "breaks a, moves b")
    outcome = run(repo, base, moved, "cases/broken.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.FALSIFIED
    assert (outcome.judged.confirmed, outcome.judged.unexpected) == (("a",), ("b",))
    with pytest.raises(PredictionError, match="predicted both broken and unchanged"):
        run(repo, base, kept, "cases/both.toml")
    with pytest.raises(PredictionError, match="nobody"):
        run(repo, base, kept, "cases/nobody.toml")


def test_a_case_predicted_twice_is_an_error(crash_fix) -> None:
    repo, base, cand = crash_fix
    with pytest.raises(PredictionError, match="predicted both moved and fixed"):
        run(repo, base, cand, "cases/both.toml")


@pytest.fixture
def half_written(make_repo) -> tuple[Repo, str, str]:
    """Case `half` never writes one of its declared outputs, on either side."""
    repo: Repo = make_repo("half")
    base = repo.commit(
        {"prog.py": CRASHY, "value.txt": "1", "cases/matrix.toml": case("a") + half("half")}
    )
    cand = repo.commit({"other.txt": "x"}, "moves nothing")
    return repo, base, cand


def test_an_expected_finding_lets_the_prediction_hold(half_written) -> None:
    repo, base, cand = half_written
    expect = {"finding": "missing-evidence", "case": "half", "why": "never.txt is issue 12"}
    outcome = run(repo, base, cand)
    assert outcome.exit_code == 3  # without a prediction it is a finding
    said = prediction(moved=[], findings=[expect])  # stated with a change that moves nothing
    later = repo.commit({"cases/p.toml": said, "other.txt": "y"}, "predict, and change")
    held = run(repo, cand, later, "cases/p.toml")
    assert held.judged is not None and held.judged.verdict is Held.HELD, held.findings
    assert held.judged.expected == ("missing-evidence case half",)
    assert held.exit_code == 0


def test_an_expected_finding_that_does_not_occur_falsifies(crash_fix) -> None:
    repo, base, cand = crash_fix
    outcome = run(repo, base, cand, "cases/unmet.toml")
    assert outcome.judged is not None and outcome.judged.verdict is Held.FALSIFIED
    assert outcome.judged.unmet == ("dirty-side [baseline]",)
    assert outcome.exit_code == 1


ACCEPT = '[[accept]]\nfinding = "missing-evidence"\ncase = "half"\nwhy = "never.txt: issue 12"\n'


def test_an_accepted_finding_is_shown_in_every_report_and_counted(half_written) -> None:
    repo, base, _ = half_written
    cand = repo.commit(
        {"cases/matrix.toml": case("a") + half("half") + ACCEPT + 'until = "2999-01-01"\n'},
        "accept",
    )
    outcome = run(repo, base, cand)
    assert outcome.exit_code == 0, outcome.findings
    assert [a.finding for _, a in outcome.accepted] == ["missing-evidence"]
    markdown = reports.markdown(outcome)
    assert "Accepted findings (1)" in markdown and "never.txt: issue 12" in markdown
    assert "accepted by the table" in markdown.splitlines()[0]
    xml = ET.fromstring(report_junit.to_xml("fidelity", reports.junit_cases(outcome)))
    said = "".join(t.text or "" for t in xml.iter("system-out"))
    assert "missing-evidence case half" in said and "accepted: never.txt: issue 12" in said
    assert outcome.manifest["accepted"][0]["by"]["why"] == "never.txt: issue 12"
    again = rejudge.recompare(outcome.run_dir)
    assert again.exit_code == 0 and len(again.accepted) == 1
    late = repo.path / "late.toml"  # a prediction stated after the run: judged, cannot pass
    late.write_text(prediction(moved=[]))
    verified = rejudge.verify(outcome.run_dir, late)
    assert [f.code for f in verified.findings] == [Code.PREDICTION_NOT_STATED]
    assert len(verified.accepted) == 1 and verified.exit_code == 3


def test_an_expired_acceptance_fails(half_written) -> None:
    repo, base, _ = half_written
    cand = repo.commit(
        {"cases/matrix.toml": case("a") + half("half") + ACCEPT + 'until = "2020-01-01"\n'},
        "accept",
    )
    outcome = run(repo, base, cand)
    codes = [f.code for f in outcome.findings]
    assert Code.ACCEPTED_EXPIRED in codes and Code.MISSING_EVIDENCE in codes
    assert outcome.exit_code == 3 and not outcome.accepted


def test_an_acceptance_until_a_commit_expires_when_the_candidate_has_it(half_written) -> None:
    repo, base, _ = half_written
    marker = repo.commit({"fix-landed.txt": "x"}, "the fix lands")
    cand = repo.commit(
        {"cases/matrix.toml": case("a") + half("half") + ACCEPT + f'until = "{marker}"\n'},
        "accept until the fix",
    )
    outcome = run(repo, base, cand)
    codes = [f.code for f in outcome.findings]
    assert Code.ACCEPTED_EXPIRED in codes and Code.MISSING_EVIDENCE in codes
    assert any("the candidate contains" in f.message for f in outcome.findings)
    assert outcome.exit_code == 3 and not outcome.accepted


def test_an_acceptance_that_matches_nothing_is_a_finding(crash_fix) -> None:
    repo, base, _ = crash_fix
    accept = '[[accept]]\nfinding = "dirty-side"\nside = "baseline"\nwhy = "replace refs"\n'
    cand = repo.commit(
        {"value.txt": "1", "cases/matrix.toml": case("a", 'tags = ["t"]') + accept}, "accept"
    )
    fixed = repo.commit({"value.txt": "1"}, "same")
    outcome = gate.run(repo.path, RunRequest(cand, fixed))
    assert [f.code for f in outcome.findings] == [Code.ACCEPTED_UNUSED]
    assert outcome.exit_code == 3


def test_findings_that_mean_tampering_cannot_be_accepted() -> None:
    bad = (
        b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["o"]\n'
        b'[[accept]]\nfinding = "evidence-altered"\nwhy = "no"\n'
        b'[[accept]]\nfinding = "no-such-thing"\nwhy = "no"\n'
        b'[[accept]]\nfinding = "dirty-side"\ncase = "ghost"\nwhy = "no"\n'
    )
    with pytest.raises(TableError) as caught:
        table.parse(bad, "t.toml")
    text = "\n".join(caught.value.problems)
    assert "evidence-altered can never be accepted" in text
    assert "'no-such-thing' is not a finding" in text
    assert "names no case: 'ghost'" in text


def test_an_until_that_is_neither_date_nor_commit_is_a_usage_error(half_written) -> None:
    repo, base, _ = half_written
    cand = repo.commit(
        {"cases/matrix.toml": case("a") + half("half") + ACCEPT + 'until = "next-week"\n'}, "x"
    )
    with pytest.raises(UsageError, match="neither a date"):
        run(repo, base, cand)


def test_an_until_that_is_no_day_is_refused_when_the_table_is_validated(tmp_path: Path) -> None:
    """`cases validate` passed 2026-02-30, which `run` then refused: validation refuses it."""
    from support import fidelity_cli

    path = tmp_path / "matrix.toml"
    path.write_text(case("a") + half("half") + ACCEPT + 'until = "2026-02-30"\n')
    done = fidelity_cli(tmp_path, "cases", "validate", str(path))
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "$.accept[0].until" in said and "'2026-02-30' is no day of the calendar" in said
    path.write_text(case("a") + half("half") + ACCEPT + 'until = "2026-02-28"\n')
    assert fidelity_cli(tmp_path, "cases", "validate", str(path)).returncode == 0


FORGED_CASE = """[[case]]
id = "a"
argv = "git checkout -q --detach {base} && {py} prog.py {{out}}"
shell = true
outputs = ["result.txt"]
timeout_s = 30
"""
ACCEPT_FORGERY = (
    '[[accept]]\nfinding = "side-changed"\nside = "candidate"\nwhy = "the case pins its input"\n'
)


def test_a_forged_move_cannot_be_accepted_as_side_changed(make_repo, capsys) -> None:
    """The candidate moves `a`, but its case checks the baseline out in the candidate's
    worktree first: `side-changed`, exit 3; accepting that finding is refused (exit 2)."""
    repo: Repo = make_repo("forged")
    base = repo.commit({"prog.py": CRASHY, "value.txt": "1"})
    forged = FORGED_CASE.format(base=base, py=PY)
    repo.commit({"cases/matrix.toml": forged, "value.txt": "2"}, "moves a, hides it")
    outcome = run(repo, base, "HEAD")
    assert [r.verdict.value for r in outcome.comparison.cases] == ["identical"]
    assert [(f.code, f.side) for f in outcome.findings] == [(Code.SIDE_CHANGED, "candidate")]
    assert outcome.exit_code == 3
    repo.commit({"cases/matrix.toml": forged + ACCEPT_FORGERY}, "accept the forgery")
    with pytest.raises(TableError) as caught:
        run(repo, base, "HEAD")
    said = "\n".join(caught.value.problems)
    assert "accept #1 at $.accept[0].finding: side-changed can never be accepted" in said
    assert "another revision" in said and "remove this entry" in said
    from fidelity.cli.main import main

    assert main(["-q", "run", "--repo", str(repo.path), "--baseline", base]) == 2
    err = capsys.readouterr().err
    assert "cases/matrix.toml" in err and "side-changed can never be accepted" in err


@pytest.mark.parametrize("code", list(Code))
def test_every_finding_is_either_never_accepted_or_accepted_with_a_reason(code: Code) -> None:
    from fidelity.matrix.verdict import accept

    assert (code in accept.NEVER) != (code in accept.MAY), code
    why = accept.problem(code.value)
    assert (why is not None) == (code in accept.NEVER)
    case = 'case = "a"\n' if code is Code.BOTH_FAILED else ""  # a known failure names its case
    entry = f'[[accept]]\nfinding = "{code.value}"\n{case}why = "w"\n'.encode()
    text = b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["o"]\n' + entry
    if code in accept.NEVER:
        with pytest.raises(TableError, match=f"{code.value} can never be accepted"):
            table.parse(text, "t.toml")
    else:
        assert [a.finding for a in table.parse(text, "t.toml").accepts] == [code.value]


def test_the_findings_that_mean_foreign_evidence_are_never_accepted() -> None:
    from fidelity.matrix.verdict import accept

    foreign = {
        Code.SIDE_CHANGED,
        Code.CHECKOUT_CHANGED,
        Code.HARNESS_CHANGED,
        Code.SHADOWED_IMPORT,
        Code.CACHE_NOT_EMPTY,
        Code.FOLDER_REPLACED,
    }
    assert foreign <= set(accept.NEVER), foreign - set(accept.NEVER)
