"""Predicted move sets: stated at the harness before measuring, judged against the run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support import PROG, PY, Repo

from fidelity.cli.main import main
from fidelity.markdown import STEP_SUMMARY_LIMIT
from fidelity.matrix import gate, rejudge
from fidelity.matrix import reports as report_matrix
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.accept import Settled
from fidelity.matrix.verdict.compare import CaseResult, Comparison, Summary, Verdict
from fidelity.matrix.verdict.findings import Code, Finding
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.matrix.verdict.predict import Held, Prediction, PredictionError, judge, resolve

CASES = {"a": ("ok", ["alpha"]), "b": ("ok", ["beta", "moves"]), "c": ("ok", ["beta", "moves"])}


def table(cases: dict[str, tuple[str, list[str]]] = CASES) -> str:
    lines = []
    for cid, (_mode, tags) in cases.items():
        source = "value.txt" if cid == "a" else f"{cid}.txt"
        lines += [
            "[[case]]",
            f'id = "{cid}"',
            f'argv = [{json.dumps(PY)}, "-c", "import shutil, sys; shutil.copy({source!r}, sys.argv[1])", "{{out}}"]',
            f'outputs = ["{source}"]',
            f"tags = {json.dumps(tags)}",
            "",
        ]
    return "\n".join(lines)


def prediction(*moved: str, why: str = "b and c read the files the fix changes") -> str:
    return f"[prediction]\nwhy = {json.dumps(why)}\nmoved = {json.dumps(list(moved))}\n"


@pytest.fixture
def repo(make_repo) -> Repo:
    r: Repo = make_repo("pred")
    r.commit(
        {
            "prog.py": PROG,
            "value.txt": "1",
            "b.txt": "1",
            "c.txt": "1",
            "cases/matrix.toml": table(),
            "cases/fix.toml": prediction("tag:moves"),
            "cases/ids.toml": prediction("b", "c"),
            "cases/under.toml": prediction("b"),
            "cases/over.toml": prediction("a", "b", "c"),
            "cases/nothing.toml": prediction(),
            "cases/ghost.toml": prediction("tag:nope"),
        },
        "base",
    )
    r.commit({"b.txt": "2", "c.txt": "2"}, "fix")
    return r


def run(repo: Repo, expect: str, **kw: object) -> Outcome:
    return gate.run(repo.path, RunRequest("HEAD~1", "HEAD", expect=expect, **kw))  # type: ignore[arg-type]


def test_held_with_a_tag_selector_and_with_ids(repo: Repo) -> None:
    for name in ("cases/fix.toml", "cases/ids.toml"):
        outcome = run(repo, name)
        assert outcome.judged is not None and outcome.judged.verdict is Held.HELD
        assert outcome.judged.confirmed == ("b", "c")
        assert outcome.exit_code == 0
        assert outcome.manifest["prediction"]["committed"] is True
        assert len(outcome.manifest["prediction"]["blob"]) == 40


@pytest.mark.parametrize(
    ("name", "unexpected", "missed"),
    [
        ("cases/under.toml", ("c",), ()),
        ("cases/over.toml", (), ("a",)),
        ("cases/nothing.toml", ("b", "c"), ()),
    ],
)
def test_each_way_of_falsifying(repo: Repo, name: str, unexpected: tuple, missed: tuple) -> None:
    outcome = run(repo, name)
    assert outcome.judged is not None
    assert outcome.judged.verdict is Held.FALSIFIED
    assert (outcome.judged.unexpected, outcome.judged.missed) == (unexpected, missed)
    assert outcome.exit_code == 1


def test_a_failure_falsifies_even_when_the_moved_set_matches(repo: Repo) -> None:
    repo.git("rm", "-q", "value.txt")
    repo.commit(message="case a can no longer run")
    outcome = gate.run(repo.path, RunRequest("HEAD~2", "HEAD", expect="cases/fix.toml"))
    assert [str(r.verdict) for r in outcome.comparison.cases] == [
        "candidate-only-failed",
        "moved",
        "moved",
    ]
    assert outcome.judged is not None and outcome.judged.failed == ("a",)
    assert outcome.judged.moved == outcome.judged.predicted == ("b", "c")
    assert outcome.judged.verdict is Held.FALSIFIED and outcome.exit_code == 1


def test_selector_matching_nothing_is_a_usage_error_before_running(repo: Repo) -> None:
    with pytest.raises(PredictionError, match="'tag:nope' matches no case"):
        run(repo, "cases/ghost.toml")
    assert not (repo.path / ".fidelity" / "runs").exists()
    assert (
        main(
            [
                "run",
                "--repo",
                str(repo.path),
                "--baseline",
                "HEAD~1",
                "--expect",
                "cases/ghost.toml",
            ]
        )
        == 2
    )


def test_uncommitted_prediction_is_a_finding(repo: Repo) -> None:
    (repo.path / "cases" / "late.toml").write_text(prediction("tag:moves"))
    outcome = run(repo, "cases/late.toml")
    assert Code.PREDICTION_UNCOMMITTED in {f.code for f in outcome.findings}
    assert outcome.judged is not None and outcome.judged.verdict is Held.UNTRUSTED
    assert outcome.exit_code == 3


def test_prediction_edited_after_the_run_cannot_pass(repo: Repo, tmp_path: Path) -> None:
    outcome = run(repo, "cases/under.toml")
    assert outcome.exit_code == 1
    edited = tmp_path / "under.toml"
    edited.write_text(prediction("b", "c"))  # now it would hold
    verified = rejudge.verify(outcome.run_dir, edited)
    assert Code.PREDICTION_DIFFERS in {f.code for f in verified.findings}
    assert verified.exit_code == 3
    same = rejudge.verify(outcome.run_dir, repo.path / "cases" / "under.toml")
    assert same.exit_code == 1 and same.findings == ()
    assert rejudge.verify(outcome.run_dir, None).exit_code == 1


def test_verify_a_run_that_stated_no_prediction(repo: Repo) -> None:
    plain = gate.run(repo.path, RunRequest("HEAD~1", "HEAD"))
    assert plain.exit_code == 1
    late = rejudge.verify(plain.run_dir, repo.path / "cases" / "fix.toml")
    assert Code.PREDICTION_NOT_STATED in {f.code for f in late.findings}
    assert late.exit_code == 3
    assert main(["verify", str(plain.run_dir)]) == 2


def test_reports_parse_back_with_their_content(repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    code = main(
        [
            "--quiet",
            "run",
            "--repo",
            str(repo.path),
            "--baseline",
            "HEAD~1",
            "--expect",
            "cases/under.toml",
            "--markdown",
            str(out / "s.md"),
            "--junit",
            str(out / "j.xml"),
            "--json",
            str(out / "r.json"),
        ]
    )
    assert code == 1
    md = (out / "s.md").read_text()
    assert md.startswith("### fidelity: FALSIFIED: 1 unexpected, 0 missed, 0 failed (exit 1)")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    cells = [t.content for t in tokens if t.type == "inline"]
    assert "unexpected (1)" in cells and "c" in cells and "`b`" in cells
    suite = ET.parse(out / "j.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "0")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["c"]
    assert "moved, not predicted" in (failed[0].find("failure").get("message") or "")  # type: ignore[union-attr]
    report = json.loads((out / "r.json").read_text())
    assert report["schema"] == "fidelity.run/1"
    assert report["prediction_verdict"]["unexpected"] == ["c"]
    assert report["exit_code"] == 1


def test_markdown_stays_under_the_step_summary_limit() -> None:
    results = tuple(
        CaseResult(f"case-{i:05d}", Verdict.MOVED, detail="x" * 400) for i in range(5000)
    )
    outcome = _fake_outcome(results)
    md = report_matrix.markdown(outcome)
    assert len(md.encode()) < STEP_SUMMARY_LIMIT
    assert "more non-identical cases not shown" in md
    small = report_matrix.markdown(outcome, limit=4000)
    assert len(small.encode()) < 4000 and "case-00000" in small


def _fake_outcome(results: tuple[CaseResult, ...]) -> Outcome:
    from dataclasses import replace

    from fidelity.matrix.verdict.evidence import SideEvidence
    from fidelity.matrix.verdict.findings import Harness

    n = len(results)
    summary = Summary(n, n, n, n, 0, 0, n, 0, 0, 0, 0, 0, 0, 0)
    side = SideEvidence("baseline", "main", "1" * 40)
    harness = Harness("WORKTREE", "0" * 40, False, (), "m.toml", "a" * 64, False)
    return Outcome(
        Path("run"),
        harness,
        side,
        replace(side, role="candidate"),
        Comparison(results, summary),
        (),
        1,
    )


def test_resolve_selectors() -> None:
    tags = {"a": ("x",), "b": ("x", "y"), "c": ()}
    assert resolve(["tag:x"], tags, "p") == {"a", "b"}
    assert resolve(["c", "tag:y"], tags, "p") == {"b", "c"}
    with pytest.raises(PredictionError, match="'d' matches no case"):
        resolve(["d"], tags, "p")


ids = st.sets(st.sampled_from("abcdef"))


@given(ids, ids, ids, st.booleans())
def test_held_exactly_when_moved_equals_predicted_and_nothing_failed(
    moved: set[str], predicted: set[str], failed: set[str], finding: bool
) -> None:
    failed -= moved
    results = tuple(
        CaseResult(
            c,
            Verdict.MOVED
            if c in moved
            else Verdict.BOTH_FAILED
            if c in failed
            else Verdict.IDENTICAL,
        )
        for c in "abcdef"
    )
    summary = Summary(
        6,
        6,
        6,
        6 - len(failed),
        6 - len(moved) - len(failed),
        0,
        len(moved),
        len(failed),
        0,
        0,
        0,
        0,
        0,
        0,
    )
    findings = (Finding(Code.DIRTY_SIDE, "x"),) if finding else ()
    stated = Prediction("p", "why", (), frozenset(predicted), "0" * 64)
    verdict = judge(Comparison(results, summary), stated, Settled(findings))
    if finding or len(failed) == 6:  # a finding, or nothing compared
        assert verdict.verdict is Held.UNTRUSTED and verdict.exit_code == 3
    elif moved == predicted and not failed:
        assert verdict.verdict is Held.HELD and verdict.exit_code == 0
    else:
        assert verdict.verdict is Held.FALSIFIED and verdict.exit_code == 1
    assert set(verdict.confirmed) | set(verdict.unexpected) == moved
    assert set(verdict.confirmed) | set(verdict.missed) == predicted
