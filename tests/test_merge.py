"""Shards of one run, merged: the same answer as the unsharded run, and refusals."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support import PY, Repo

from fidelity.cli.main import main
from fidelity.errors import UsageError
from fidelity.matrix import gate, merge, rejudge
from fidelity.matrix.run.request import RunRequest, Shard
from fidelity.matrix.verdict.findings import Code
from fidelity.matrix.verdict.outcome import Outcome


def answer(outcome: Outcome) -> dict[str, object]:
    return {
        "verdicts": {r.case_id: str(r.verdict) for r in outcome.comparison.cases},
        "findings": sorted(str(f.code) for f in outcome.findings),
        "exit": outcome.exit_code,
    }


def shards(repo: Repo, base: str, n: int, tmp: Path, **kw: object) -> list[Path]:
    dirs = []
    for k in range(1, n + 1):
        out = tmp / f"shard-{k}"
        gate.run(repo.path, RunRequest(base, "HEAD", out=out, shard=Shard(k, n), **kw))  # type: ignore[arg-type]
        dirs.append(out)
    return dirs


def test_merged_shards_answer_as_the_unsharded_run(sim_repo: Repo, tmp_path: Path) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"value.txt": "bad\n"})
    whole = gate.run(sim_repo.path, RunRequest(base, "HEAD"))
    merged = merge.merge(shards(sim_repo, base, 2, tmp_path), tmp_path / "merged")
    assert answer(merged) == answer(whole)
    assert answer(rejudge.recompare(merged.run_dir)) == answer(whole)


def test_an_empty_shard_is_valid(sim_repo: Repo, tmp_path: Path, capsys) -> None:
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD"]
    assert main([*argv, "--shard", "5/5", "--out", str(tmp_path / "empty")]) == 0
    assert "SHARD 5/5: evidence kept for 0 of 3 declared cases" in capsys.readouterr().out


def test_missing_and_duplicated_shards_are_findings(sim_repo: Repo, tmp_path: Path) -> None:
    one, two = shards(sim_repo, "HEAD", 2, tmp_path)
    missing = merge.merge([one], tmp_path / "m1")
    assert Code.SHARD_MISSING in {f.code for f in missing.findings} and missing.exit_code == 3
    again_one = tmp_path / "one-again"  # the same shard's evidence, in a folder of its own
    shutil.copytree(one, again_one)
    twice = merge.merge([one, two, again_one], tmp_path / "m2")
    assert Code.SHARD_DUPLICATED in {f.code for f in twice.findings} and twice.exit_code == 3
    with pytest.raises(UsageError, match=f"{one} is given twice"):  # a slip, not evidence
        merge.merge([one, two, tmp_path / ".." / tmp_path.name / one.name], tmp_path / "m6")
    for stored, code in ((missing, Code.SHARD_MISSING), (twice, Code.SHARD_DUPLICATED)):
        again = rejudge.recompare(stored.run_dir)  # what a later compare or verify reads
        assert code in {f.code for f in again.findings} and again.exit_code == 3, code
        # the cases no shard ran, and the executed counts, as the merge judged them
        assert answer(again) == answer(stored), code
        assert again.comparison.summary == stored.comparison.summary, code
    full = merge.merge([two, one], tmp_path / "m3")
    assert full.findings == () and full.exit_code == 0


def test_merge_refuses_shards_of_different_runs(sim_repo: Repo, tmp_path: Path, capsys) -> None:
    one = shards(sim_repo, "HEAD", 2, tmp_path / "a")[0]
    sim_repo.commit({"value.txt": "two\n"})
    other = shards(sim_repo, "HEAD", 2, tmp_path / "b")[1]
    assert main(["merge", str(one), str(other), "--out", str(tmp_path / "m")]) == 2
    assert "is not a shard of the same run" in capsys.readouterr().err
    edited = shards(sim_repo, "HEAD", 2, tmp_path / "c")
    run_json = edited[0] / "run.json"
    text = run_json.read_text()
    assert '"exit_code":0' in text  # run.json is compact: the edit below must change it
    run_json.write_text(text.replace('"exit_code":0', '"exit_code":1', 1))
    assert main(["merge", *map(str, edited), "--out", str(tmp_path / "m4")]) == 3  # damaged
    assert "edited after the run" in capsys.readouterr().err
    plain = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "plain"))
    assert main(["merge", str(plain.run_dir), "--out", str(tmp_path / "m5")]) == 2


def test_a_predicted_run_in_shards_is_judged_once_merged(
    sim_repo: Repo, tmp_path: Path, capsys
) -> None:
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit(
        {"value.txt": "two\n", "cases/p.toml": '[prediction]\nwhy = "x"\nmoved = ["a", "b", "c"]\n'}
    )
    dirs = shards(sim_repo, base, 3, tmp_path, expect="cases/p.toml")
    for d in dirs:
        assert json.loads((d / "run.json").read_text())["exit_code"] == 0  # evidence only
    merged = merge.merge(dirs, tmp_path / "merged")
    assert merged.findings == () and merged.judged is not None
    assert main(["-q", "verify", str(merged.run_dir)]) == 0
    assert "HELD" in capsys.readouterr().out


def test_durations_of_an_earlier_run_balance_the_shards(sim_repo: Repo, tmp_path: Path) -> None:
    earlier = gate.run(sim_repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "e"))
    argv = ["-q", "run", "--repo", str(sim_repo.path), "--baseline", "HEAD", "--shard", "1/2"]
    assert (
        main([*argv, "--shard-durations", str(earlier.run_dir), "--out", str(tmp_path / "s")]) == 0
    )
    assert main([*argv[:-2], "--shard", "3/2"]) == 2


SPARSE = """
import os, pathlib, sys
with (pathlib.Path(os.environ["CACHE"]) / "model.bin").open("wb") as f:
    f.write(b"head")
    f.truncate(64 << 20)
(pathlib.Path(sys.argv[1]) / "result.txt").write_text("1")
"""


def test_a_sparse_cache_stays_sparse_in_the_merged_run(make_repo, tmp_path: Path) -> None:
    repo: Repo = make_repo("sparse")
    case = (
        f'[[case]]\nid = "s"\nargv = [{json.dumps(PY)}, "sparse.py", "{{out}}"]\n'
        'outputs = ["result.txt"]\ncache_env = "CACHE"\n'
    )
    repo.commit({"sparse.py": SPARSE, "cases/matrix.toml": case})
    dirs = shards(repo, "HEAD", 1, tmp_path)
    shard = dirs[0] / "candidate" / "cases" / "s" / "cache" / "model.bin"
    if shard.stat().st_blocks * 512 > 1 << 20:
        pytest.skip("this filesystem does not keep holes")
    merged = merge.merge(dirs, tmp_path / "merged")
    copy = merged.run_dir / "candidate" / "cases" / "s" / "cache" / "model.bin"
    assert copy.stat().st_size == 64 << 20 and copy.stat().st_blocks * 512 < 1 << 20
    assert merged.exit_code == 0, merged.findings


def _forge(case: Path) -> None:
    (case / "out" / "result.txt").write_text("forged\n")


def _delete(case: Path) -> None:
    (case / "out" / "result.txt").unlink()


def _add_cache(case: Path) -> None:
    (case / "cache" / "planted.txt").write_text("x")


def _link(case: Path) -> None:
    (case / "out" / "result.txt").unlink()
    (case / "out" / "result.txt").symlink_to(case / "cache" / "c.txt")


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        (_forge, "out/result.txt changed"),
        (_delete, "out/result.txt missing"),
        (_add_cache, "cache/planted.txt added"),
        (_link, "out/result.txt replaced by a link"),
    ],
)
def test_a_shard_whose_evidence_was_altered_is_untrusted_once_merged(
    sim_repo: Repo, tmp_path: Path, capsys, tamper: Callable[[Path], None], said: str
) -> None:
    """Each shard's files are hashed again against its run.json before they are combined;
    the run itself was HELD, and stays so when nothing was touched."""
    base = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit(
        {"value.txt": "two\n", "cases/p.toml": '[prediction]\nwhy = "x"\nmoved = ["a", "b", "c"]\n'}
    )
    dirs = shards(sim_repo, base, 2, tmp_path, expect="cases/p.toml")
    argv = ["-q", "merge", *map(str, dirs)]
    assert main([*argv, "--out", str(tmp_path / "untouched")]) == 0
    assert "HELD" in capsys.readouterr().out
    n, shard = next((n, d) for n, d in enumerate(dirs, 1) if (d / "candidate/cases/b").is_dir())
    tamper(shard / "candidate" / "cases" / "b")
    assert main([*argv, "--out", str(tmp_path / "merged")]) == 3
    out = capsys.readouterr().out
    assert f"evidence-altered [candidate] case b: shard {n} ({shard}): {said}" in out
    assert "HELD" not in out and "UNTRUSTED" in out
    assert main(["-q", "verify", str(tmp_path / "merged")]) == 3, "the merged copy is no better"


TAMPER = (
    "import pathlib, os, stat; p = pathlib.Path(os.environ['H']) / 'cases' / 'drive.py';"
    "p.chmod(p.stat().st_mode | stat.S_IWUSR); p.write_text(p.read_text() + '# x')"
)
DRIVE = "import pathlib, sys; (pathlib.Path(sys.argv[1]) / 'v.txt').write_text('1')\n"


def harness_shards(repo: Repo, tmp: Path, tamper: bool) -> list[Path]:
    """Two cases through a {harness} driver, one per shard; with tamper, the case of the
    second shard writes into the harness, a `harness-changed` finding of that shard."""
    first = f'{PY} -c "$T" && ' if tamper else ""
    two = json.dumps(first + f"{PY} {{harness}}/cases/drive.py {{out}}")
    table = f"""[[case]]
id = "one"
argv = [{json.dumps(PY)}, "{{harness}}/cases/drive.py", "{{out}}"]
outputs = ["v.txt"]

[[case]]
id = "two"
argv = {two}
shell = true
env = {{ H = "{{harness}}", T = {json.dumps(TAMPER)} }}
outputs = ["v.txt"]
"""
    repo.commit({"cases/matrix.toml": table, "cases/drive.py": DRIVE})
    dirs = shards(repo, "HEAD", 2, tmp)
    selected = [json.loads((d / "run.json").read_text())["selection"]["selected"] for d in dirs]
    assert selected == [["one"], ["two"]]  # the tampering case runs in the second shard
    return dirs


def test_a_harness_finding_of_any_shard_survives_the_merge(make_repo, tmp_path: Path) -> None:
    dirs = harness_shards(make_repo("h"), tmp_path, tamper=True)
    assert json.loads((dirs[1] / "run.json").read_text())["exit_code"] == 3
    merged = merge.merge(dirs, tmp_path / "merged")
    changed = [f.message for f in merged.findings if f.code is Code.HARNESS_CHANGED]
    assert len(changed) == 1 and "cases/drive.py" in changed[0], merged.findings
    assert merged.exit_code == 3
    assert rejudge.recompare(merged.run_dir).exit_code == 3


def test_shards_that_read_different_harness_files_are_refused(
    make_repo, tmp_path: Path, capsys
) -> None:
    """Run from the checkout, a driver edited between two shards gives each shard another
    harness under the same commit and table."""
    repo: Repo = make_repo("h")
    one = harness_shards(repo, tmp_path / "a", tamper=False)[0]
    (repo.path / "cases" / "drive.py").write_text(DRIVE + "# edited, not committed\n")
    two = shards(repo, "HEAD", 2, tmp_path / "b")[1]
    assert main(["merge", str(one), str(two), "--out", str(tmp_path / "m")]) == 2
    assert "its harness files differ" in capsys.readouterr().err


# --- gates the suite had no red case for (an audit planted each fault; each test goes red) ---


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_shards_run_against_different_commits_of_one_side_are_refused(
    sim_repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str], side: str
) -> None:
    """Only one side's commit differs (the harness is HEAD for both): red with that side
    left out of what shards must share, where the merge exited 0."""
    first = sim_repo.git("rev-parse", "HEAD")
    sim_repo.commit({"notes.txt": "x\n"})
    one, two = tmp_path / "a", tmp_path / "b"
    for out, shard, rev in ((one, Shard(1, 2), first), (two, Shard(2, 2), "HEAD")):
        sides = (rev, "HEAD") if side == "baseline" else ("HEAD", rev)
        gate.run(sim_repo.path, RunRequest(*sides, out=out, shard=shard))
    assert main(["merge", str(one), str(two), "--out", str(tmp_path / "m")]) == 2
    assert f"its {side} commit differs" in capsys.readouterr().err


def test_a_side_changed_in_any_shard_survives_the_merge(
    make_repo: Callable[[str], Repo], tmp_path: Path
) -> None:
    """Case two edits a tracked file in its side's worktree; it runs in shard 2 only (red
    with the merge keeping the first shard's side findings alone)."""
    repo = make_repo("w")
    w = "printf x > {out}/r.txt"
    table = "".join(
        f'[[case]]\nid = "{cid}"\nargv = {json.dumps(script)}\nshell = true\noutputs = ["r.txt"]\n'
        for cid, script in (("one", w), ("two", f"echo 'x = 2' > src/code.py && {w}"))
    )
    repo.commit({"cases/matrix.toml": table, "src/code.py": "x = 1\n"})
    dirs = shards(repo, "HEAD", 2, tmp_path)
    chosen = [json.loads((d / "run.json").read_text())["selection"]["selected"] for d in dirs]
    assert chosen == [["one"], ["two"]]
    merged = merge.merge(dirs, tmp_path / "merged")
    assert Code.SIDE_CHANGED in {f.code for f in merged.findings}, merged.findings
    assert merged.exit_code == 3


def test_an_earlier_runs_durations_put_the_longest_case_alone(
    make_repo: Callable[[str], Repo], tmp_path: Path
) -> None:
    """b takes 0.6 s, a and c nothing: shard 1 of 2 is b alone, where round robin gives a
    and c (red with the durations ignored)."""
    repo = make_repo("d")
    table = "".join(
        f'[[case]]\nid = "{c}"\nargv = {json.dumps(f"sleep {t} && printf x > {{out}}/r.txt")}\n'
        'shell = true\noutputs = ["r.txt"]\n'
        for c, t in (("a", 0), ("b", 0.6), ("c", 0))
    )
    repo.commit({"cases/matrix.toml": table})
    earlier = gate.run(repo.path, RunRequest("HEAD", "HEAD", out=tmp_path / "e"))
    argv = ["-q", "run", "--repo", str(repo.path), "--baseline", "HEAD", "--shard", "1/2"]
    out = tmp_path / "s"
    assert main([*argv, "--shard-durations", str(earlier.run_dir), "--out", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["selection"]["selected"] == ["b"]


def test_an_accepted_missing_shard_is_no_finding_of_each_shard(
    sim_repo: Repo, tmp_path: Path
) -> None:
    """A shard can never find `shard-missing`: the entry was `accepted-unused` in each one
    (exit 3), so every CI shard job failed; once merged, it takes the missing shard."""
    accept = '\n[[accept]]\nfinding = "shard-missing"\nwhy = "shard 2 is flaky on CI"\n'
    table = (sim_repo.path / "cases" / "matrix.toml").read_text() + accept
    sim_repo.commit({"cases/matrix.toml": table}, "accept a missing shard")
    one, two = shards(sim_repo, "HEAD", 2, tmp_path)
    for shard in (one, two):
        assert rejudge.recompare(shard).exit_code == 0, answer(rejudge.recompare(shard))
    merged = merge.merge([one], tmp_path / "m")
    assert Code.ACCEPTED_UNUSED not in {f.code for f in merged.findings}
    assert answer(rejudge.recompare(merged.run_dir)) == answer(merged)
