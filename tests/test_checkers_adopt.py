"""Adopting check-docs on a repository that already has findings, and running it in CI:
one command records today's debt as ratchets, a new finding then fails; folders skip what
git ignores and the exclude globs; GitHub annotations and SARIF; a config file of its own."""

from __future__ import annotations

import json
from pathlib import Path

from support import Repo, fidelity_cli

LEGACY = {
    "README.md": "# Readme\n\nSee [the guide](docs/guide.md) and [old](docs/gone.md).\n",
    "docs/guide.md": "# Guide\n\n## Attempt 1\n\n[back](../README.md#nowhere)\n",
    "docs/clean.md": "# Clean\n",
}


def test_adopt_in_one_command_then_a_new_finding_fails(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit(LEGACY)
    before = fidelity_cli(repo.path, "-q", "check-docs", "README.md", "docs")
    assert before.returncode == 1
    adopt = fidelity_cli(repo.path, "-q", "check-docs", "--record-ratchets", "README.md", "docs")
    assert adopt.returncode == 0, adopt.stdout
    assert (
        "baseline: recorded docs/guide.md FD201 (1 finding) in records/ratchets.json"
        in adopt.stdout.splitlines()
    )
    assert json.loads((repo.path / "records" / "ratchets.json").read_text()) == {
        "README.md": {"FD401": ["link docs/gone.md"]},
        "docs/guide.md": {"FD201": ["Attempt 1"], "FD402": ["link ../README.md#nowhere"]},
    }
    repo.commit(message="adopt check-docs")
    held = fidelity_cli(repo.path, "-q", "check-docs", "README.md", "docs")
    assert (held.returncode, held.stdout) == (
        0,
        "check-docs: 3 files clean; 3 held by the baseline records/ratchets.json (2 pages)\n",
    )
    (repo.path / "docs" / "clean.md").write_text("# Clean\n\n[new](missing.md)\n")
    (repo.path / "README.md").write_text(LEGACY["README.md"] + "\n[another](gone-too.md)\n")
    worse = fidelity_cli(repo.path, "-q", "check-docs", "README.md", "docs")
    assert worse.returncode == 1
    assert worse.stdout.splitlines()[:2] == [
        "README.md:5:11: FD401 link target 'gone-too.md' does not exist (gone-too.md)",
        "docs/clean.md:3:7: FD401 link target 'missing.md' does not exist (docs/missing.md)",
    ]
    again = fidelity_cli(repo.path, "-q", "check-docs", "--record-ratchets", "README.md", "docs")
    assert again.returncode == 1, "recording never adds to an entry the baseline has"
    assert "gone-too.md" in again.stdout and "missing.md" not in again.stdout


def test_a_renamed_or_deleted_page_leaves_no_entry_behind(tmp_path: Path) -> None:
    """Issue 36: after `git mv` or `git rm` of a page its entries were never reported fixed,
    and --update-baseline and --record-baseline kept them."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# Readme\n", "docs/guide.md": "# Guide\n\n[old](gone.md)\n"})
    fidelity_cli(repo.path, "-q", "check-docs", "--record-baseline", "README.md", "docs")
    repo.commit(message="adopt check-docs")
    fixed = (
        "baseline: docs/guide.md FD401 'link gone.md' is fixed: the page was renamed or "
        "deleted; remove it from records/ratchets.json with `fidelity check-docs "
        "--update-baseline`"
    )

    repo.git("mv", "docs/guide.md", "docs/manual.md")
    moved = fidelity_cli(repo.path, "-q", "check-docs", "README.md", "docs")
    assert moved.returncode == 1, "the renamed page's finding is new under its new name"
    assert fixed in moved.stdout.splitlines()
    adopt = fidelity_cli(repo.path, "-q", "check-docs", "--record-baseline", "README.md", "docs")
    assert adopt.returncode == 0, adopt.stdout
    assert adopt.stdout.splitlines()[:2] == [
        "baseline: recorded docs/manual.md FD401 (1 finding) in records/ratchets.json",
        "baseline: removed docs/guide.md FD401 'link gone.md' (fixed: the page was renamed "
        "or deleted)",
    ]
    assert json.loads((repo.path / "records" / "ratchets.json").read_text()) == {
        "docs/manual.md": {"FD401": ["link gone.md"]}
    }
    repo.commit(message="rename the guide")

    repo.git("rm", "-q", "docs/manual.md")
    deleted = fidelity_cli(repo.path, "-q", "check-docs", "README.md")
    assert deleted.returncode == 0, deleted.stdout
    assert deleted.stdout.splitlines()[0] == fixed.replace("guide", "manual")
    update = fidelity_cli(repo.path, "-q", "check-docs", "--update-baseline", "README.md")
    assert update.returncode == 0, update.stdout
    assert json.loads((repo.path / "records" / "ratchets.json").read_text()) == {}
    again = fidelity_cli(repo.path, "-q", "check-docs", "README.md")
    assert again.stdout == "check-docs: 1 file clean\n"


SEVEN = "# Guide\n\n" + "".join(f"- [old {i}](gone-{i}.md)\n" for i in range(1, 8))


def _ci(repo: Repo, *extra: str) -> tuple[int, list[str]]:
    done = fidelity_cli(repo.path, "-q", "check-docs", "--format", "github", *extra)
    return done.returncode, done.stdout.splitlines()


def test_a_baseline_of_fingerprints_annotates_only_what_is_new(tmp_path: Path) -> None:
    """Issue 23's adoption story on a real repository with seven baselined broken links."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": SEVEN})
    adopt = fidelity_cli(repo.path, "-q", "check-docs", "--record-baseline")
    assert adopt.returncode == 0, adopt.stdout
    repo.commit(message="adopt check-docs")

    added = SEVEN + "- [new](gone-new.md)\n"
    (repo.path / "README.md").write_text("Moved down a line.\n\n" + added)
    code, lines = _ci(repo, "--sarif", "out.sarif")
    assert code == 1
    assert lines == [
        "::error file=README.md,line=12,col=9,title=FD401::link target 'gone-new.md' does "
        "not exist (gone-new.md)",
        "check-docs: 1 finding in 1 of 1 file; 7 held by the baseline records/ratchets.json "
        "(1 page)",
    ]
    (result,) = json.loads((repo.path / "out.sarif").read_text())["runs"][0]["results"]
    assert result["baselineState"] == "new"
    assert set(result["partialFingerprints"]) == {"fidelityFinding/v1"}

    replaced = SEVEN.replace("gone-3.md", "README.md") + "- [new](gone-new.md)\n"
    (repo.path / "README.md").write_text(replaced)
    code, lines = _ci(repo)
    assert code == 1, "a fixed finding does not make room for a new one"
    assert [line for line in lines if line.startswith("::error")] == [
        "::error file=README.md,line=10,col=9,title=FD401::link target 'gone-new.md' does "
        "not exist (gone-new.md)",
    ]

    (repo.path / "README.md").write_text(SEVEN.replace("gone-3.md", "README.md"))
    code, lines = _ci(repo)
    assert code == 0
    assert lines == [
        "baseline: README.md FD401 'link gone-3.md' is fixed; remove it from "
        "records/ratchets.json with `fidelity check-docs --update-baseline`",
        "check-docs: 1 file clean; 6 held by the baseline records/ratchets.json (1 page)",
    ]
    update = fidelity_cli(repo.path, "-q", "check-docs", "--update-baseline")
    assert (
        update.stdout.splitlines()[0]
        == "baseline: removed README.md FD401 'link gone-3.md' (fixed)"
    )
    listed = json.loads((repo.path / "records" / "ratchets.json").read_text())
    assert listed == {"README.md": {"FD401": [f"link gone-{i}.md" for i in (1, 2, 4, 5, 6, 7)]}}
    assert _ci(repo) == (
        0,
        ["check-docs: 1 file clean; 6 held by the baseline records/ratchets.json (1 page)"],
    )


def test_a_count_baseline_migrates_on_the_next_update(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": SEVEN, "records/ratchets.json": '{"README.md": {"FD401": 7}}\n'})
    assert _ci(repo)[0] == 0, "a count entry keeps working"
    (repo.path / "README.md").write_text(SEVEN.replace("gone-1.md", "gone-9.md"))
    assert _ci(repo)[0] == 0, "a count cannot tell a replaced link: why it is converted"
    update = fidelity_cli(repo.path, "-q", "check-docs", "--update-ratchets")
    assert update.returncode == 0
    assert (
        "baseline: converted README.md FD401 from a count of 7 to 7 fingerprints" in update.stdout
    )
    (repo.path / "README.md").write_text(SEVEN.replace("gone-1.md", "gone-8.md"))
    code, lines = _ci(repo)
    assert code == 1
    assert lines[0].startswith(
        "::error file=README.md,line=3,col=11,title=FD401::link target 'gone-8.md'"
    )


def test_folders_skip_what_git_ignores_and_exclude_globs(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    bad = "## Attempt 1\n"
    repo.commit(
        {
            ".gitignore": "build/\n*.draft.md\n",
            "pyproject.toml": '[tool.fidelity.docs]\nexclude = ["docs/vendor/**"]\n',
            "docs/ok.md": "# Ok\n",
            "docs/vendor/lib.md": bad,
        }
    )
    repo.write({"docs/build/out.md": bad, "docs/notes.draft.md": bad, "node_modules/x/y.md": bad})
    repo.write({"docs/node_modules/pkg/readme.md": bad})
    done = fidelity_cli(repo.path, "-q", "check-docs", "--json", "-", ".")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["checked"] == ["docs/ok.md"]


def test_nearest_neighbour_without_gitignore_the_same_folders_are_checked(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit(
        {
            ".gitignore": "build/\n",
            "pyproject.toml": "[tool.fidelity.docs]\ngitignore = false\n",
            "docs/ok.md": "# Ok\n",
        }
    )
    repo.write({"docs/build/out.md": "## Attempt 1\n", "node_modules/y.md": "# Y\n"})
    done = fidelity_cli(repo.path, "-q", "check-docs", "--json", "-", ".")
    assert done.returncode == 1
    assert json.loads(done.stdout)["checked"] == ["docs/ok.md", "docs/build/out.md"]


def test_github_annotations_and_sarif(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# R\n\n[a, b: 100%](gone.md)\n"})
    done = fidelity_cli(
        repo.path, "-q", "check-docs", "--format", "github", "--sarif", "out/report.sarif"
    )
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "::error file=README.md,line=3,col=14,title=FD401::link target 'gone.md' does not "
        "exist (gone.md)",
        "check-docs: 1 finding in 1 of 1 file",
    ]
    sarif = json.loads((repo.path / "out" / "report.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "FD401"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "README.md"},
        "region": {"startLine": 3, "startColumn": 14},
    }


def test_a_config_file_of_its_own_validates_like_pyproject(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"README.md": "# R\n\nA paragraph of some length.\n"})
    (repo.path / "docs.toml").write_text("max_paragraph_chars = 10\nmax_rowz = 3\n")
    bad = fidelity_cli(repo.path, "-q", "check-docs", "--config", "docs.toml")
    assert bad.returncode == 2
    assert "docs.toml: unknown key 'max_rowz'; allowed: anchor_case, " in bad.stderr
    (repo.path / "docs.toml").write_text("max_paragraph_chars = 10\n")
    good = fidelity_cli(repo.path, "-q", "check-docs", "--config", "docs.toml")
    assert good.returncode == 1
    assert "README.md:3:1: FD103 prose paragraph (line 3) has 27 characters" in good.stdout
    missing = fidelity_cli(repo.path, "-q", "check-docs", "--config", "nope.toml")
    assert (missing.returncode, "Traceback" in missing.stderr) == (2, False)
