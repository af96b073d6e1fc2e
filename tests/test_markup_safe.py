"""The user's text is printed as it is, never read as Rich markup, by the matrix commands.

Issue 13 found a test id `[/api/users]` crashing the controls report. The same held for
`fidelity cases list` (a case's argv, e.g. a pytest node id with brackets: exit 3) and for
the run's case table, whose detail quotes a failing case's standard error.
"""

from __future__ import annotations

import json
from pathlib import Path

from support import PY, Repo, run_cli

ROUTE = "tests/test_api.py::test_route[/api/users]"
GOOD = "import pathlib, sys\npathlib.Path(sys.argv[1], 'x').write_text('1')\n"
BAD = "import sys\nsys.stderr.write('no route [/api/users] [bold]here\\n')\nsys.exit(1)\n"


def table(argv: list[str]) -> str:
    return f'[[case]]\nid = "api"\nargv = {json.dumps(argv)}\noutputs = ["x"]\ntimeout_s = 30\n'


def test_cases_list_prints_brackets_in_a_command_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(table(["python", "-m", "pytest", ROUTE]))
    code, out = run_cli(["cases", "list", str(path)])
    assert code == 0 and ROUTE in out
    code, out = run_cli(["-q", "cases", "list", str(path)])
    assert code == 0
    assert f"api\t\tx\tpython -m pytest {ROUTE}" in out.splitlines()


def test_a_failing_cases_stderr_in_the_run_table_is_text(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    steady = table([PY, "-c", GOOD, "{out}"]).replace('"api"', '"steady"')
    cases = table([PY, "prog.py", "{out}"]) + "\n" + steady  # one compared, one failing
    base = repo.commit({"cases/matrix.toml": cases, "prog.py": GOOD})
    cand = repo.commit({"prog.py": BAD})
    run = ["run", "--baseline", base, "--candidate", cand, "--repo", str(repo.path)]
    code, out = run_cli(run)
    assert code == 1, out  # the candidate failed: evidence, not a crash of the report (exit 3)
    assert "[/api/users]" in out and "[bold]" in out
    code, out = run_cli(["-q", *run])
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith("api: "))
    assert "failed (exit 1): no route [/api/users] [bold]here" in line
