"""A prediction counts only when it was committed before the change it predicts: each late
form (after the fix, after a measurement, outside the candidate's history, beside the fix on
a merged branch) is a `prediction-late` finding naming both commits, never HELD; one in the
same commit as the fix, or before it, holds."""

from __future__ import annotations

import pytest
from support import PROG, Repo, matrix_toml

from fidelity.cli.main import main
from fidelity.matrix import gate, rejudge
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.ontime import first_other_change
from fidelity.matrix.verdict.outcome import Outcome
from fidelity.matrix.verdict.predict import Held

PREDICTION = '[prediction]\nwhy = "the fix moves a and b"\nmoved = ["a", "b"]\n'
FIX = {"value.txt": "two\n"}


@pytest.fixture
def repo(make_repo) -> Repo:
    r: Repo = make_repo("late")
    table = matrix_toml({"a": "ok", "b": "ok"})
    r.commit({"prog.py": PROG, "value.txt": "one\n", "cases/matrix.toml": table}, "baseline")
    r.git("tag", "base")
    return r


def run(repo: Repo, candidate: str = "HEAD") -> Outcome:
    return gate.run(repo.path, RunRequest("base", candidate, expect="cases/p.toml"))


def late(outcome: Outcome) -> str:
    found = [f.message for f in outcome.findings if f.code is Code.PREDICTION_LATE]
    assert len(found) == 1, outcome.findings
    assert outcome.judged is not None and outcome.judged.verdict is Held.UNTRUSTED
    assert outcome.exit_code == 3
    return found[0]


def test_a_prediction_in_the_same_commit_as_the_fix_holds(repo: Repo) -> None:
    fix = repo.commit({**FIX, "cases/p.toml": PREDICTION}, "the fix, predicted")
    outcome = run(repo)
    assert outcome.judged is not None and outcome.judged.verdict is Held.HELD, outcome.findings
    assert outcome.exit_code == 0
    assert outcome.manifest["prediction"]["stated"] == fix
    assert outcome.manifest["prediction"]["late"] == ""


def test_a_prediction_before_the_fix_holds(repo: Repo) -> None:
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict")
    repo.commit(FIX, "the fix")
    outcome = run(repo)
    assert outcome.exit_code == 0, outcome.findings
    assert outcome.manifest["prediction"]["stated"] == said


def test_a_prediction_after_the_fix_is_late(repo: Repo, capsys) -> None:
    fix = repo.commit(FIX, "the fix")
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict, after the fact")
    outcome = run(repo)
    why = late(outcome)
    assert said[:10] in why and fix[:10] in why and "(the fix)" in why
    assert outcome.manifest["prediction"]["late"] == why  # recorded: a re-judge sees it
    for again in (rejudge.recompare(outcome.run_dir), rejudge.verify(outcome.run_dir, None)):
        assert late(again) == why
    argv = ["-q", "run", "--repo", str(repo.path), "--baseline", "base"]
    assert main([*argv, "--expect", "cases/p.toml"]) == 3
    out = capsys.readouterr()
    assert "prediction-late" in out.err  # said before any case runs
    assert "UNTRUSTED" in out.out


def test_a_prediction_after_a_measurement_is_late(repo: Repo) -> None:
    fix = repo.commit(FIX, "the fix")
    repo.commit({"records/bench.md": "a: 2\n"}, "measured")
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict")
    why = late(run(repo))
    assert said[:10] in why and fix[:10] in why  # the first change, not the measurement


def test_a_prediction_outside_the_candidates_history_is_late(repo: Repo) -> None:
    """`--candidate HEAD~1` with the prediction committed at HEAD, the harness."""
    fix = repo.commit(FIX, "the fix")
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict")
    why = late(run(repo, "HEAD~1"))
    assert "not in the candidate's history" in why
    assert said[:10] in why and fix[:10] in why


def test_a_prediction_edited_after_the_candidate_is_late(repo: Repo) -> None:
    """The candidate holds a prediction, but not the bytes the harness reads."""
    repo.commit({**FIX, "cases/p.toml": PREDICTION}, "the fix, predicted")
    repo.commit(
        {"cases/p.toml": PREDICTION.replace("moves a and b", "moves a and b, surely")}, "edit it"
    )
    assert "holds other bytes" in late(run(repo, "HEAD~1"))


def test_a_fix_merged_from_a_branch_without_the_prediction_is_late(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "fix")
    fix = repo.commit(FIX, "the fix, on its branch")
    repo.git("checkout", "-q", "main")
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict, beside the fix")
    repo.git("merge", "-q", "--no-edit", "fix")
    why = late(run(repo))
    assert said[:10] in why and fix[:10] in why


def test_a_clean_merge_after_the_prediction_holds(repo: Repo) -> None:
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict")
    repo.git("checkout", "-q", "-b", "fix")
    repo.commit(FIX, "the fix, on a branch from the prediction")
    repo.git("checkout", "-q", "main")
    repo.commit({"notes.md": "x\n"}, "meanwhile")  # a change after the prediction: allowed
    repo.git("merge", "-q", "--no-edit", "fix")
    outcome = run(repo)
    assert outcome.exit_code == 0, outcome.findings
    assert outcome.manifest["prediction"]["stated"] == said


def test_a_fix_made_inside_a_merge_before_the_prediction_is_late(repo: Repo) -> None:
    """An evil merge: the fix is in the merge's own change (neither parent has it), made
    before the prediction. Only the merge changes anything but the prediction, so a walk
    of non-merge commits alone would find nothing before it and let the prediction hold."""
    repo.git("checkout", "-q", "-b", "side")
    repo.git("commit", "-q", "--allow-empty", "-m", "side")
    repo.git("checkout", "-q", "main")
    repo.git("commit", "-q", "--allow-empty", "-m", "main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side")
    repo.write(FIX)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "merge, the fix inside it")
    merge = repo.git("rev-parse", "HEAD").strip()
    said = repo.commit({"cases/p.toml": PREDICTION}, "predict, after the merge")
    why = late(run(repo))
    assert said[:10] in why and merge[:10] in why and "(merge, the fix inside it)" in why


def test_first_other_change_names_the_oldest_commit_not_after_the_prediction() -> None:
    p, files = "cases/p.toml", frozenset({"x"})
    changes = {"m": files, "p": frozenset({p}), "f2": files, "f1": files | {p}}  # newest first
    assert first_other_change(changes, {"m"}, "p", p) == "f1"
    assert first_other_change(changes, {"m", "f2"}, "f1", p) is None  # same commit allowed
    assert first_other_change({"p": frozenset({p}), "q": frozenset({p})}, (), "p", p) is None
