"""A NaN or an infinity that moves: the run says moved, and its run directory is read back
by `compare` and `merge` as the run wrote it. run.json held `NaN` (the size of the move),
which no JSON reader accepts: compare called the run damaged (exit 3) and a sharded gate
could never merge it. Real repositories, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import Repo, fidelity_cli

TABLES = {
    "csv": ('kind = "csv"', "id,v\n1,{}\n"),
    "json": ('kind = "json"', '{{"v": {}}}\n'),
}


def strict(text: str) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is no JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("kind", sorted(TABLES))
@pytest.mark.parametrize(("before", "after"), [("NaN", "1.0"), ("Infinity", "1.0"), ("1.0", "NaN")])
def test_a_nonfinite_value_that_moves_is_read_back_as_it_was_written(
    make_repo, tmp_path: Path, kind: str, before: str, after: str
) -> None:
    spec, template = TABLES[kind]
    if kind == "csv":
        before, after = before.replace("Infinity", "inf"), after.replace("Infinity", "inf")
    name = f"out.{kind}"
    table = (
        f'[[case]]\nid = "c"\nargv = ["cp", "data.txt", "{{out}}/{name}"]\n'
        f'outputs = ["{name}"]\n\n[case.compare."{name}"]\n{spec}\n'
    )
    repo: Repo = make_repo("nonfinite")
    repo.commit({"cases/matrix.toml": table, "data.txt": template.format(before)}, "base")
    repo.commit({"data.txt": template.format(after)}, "moved")
    report = tmp_path / "verdict.json"
    done = fidelity_cli(
        repo.path, "run", "--baseline", "HEAD~1", "--candidate", "HEAD", "--json", str(report)
    )
    assert done.returncode == 1 and "moved" in done.stdout.lower(), done.stdout + done.stderr
    strict(report.read_text())
    (run_dir,) = (repo.path / ".fidelity" / "runs").iterdir()
    strict((run_dir / "run.json").read_text())
    again = fidelity_cli(repo.path, "compare", str(run_dir))
    assert again.returncode == 1, again.stdout + again.stderr
