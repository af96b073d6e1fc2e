"""`fidelity compare` and `verify` judge a stored run exactly as the run judged itself.

Every comparator kind, within tolerance and moved, from real runs of a real repository;
then run.json edited, or written by an older fidelity that kept no comparison specs: both
are findings, never a silent disagreement and never exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import PY, Repo

from fidelity.kinds import registry
from fidelity.matrix import gate, rejudge
from fidelity.matrix.cases.files import sha256_file
from fidelity.matrix.run.readonce import ReadOnce
from fidelity.matrix.run.request import RunRequest
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome

WRITE = """
import json, sys, pathlib
out = pathlib.Path(sys.argv[1]); kind = sys.argv[2]
v = float(pathlib.Path("value.txt").read_text())
if kind in ("csv", "tsv"):
    sep = "," if kind == "csv" else "\\t"
    (out / f"m.{kind}").write_text(f"k{sep}v{sep}s\\n1{sep}{v}{sep}a\\n2{sep}{2 * v}{sep}b\\n")
elif kind == "json":
    (out / "m.json").write_text(json.dumps({"v": v, "list": [v, 1]}))
elif kind == "text":
    (out / "m.text").write_text(f"value {v}\\n")
else:
    (out / "m.bytes").write_bytes(str(v).encode())
"""
KINDS = ("csv", "tsv", "json", "text", "bytes")


def table(rtol: float) -> str:
    lines = ['[matrix]\nname = "kinds"\n']
    for kind in KINDS:
        spec = {
            "csv": '{ kind = "csv", key = ["k"], rtol = R }',
            "tsv": '{ kind = "tsv", key = ["k"], rtol = R }',
            "json": '{ kind = "json", rtol = R }',
            "text": '{ kind = "text" }',
            "bytes": '{ kind = "bytes" }',
        }[kind]
        lines.append(
            f'[[case]]\nid = "{kind}"\nargv = [{json.dumps(PY)}, "w.py", "{{out}}", "{kind}"]\n'
            f'outputs = ["m.{kind}"]\n[case.compare."m.{kind}"]\n'
            + spec.replace("{ ", "").replace(" }", "").replace(", ", "\n").replace("R", repr(rtol))
            + "\n"
        )
    return "\n".join(lines)


def runs(repo: Repo, before: float, after: float, rtol: float) -> Outcome:
    base = repo.commit({"w.py": WRITE, "value.txt": repr(before), "cases/matrix.toml": table(rtol)})
    repo.commit({"value.txt": repr(after)})
    return gate.run(repo.path, RunRequest(base, "HEAD"))


def verdicts(outcome: Outcome) -> dict[str, str]:
    return {r.case_id: str(r.verdict) for r in outcome.comparison.cases}


@settings(max_examples=8)
@given(
    before=st.floats(1.0, 100.0),
    change=st.sampled_from([0.0, 1e-6, 0.2]),
    rtol=st.sampled_from([0.0, 1e-3]),
)
def test_compare_gives_the_runs_own_verdict_for_every_comparator(
    tmp_path_factory, before: float, change: float, rtol: float
) -> None:
    repo = Repo(tmp_path_factory.mktemp("kinds") / "repo")
    outcome = runs(repo, before, before * (1 + change), rtol)
    again = rejudge.recompare(outcome.run_dir)
    assert verdicts(again) == verdicts(outcome)
    assert [f.code for f in again.findings] == [f.code for f in outcome.findings]
    assert again.exit_code == outcome.exit_code


def test_within_tolerance_survives_judging_again_and_the_limits_hold(make_repo) -> None:
    outcome = runs(make_repo("r"), 10.0, 10.001, 1e-3)
    assert verdicts(outcome) == {
        "csv": "within-tolerance",
        "tsv": "within-tolerance",
        "json": "within-tolerance",
        "text": "moved",
        "bytes": "moved",
    }
    assert verdicts(rejudge.recompare(outcome.run_dir)) == verdicts(outcome)


def _edit(run_dir: Path, change) -> None:
    path = run_dir / "run.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_an_edited_run_json_is_a_finding(make_repo) -> None:
    outcome = runs(make_repo("r"), 10.0, 10.0, 0.0)  # a refactor: everything identical
    assert outcome.exit_code == 0
    assert rejudge.recompare(outcome.run_dir).exit_code == 0

    def an_innocent_looking_edit(data: dict) -> None:
        data["sides"]["candidate"]["own_table_note"] = "edited"

    _edit(outcome.run_dir, an_innocent_looking_edit)
    again = rejudge.recompare(outcome.run_dir)
    assert Code.RUN_JSON_ALTERED in {f.code for f in again.findings}
    assert again.exit_code == 3


def test_a_run_without_stored_specs_says_it_judges_differently(make_repo) -> None:
    outcome = runs(make_repo("r"), 10.0, 10.001, 1e-3)

    def as_an_older_fidelity_wrote_it(data: dict) -> None:
        del data["digest"]
        for case in data["matrix"]["cases"]:
            del case["compare"]

    _edit(outcome.run_dir, as_an_older_fidelity_wrote_it)
    again = rejudge.recompare(outcome.run_dir)
    found = {(f.code, f.case_id) for f in again.findings}
    assert (Code.RUN_JSON_ALTERED, None) in found  # no digest: edits cannot be detected
    assert {c for code, c in found if code is Code.REJUDGED_DIFFERS} == {"csv", "tsv", "json"}
    assert again.exit_code == 3


def test_a_file_added_where_it_would_be_evidence_is_a_finding(make_repo) -> None:
    """A file that matches a declared output glob, or lies in a cache, is evidence the run
    never hashed; a file beside them that no output declares is not."""
    repo = make_repo("r")
    script = "printf 1 > {out}/a.txt && printf c > $CACHE/c.txt"
    table = (
        f'[[case]]\nid = "t"\nargv = {json.dumps(script)}\nshell = true\n'
        'outputs = ["*.txt"]\ncache_env = "CACHE"\n'
    )
    repo.commit({"cases/matrix.toml": table})
    outcome = gate.run(repo.path, RunRequest("HEAD", "HEAD"))
    case = outcome.run_dir / "candidate" / "cases" / "t"
    (case / "out" / "notes.log").write_text("not an output")
    assert rejudge.recompare(outcome.run_dir).exit_code == 0
    (case / "out" / "b.txt").write_text("2")
    again = rejudge.recompare(outcome.run_dir)
    (finding,) = again.findings
    assert (finding.code, finding.side, finding.case_id) == (
        Code.EVIDENCE_ALTERED,
        "candidate",
        "t",
    )
    assert finding.message.startswith("out/b.txt added: ") and again.exit_code == 3


def test_the_bytes_judged_are_the_bytes_checked(make_repo, monkeypatch) -> None:
    """An output edited for the comparator and put back before the check would pass if the
    two read the file apart: compare hashes the very bytes it judged."""
    outcome = runs(make_repo("r"), 10.0, 10.001, 1e-3)
    target = outcome.run_dir / "candidate" / "cases" / "json" / "out" / "m.json"
    kept = target.read_bytes()
    target.write_text(json.dumps({"v": 10.0, "list": [10.0, 1]}))  # still within tolerance
    real = registry.explain

    def judged_then_put_back(name: str, *args, **kwargs):
        try:
            return real(name, *args, **kwargs)
        finally:
            if name == "m.json":
                target.write_bytes(kept)

    monkeypatch.setattr("fidelity.matrix.verdict.explain.explain", judged_then_put_back)
    again = rejudge.recompare(outcome.run_dir)
    assert target.read_bytes() == kept and verdicts(again) == verdicts(outcome)
    found = {(f.code, f.side, f.case_id) for f in again.findings}
    assert found == {(Code.EVIDENCE_ALTERED, "candidate", "json")}
    assert again.exit_code == 3


def test_what_is_read_once_and_what_is_left_to_its_path(tmp_path: Path) -> None:
    small, large, link = tmp_path / "small", tmp_path / "large", tmp_path / "link"
    small.write_bytes(b"1,2\n")
    large.write_bytes(b"x" * 65)
    link.symlink_to(small)
    once = ReadOnce(limit=64)
    assert once.source(small) == b"1,2\n"
    assert once.source(large) == large and once.source(link) == link
    assert once.source(tmp_path / "absent") == tmp_path / "absent"
    assert once.hashed == {small: sha256_file(small)}
    small.write_bytes(b"edited")  # the digest is of the bytes handed over
    assert once.sha256(small) != sha256_file(small)
    assert once.sha256(large) == sha256_file(large)


@pytest.mark.parametrize("edit", ["changed", "deleted"])
def test_a_recorded_cache_file_changed_or_deleted_is_evidence_altered(
    sim_repo: Repo, edit: str
) -> None:
    """Red with the cache left out of the evidence re-check: only a file added to a cache
    was ever tried."""
    outcome = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD"))
    assert rejudge.recompare(outcome.run_dir).exit_code == 0
    kept = outcome.run_dir / "candidate" / "cases" / "a" / "cache" / "c.txt"
    if edit == "changed":
        kept.write_text("forged\n")
    else:
        kept.unlink()
    again = rejudge.recompare(outcome.run_dir)
    assert Code.EVIDENCE_ALTERED in {f.code for f in again.findings} and again.exit_code == 3
