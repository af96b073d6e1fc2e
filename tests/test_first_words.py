"""What a newcomer trips on first: a repository without a case table, the option names that
differ between commands, `-` for standard output. Each message says what to do next."""

from __future__ import annotations

import json
from pathlib import Path

from support import Repo, fidelity_cli


def test_no_case_table_says_where_to_learn_to_write_one(sim_repo: Repo) -> None:
    (sim_repo.path / "cases" / "matrix.toml").unlink()
    sim_repo.commit(message="no table")
    done = fidelity_cli(sim_repo.path, "run", "--baseline", "HEAD~1")
    assert done.returncode == 2, done.stdout + done.stderr
    said = " ".join(done.stderr.split())
    assert "no case table at" in said and "docs/case-table.md" in said
    assert "fidelity demo --dir DIR" in said and "--cases FILE" in said


def test_cases_validate_and_list_suggest_only_an_option_they_take(tmp_path: Path) -> None:
    """They said "name another with --cases FILE", which they refuse (their FILE is a
    positional argument)."""
    for command in ("validate", "list"):
        done = fidelity_cli(tmp_path, "cases", command, "nope.toml")
        said = " ".join(done.stderr.split())
        assert done.returncode == 2 and "no case table at nope.toml" in said, said
        assert "--cases" not in said and said.endswith("or name another as FILE"), said


def test_check_docs_takes_repo_as_the_other_commands_spell_it(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# T\n\n[gone](gone.md)\n")
    by_root = fidelity_cli(tmp_path.parent, "check-docs", "--root", str(tmp_path))
    by_repo = fidelity_cli(tmp_path.parent, "check-docs", "--repo", str(tmp_path))
    assert by_root.returncode == by_repo.returncode == 1, by_repo.stderr
    assert by_root.stdout == by_repo.stdout and "FD401" in by_repo.stdout


def test_preflight_json_to_standard_output(sim_repo: Repo) -> None:
    done = fidelity_cli(sim_repo.path, "preflight", "--all", "--json", "-")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)  # the report alone: no gate lines around it
    assert isinstance(report, dict) and report
