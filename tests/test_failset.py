"""The failing-set gate on JUnit reports written by real pytest runs: both directions,
collection errors, shards, and flaky tests across several runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo, run_cli

from fidelity.cli.main import main
from fidelity.controls import failset

ABC = """import os


def test_a():
    pass


def test_b():
    assert os.environ.get("FAIL_B") != "1"


def test_c():
    assert os.environ.get("FAIL_C") != "1"
"""
D = """import os

if os.environ.get("BREAK_D") == "1":
    raise ImportError("broken on purpose")


def test_d():
    pass
"""
# pytest's default JUnit family names tests by class name; node ids compare equal to them
B, C = "tests.test_abc::test_b", "tests.test_abc::test_c"


class Runs:
    """Runs the small project's tests for real, one JUnit file per run."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, name: str, *paths: str, **flags: str) -> Path:
        """Run pytest with env flags; `*paths` may hold pytest options too."""
        out = self.root / f"{name}.xml"
        env = {k: v for k, v in os.environ.items() if k not in ("FAIL_B", "FAIL_C", "BREAK_D")}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--continue-on-collection-errors",
                f"--junitxml={out}",
                *paths,
            ],
            cwd=self.root,
            env={**env, **flags},
            capture_output=True,
            check=False,
        )
        return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("suite")
    (root / "tests").mkdir()
    (root / "tests" / "test_abc.py").write_text(ABC)
    (root / "tests" / "test_d.py").write_text(D)
    run = Runs(root)
    plan = {
        "base": ((), {"FAIL_B": "1"}),
        "swap": ((), {"FAIL_C": "1"}),
        "both": ((), {"FAIL_B": "1", "FAIL_C": "1"}),
        "broken": ((), {"FAIL_B": "1", "BREAK_D": "1"}),
        "shard1": (("tests/test_abc.py",), {"FAIL_B": "1"}),
        "shard2": (("tests/test_d.py",), {"FAIL_B": "1"}),
        "xunit1": (("-o", "junit_family=xunit1"), {"FAIL_B": "1"}),
    }
    with ThreadPoolExecutor(2) as pool:  # real runs, two at a time
        futures = {k: pool.submit(run, k, *args, **flags) for k, (args, flags) in plan.items()}
        return {k: f.result() for k, f in futures.items()}


@pytest.fixture
def baseline(reports: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "records" / "failset.json"
    assert (
        main(
            [
                "--quiet",
                "failset",
                "record",
                str(reports["base"]),
                "--out",
                str(out),
                "--command",
                "pytest",
                "--repo",
                str(tmp_path),
            ]
        )
        == 0
    )
    return out


def diff(baseline: Path, *args: str, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "diff.json"
    code = main(
        ["--quiet", "failset", "diff", "--baseline", str(baseline), *args, "--json", str(out)]
    )
    return code, json.loads(out.read_text())["categories"]


def test_record_keeps_the_set_and_its_provenance(baseline: Path) -> None:
    data = json.loads(baseline.read_text())
    assert data["failing"] == [B]
    assert data["counts"] == {
        "tests": 4,
        "failing": 1,
        "passing": 3,
        "flaky": 0,
        "collection_errors": 0,
        "runs": 1,
    }
    assert data["provenance"]["command"] == "pytest"
    assert data["provenance"]["files"][0][0]["sha256"]
    assert failset.load(baseline).failing == (B,)


def test_same_count_different_set_fails_both_ways(
    baseline: Path, reports: dict[str, Path], tmp_path: Path
) -> None:
    code, found = diff(baseline, str(reports["swap"]), tmp_path=tmp_path)
    assert code == 1, "one failure for another: the count is equal, the set is not"
    assert found["new-failure"] == [C]
    assert found["repaired"] == [B]


def test_unchanged_set_holds_and_shards_merge(
    baseline: Path, reports: dict[str, Path], tmp_path: Path
) -> None:
    assert diff(baseline, str(reports["base"]), tmp_path=tmp_path)[0] == 0
    code, found = diff(baseline, str(reports["shard1"]), str(reports["shard2"]), tmp_path=tmp_path)
    assert code == 0 and found["still-failing"] == [B]
    code, found = diff(baseline, str(reports["xunit1"]), tmp_path=tmp_path)
    assert code == 0 and found["still-failing"] == ["tests/test_abc.py::test_b"]


def test_collection_errors_are_their_own_category(
    baseline: Path, reports: dict[str, Path], tmp_path: Path
) -> None:
    code, found = diff(baseline, str(reports["broken"]), tmp_path=tmp_path)
    assert code == 1
    assert found["new-collection-error"] == ["tests.test_d"]
    assert found["new-failure"] == []


def test_flaky_is_reported_apart_never_new_nor_repaired(
    baseline: Path, reports: dict[str, Path], tmp_path: Path
) -> None:
    code, found = diff(
        baseline, str(reports["both"]), "--runs", str(reports["base"]), tmp_path=tmp_path
    )
    assert code == 0
    assert found["flaky"] == [C]
    assert found["new-failure"] == [] and found["repaired"] == []
    code, found = diff(
        baseline, str(reports["swap"]), "--runs", str(reports["base"]), tmp_path=tmp_path
    )
    assert found["flaky"] == [B, C] and code == 0


def test_vanished_failure_asks_for_a_new_baseline(
    baseline: Path, reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = diff(baseline, str(reports["shard2"]), tmp_path=tmp_path)
    assert code == 1 and found["vanished"] == [B]
    assert "re-record the baseline" in capsys.readouterr().out


def test_record_in_a_repository_names_the_revision(
    reports: dict[str, Path], make_repo: Callable[[str], Repo]
) -> None:
    repo = make_repo("rec")
    sha = repo.commit({"README": "x"})
    fs = failset.record([[reports["base"]]], "pytest -q", repo.path)
    assert fs.provenance["revision"] == sha and fs.provenance["dirty"] is False


def test_bad_baseline_and_empty_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "failing": [], "extra": 1}))
    empty = tmp_path / "empty.xml"
    empty.write_text("<testsuites/>")
    assert main(["failset", "diff", "--baseline", str(bad), str(empty)]) == 2
    assert "at $.extra: unknown key 'extra'" in capsys.readouterr().err.replace("\n", "")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"version": 1, "failing": []}))
    assert main(["failset", "diff", "--baseline", str(good), str(empty)]) == 3
    assert main(["failset", "record", str(empty), "--out", str(tmp_path / "x.json")]) == 3
    assert not (tmp_path / "x.json").exists()


ids = st.frozensets(st.sampled_from([f"t.py::t{i}" for i in range(8)]))


@given(ids, ids)
def test_the_gate_is_symmetric_and_holds_against_itself(
    a: frozenset[str], b: frozenset[str]
) -> None:
    everything = frozenset(f"t.py::t{i}" for i in range(8))

    def side(failing: frozenset[str]) -> failset.Sides:
        return failset.Sides(failing=failing, passing=everything - failing, seen=everything)

    def base(failing: frozenset[str]) -> failset.FailSet:
        return failset.FailSet(tuple(sorted(failing)))

    assert failset.compare(base(a), side(a), 1).exit_code() == 0
    forward, backward = failset.compare(base(a), side(b), 1), failset.compare(base(b), side(a), 1)
    assert forward.found["new-failure"] == backward.found["repaired"]
    assert (forward.exit_code() == 0) == (a == b)


def test_a_baseline_failure_now_skipped_has_vanished() -> None:
    """A known failure hidden behind `@skip` did not run: red, not "nothing changed" (red
    before: a skipped test counted as seen, so it was in no class and the gate held)."""
    sides = failset.Sides(passing=frozenset({"t::a"}), seen=frozenset({"t::a", "t::b"}))
    found = failset.compare(failset.FailSet(("t::b",)), sides, 1)
    assert found.found["vanished"] and found.exit_code() == 1, found.summary()


@pytest.mark.parametrize(
    ("now", "says"),
    [
        (set(), "; re-record the baseline with `fidelity failset record`"),  # t::a repaired
        ({"t::a", "t::c"}, "; fix the new failures (the baseline stays as it is)"),
        ({"t::c"}, "; fix the new failures first, then re-record the baseline"),  # both
    ],
)
def test_the_advice_never_takes_a_new_failure_into_the_baseline(now: set[str], says: str) -> None:
    """With a new failure beside a repaired test, "re-record the baseline" would record the
    regression as known (it said so; with the new failure alone it said nothing)."""
    everything = frozenset({"t::a", "t::b", "t::c"})
    sides = failset.Sides(failing=frozenset(now), passing=everything - now, seen=everything)
    summary = failset.compare(failset.FailSet(("t::a",)), sides, 1).summary()
    assert summary.endswith(f"{says} (exit 1)"), summary


def test_a_test_newly_erroring_in_setup_is_a_new_failure(tmp_path: Path) -> None:
    """A fixture that blows up is a JUnit <error>, not a <failure>: still a new failure
    (red with errors left out of what fails)."""
    junit = (
        '<testsuites><testsuite name="pytest" tests="2">\n'
        '<testcase classname="tests.test_x" name="test_a"/>\n'
        '<testcase classname="tests.test_x" name="test_b">{b}</testcase>\n'
        "</testsuite></testsuites>"
    )
    base, now = tmp_path / "base.xml", tmp_path / "now.xml"
    base.write_text(junit.format(b=""))
    now.write_text(junit.format(b='<error message="fixture boom">boom</error>'))
    out = tmp_path / "failset.json"
    argv = ["--quiet", "failset", "record", str(base), "--out", str(out), "--repo", str(tmp_path)]
    assert main(argv) == 0
    code, text = run_cli(["failset", "diff", "--baseline", str(out), str(now)])
    assert code == 1, text
    assert "new-failure" in text and "test_b" in text
