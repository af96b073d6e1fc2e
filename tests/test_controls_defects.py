"""One test per defect of issue 13, each on the fixture library (tests/data/controls_lib) in a
real repository, with real pytest runs: ids that look like markup, parametrized and
non-ASCII ids, table mistakes, --in-diff, timeouts, setup, logs, and tests never seen to
fail."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from support import CONTROLS_LIB, Repo, alive, controls_lib, run_cli, wait_for

from fidelity import worktree
from fidelity.cli.main import build_parser
from fidelity.controls import gate as controls
from fidelity.controls.runner import sweep_plugin_dirs
from fidelity.controls.verdict import Verdict
from fidelity.errors import UsageError

TABLE = (CONTROLS_LIB / "controls.toml").read_text()
HEAD, _, _ = TABLE.partition("[[control]]")


def wide(argv: list[str]) -> tuple[int, str]:
    """Run one command with a 400-column console, so that no id is folded."""
    import io

    args = build_parser().parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, Console(file=out, width=400, color_system=None))
    return code, out.getvalue()


def entry(cid: str) -> str:
    """One control's entry of the fixture library's table."""
    start = TABLE.index(f'[[control]]\nid = "{cid}"')
    end = TABLE.find("[[control]]", start + 1)
    return TABLE[start : end if end != -1 else None]


SETUP_LINE = next(line for line in HEAD.splitlines() if line.startswith("setup = "))
PLAIN_HEAD = HEAD.replace(SETUP_LINE + "\n", "")
PLAIN = TABLE.replace(SETUP_LINE + "\n", "").replace(
    TABLE[TABLE.index('[[control]]\nid = "version-suffix"') :], ""
)


@pytest.fixture
def lib(make_repo: Callable[[str], Repo]) -> Repo:
    """The fixture library without its generated module, its setup and the control that
    needs them, so that each test here fails on the code before issue 13 for its own defect
    (not for the `setup` key that code did not know)."""
    repo = make_repo("lib")
    controls_lib(repo, PLAIN)
    repo.rm("tests/test_version.py", "no generated module here")
    return repo


@pytest.fixture
def full_lib(make_repo: Callable[[str], Repo]) -> Repo:
    repo = make_repo("full")
    controls_lib(repo)
    return repo


def test_ids_that_look_like_markup_print_as_they_are_and_every_report_is_written(
    lib: Repo, tmp_path: Path
) -> None:
    """Defect 2: `[/api/users]` was read as a Rich closing tag (MarkupError, exit 3)."""
    out = tmp_path / "r"
    code, text = wide(
        [
            "controls",
            "run",
            "--repo",
            str(lib.path),
            "--only",
            "route-unrooted",
            "--jobs",
            "1",
            "--json",
            str(out / "c.json"),
            "--markdown",
            str(out / "c.md"),
        ]
    )
    assert "tests/test_names.py::test_route[/api/users]" in text, "not cut to the function"
    assert code == 0, text
    data = json.loads((out / "c.json").read_text())
    assert data["controls"][0]["verdict"] == "caught"
    assert "test\\_route\\[/api/users\\]" in (out / "c.md").read_text(), "escaped: no link"


class Broken(Console):
    """A terminal that fails on the first write."""

    def print(self, *args: object, **kwargs: object) -> None:
        raise OSError("the terminal went away")


def test_machine_readable_reports_are_written_before_the_terminal(
    lib: Repo, tmp_path: Path
) -> None:
    for argv in (
        ["controls", "run", "--only", "slug-underscores", "--jobs", "1"],
        ["controls", "validate"],
    ):
        out = tmp_path / argv[1]
        args = build_parser().parse_args(
            [
                *argv,
                "--repo",
                str(lib.path),
                "--json",
                str(out / "r.json"),
                "--markdown",
                str(out / "r.md"),
            ]
        )
        with open(os.devnull, "w") as null, pytest.raises(OSError, match="the terminal went away"):
            args.handler(args, Broken(file=null))
        assert json.loads((out / "r.json").read_text())["exit_code"] == 0
        assert (out / "r.md").read_text().startswith("###")


def test_a_function_id_names_all_its_cases_and_real_characters_match(lib: Repo) -> None:
    """Defect 4: `caught_by` naming a parametrized function turned into `unviable`, and
    non-ASCII ids matched only in pytest's escaped form (`test_route[\\xe9]`)."""
    report = controls.run(
        lib.path,
        controls.load(lib.path),
        only=["slug-underscores", "route-unrooted"],
        jobs=2,
    )
    by_id = {r.id: r for r in report.results}
    assert by_id["slug-underscores"].verdict is Verdict.CAUGHT
    assert len(by_id["slug-underscores"].failing) == 3, "every case of test_slug failed"
    assert by_id["route-unrooted"].verdict is Verdict.CAUGHT
    assert "tests/test_names.py::test_route[\\xe9]" in by_id["route-unrooted"].failing
    assert report.exit_code() == 0


def test_a_table_mistake_is_a_usage_error_before_any_control_runs(lib: Repo) -> None:
    """Defect 4: an unknown test id or an anchor that does not match is exit 2, located,
    never a verdict; the anchors are checked before anything runs at all."""
    bad_anchor = entry("tax-rate").replace("TAX = 20", "TAX = 21", 1)
    lib.commit({"cases/controls.toml": PLAIN_HEAD + bad_anchor + entry("slug-underscores")})
    with pytest.raises(UsageError) as caught:
        controls.run(lib.path, controls.load(lib.path), jobs=1)
    line = (PLAIN_HEAD + bad_anchor).splitlines().index('id = "tax-rate"') + 1
    assert (
        f"controls.toml:{line}: control 'tax-rate': edit #1 (shop/prices.py): find 'TAX = 21' "
        "does not occur; it must match exactly once" in str(caught.value)
    )
    assert not (lib.path / ".fidelity" / "controls").exists(), "nothing ran, no run directory"
    unknown = entry("slug-underscores").replace("::test_slug", "::test_slugs")
    lib.commit({"cases/controls.toml": PLAIN_HEAD + unknown + entry("dollar-rate")})
    with pytest.raises(UsageError) as caught:
        controls.run(lib.path, controls.load(lib.path), jobs=1)
    assert (
        f"controls.toml:{line}: control 'slug-underscores': caught_by names no collected test: "
        "tests/test_names.py::test_slugs" in str(caught.value)
    )
    (run_dir,) = (lib.path / ".fidelity" / "controls").iterdir()
    logs = sorted(
        p.name for p in run_dir.glob("*.log") if not p.name.endswith((".setup.log", ".server.log"))
    )
    assert logs == ["_unmodified-1.log"], "no control ran"
    assert "no tests ran" in (run_dir / "_unmodified-1.log").read_text(), "stopped at collection"


def test_in_diff_selects_changed_entries_and_skips_a_docs_only_change(lib: Repo) -> None:
    """Defect 5: a change to the control table selected nothing, and a docs-only change
    ended in exit 3; now changed entries are selected and nothing to judge is a skip."""
    base = lib.git("rev-parse", "HEAD")
    lib.commit({"README.md": "docs only\n"})
    code, text = run_cli(["-q", "controls", "run", "--repo", str(lib.path), "--in-diff", base])
    assert code == 0
    assert "SKIPPED: --in-diff" in text and "nothing to judge, so nothing ran (exit 0)" in text
    changed = PLAIN.replace('why = "the dollar rate is read from the data file"', 'why = "dollars"')
    lib.commit({"cases/controls.toml": changed})
    picked = controls.select(lib.path, controls.load(lib.path), "HEAD", (), base)
    assert [c.id for c in picked] == ["dollar-rate"], "its entry changed"
    lib.commit(
        {"cases/controls.toml": changed.replace("[controls]", "[controls]\ntimeout_s = 300")}
    )
    picked = controls.select(lib.path, controls.load(lib.path), "HEAD", (), base)
    assert len(picked) == PLAIN.count("[[control]]"), "[controls] changed: every control"


SLOW_ONCE = """\
import time
from pathlib import Path

from shop.names import slug

MARK = Path({mark!r})


def test_slow_once_under_the_slug_control():
    if slug("a b") == "a_b" and not MARK.exists():
        MARK.write_text("slept")
        time.sleep(60)
"""


def test_timeouts_say_their_limit_and_are_checked_again_before_they_count(
    lib: Repo, tmp_path: Path
) -> None:
    """Defect 6: an undocumented 600 s default, a message without the limit, and a timeout
    called on the first try. The limit comes from the unmodified tree's time (5x + 30 s)
    unless the table sets one; a timeout is run again, alone, before it counts."""
    mark = tmp_path / "slept"
    once = entry("slug-underscores").replace(
        'caught_by = ["tests/test_names.py::test_slug"]',
        'caught_by = ["tests/test_names.py::test_slug"]\ntimeout_s = 10',
    )
    always = (
        entry("dollar-rate")
        .replace('"USD": 110', '"USD": 110, "sleep": 1')
        .replace(
            'caught_by = ["tests/test_rates.py::test_dollar"]',
            'caught_by = ["tests/test_rates.py::test_dollar"]\ntimeout_s = 3',
        )
    )
    lib.commit(
        {
            "tests/test_slow.py": SLOW_ONCE.format(mark=str(mark)),
            "tests/test_rates.py": (CONTROLS_LIB / "tests" / "test_rates.py").read_text()
            + "\n\ndef test_sleeps_when_told():\n    import json, time\n    from shop.rates import HERE\n"
            "    if 'sleep' in json.loads((HERE / 'data' / 'rates.json').read_text()):\n        time.sleep(60)\n",
            "cases/controls.toml": PLAIN_HEAD + once + always + entry("tax-rate"),
        }
    )
    report = controls.run(lib.path, controls.load(lib.path), jobs=1, full=True)
    by_id = {r.id: r for r in report.results}
    first = by_id["slug-underscores"]
    assert first.verdict is Verdict.CAUGHT, first
    assert "the first run timed out at 10 s" in first.detail
    twice = by_id["dollar-rate"]
    assert twice.verdict is Verdict.TIMEOUT
    assert "timed out twice" in twice.detail and "timed out after 3 s" in twice.detail
    assert "(limit: timeout_s in the table)" in twice.detail
    derived = by_id["tax-rate"]
    unmodified = report.baseline.duration_s
    assert derived.timeout_s == round(5 * unmodified + 30, 1), "5 x the unmodified time + 30 s"


def test_unviable_shows_the_error_and_every_log_is_kept(lib: Repo) -> None:
    """Defect 7: `unviable` showed no error and nothing was kept on disk."""
    broken = entry("slug-underscores").replace(
        'replace = \'replace(" ", "_")\'', 'replace = \'replace(" ", "_"\''
    )
    lib.commit({"cases/controls.toml": PLAIN_HEAD + broken})
    report = controls.run(lib.path, controls.load(lib.path), jobs=1)
    (result,) = report.results
    assert result.verdict is Verdict.UNVIABLE
    assert "SyntaxError" in result.detail or "never closed" in result.detail, result.detail
    run_dir = Path(report.logs)
    assert (run_dir / "slug-underscores.log").is_file() and Path(result.log).is_file()
    saved = json.loads((run_dir / "report.json").read_text())
    assert saved["controls"][0]["verdict"] == "unviable"


def test_setup_runs_in_every_tree_and_without_it_the_harness_is_unsound(
    full_lib: Repo,
) -> None:
    """Defect 8: no `setup` key, so a generated `_version.py` needed a wrapper script."""
    lib = full_lib
    report = controls.run(lib.path, controls.load(lib.path), only=["version-suffix"], jobs=1)
    assert [r.verdict for r in report.results] == [Verdict.CAUGHT]
    assert report.exit_code() == 0  # the no-op tree set up too: it leaks nothing
    # setup remakes files from the edited tree: never swapped into a tree imported before it
    assert "swap" not in {r.mode for r in [*report.results, report.noop] if r is not None}
    lib.commit({"cases/controls.toml": TABLE.replace(SETUP_LINE + "\n", "")})
    assert controls.load(lib.path).setup == ()
    report = controls.run(lib.path, controls.load(lib.path), only=["version-suffix"], jobs=1)
    assert report.exit_code() == 3
    assert "test_version_is_written" in ", ".join(report.baseline.failing)


def test_an_uncommitted_table_is_said_to_be_judged_against_head(lib: Repo) -> None:
    """Defect 8: an uncommitted control table was used silently against HEAD."""
    (lib.path / "cases" / "controls.toml").write_text(PLAIN_HEAD + entry("dollar-rate"))
    code, text = run_cli(["-q", "controls", "run", "--repo", str(lib.path), "--jobs", "1"])
    assert code == 0
    assert (
        "note: cases/controls.toml has uncommitted changes: the table as it is in your work "
        "tree was judged against the committed tree" in " ".join(text.split())
    )


def test_tests_never_seen_to_fail_are_listed(lib: Repo, tmp_path: Path) -> None:
    """Item 11: the report lists the tests no control has caught."""
    out = tmp_path / "c.json"
    code, text = run_cli(
        [
            "-q",
            "controls",
            "run",
            "--repo",
            str(lib.path),
            "--only",
            "dollar-rate",
            "--jobs",
            "1",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    never = json.loads(out.read_text())["never_failed"]
    assert "tests/test_rates.py::test_dollar" not in never
    assert "tests/test_rates.py::test_euro_is_the_base" in never
    assert f"{len(never)} of " in text and "were never seen to fail by these controls" in text


def test_sigkill_leaves_a_control_worktree_the_next_controls_run_removes(
    lib: Repo, tmp_path: Path
) -> None:
    """Issue 11 item 7 for controls: SIGKILL mid-run; the next run reports and prunes."""
    mark = tmp_path / "pid"
    sleepy = entry("gross-drops-tax").replace(
        'replace = "return cents"',
        f"replace = \"return open({str(mark)!r}, 'w').write(str(__import__('os').getpid())) and __import__('time').sleep(120)\"",
    )
    lib.commit({"cases/controls.toml": PLAIN_HEAD + sleepy + entry("dollar-rate")})
    cmd = [sys.executable, "-m", "fidelity", "-q", "controls", "run", "--repo", str(lib.path)]
    temp = tmp_path / "tmp"  # the runs' own temporary folder, to see what a kill leaves
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    killed = subprocess.Popen(
        [*cmd, "--only", "gross-drops-tax", "--jobs", "1", "--full"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        wait_for(mark, 120)
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=30)
    finally:
        killed.kill()
    orphan = int(mark.read_text())
    listing = lib.git("worktree", "list", "--porcelain")
    assert f"locked fidelity pid={killed.pid} " in listing
    assert len(list(temp.glob("fidelity-plugins-*"))) == 1, "atexit never ran: the kill left it"
    nxt = subprocess.run(
        [*cmd, "--only", "dollar-rate", "--jobs", "1"], capture_output=True, text=True, env=env
    )
    assert list(temp.glob("fidelity-plugins-*")) == [], "the next run swept the killed one's"
    assert nxt.returncode == 0, nxt.stderr
    assert "removed worktree" in nxt.stderr and f"fidelity pid={killed.pid} " in nxt.stderr
    assert "orphaned process(es) still running in it" in nxt.stderr and str(orphan) in nxt.stderr
    assert lib.git("worktree", "list", "--porcelain").count("worktree ") == 1
    deadline = time.monotonic() + 10
    while alive(orphan) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(orphan)


JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="pytest" tests="1">
<testcase classname="tests.test_api" name="test_route[/api/users]" file="tests/test_api.py">{body}</testcase>
</testsuite></testsuites>
"""


def test_failset_and_negative_tables_print_ids_as_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect 2 in every action: the shared table report parsed cells as markup too."""
    failing, passing = tmp_path / "f.xml", tmp_path / "p.xml"
    failing.write_text(JUNIT.format(body='<failure message="no"/>'))
    passing.write_text(JUNIT.format(body=""))
    base = tmp_path / "base.json"
    assert run_cli(["failset", "record", str(failing), "--out", str(base)])[0] == 0
    code, text = wide(["failset", "diff", "--baseline", str(base), str(passing)])
    assert code == 1
    assert "repaired" in text and "tests/test_api.py::test_route[/api/users]" in text


def test_only_plugin_folders_of_dead_owners_are_swept(tmp_path: Path) -> None:
    """A live owner's folder, one from another host and one without an owner file (being
    made, or from an older fidelity) stay; only a dead owner's goes."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    owners = {
        "dead": worktree.Owner(gone.pid, "1", socket.gethostname()).reason(),
        "live": worktree.me().reason(),
        "elsewhere": worktree.Owner(gone.pid, "1", "another-host").reason(),
    }
    for name, reason in owners.items():
        (tmp_path / f"fidelity-plugins-{name}").mkdir()
        (tmp_path / f"fidelity-plugins-{name}" / "owner").write_text(reason)
    (tmp_path / "fidelity-plugins-unowned").mkdir()
    (tmp_path / "unrelated-dead").mkdir()
    (tmp_path / "unrelated-dead" / "owner").write_text(owners["dead"])
    assert sweep_plugin_dirs(tmp_path) == [tmp_path / "fidelity-plugins-dead"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fidelity-plugins-elsewhere",
        "fidelity-plugins-live",
        "fidelity-plugins-unowned",
        "unrelated-dead",
    ]


def test_uncommitted_source_and_tests_are_said_to_be_untested(lib: Repo) -> None:
    """Issue 22: a red test left uncommitted gave exit 0 and no word about it."""
    (lib.path / "tests" / "test_wip.py").write_text("def test_wip():\n    assert False\n")
    try:
        code, text = run_cli(["-q", "controls", "run", "--repo", str(lib.path), "--jobs", "1"])
    finally:
        (lib.path / "tests" / "test_wip.py").unlink()
    assert code == 0, "the committed tree is what is judged"
    assert (
        "note: 1 uncommitted file(s) were not tested (tests/test_wip.py): the controls ran on "
        "HEAD as committed (pass --with-uncommitted to test the work tree)"
    ) in " ".join(text.split())


def test_a_derived_limit_is_doubled_for_the_run_alone_and_a_set_one_is_kept(tmp_path: Path) -> None:
    """Issue 38 item 4: load on the machine broke a limit derived from the unmodified run
    twice over; the run alone gets twice the derived limit, never more than a set one."""
    from fidelity.controls.lane import Job
    from fidelity.controls.planning import Plan, alone, timeout_for
    from fidelity.controls.table import parse
    from fidelity.controls.verdict import RunStatus, TreeRun

    table = parse((PLAIN_HEAD + entry("slug-underscores")).encode(), "controls.toml")
    (c,) = table.controls
    # the limit and its wording as planning derives them (`alone` reads that wording)
    limit, how = timeout_for(c, TreeRun(RunStatus.PASSED, duration_s=2.0))
    derived = Plan(c, Job(c, tmp_path / "log", limit), how)
    again = alone(derived)
    assert again.job.timeout_s == 2 * limit and again.job.control.timeout_s == 2 * limit
    assert again.how.endswith("x 2 for the run alone")
    given = Plan(c, Job(c, tmp_path / "log", 40.0), "timeout_s in the table")
    assert alone(given) == given
