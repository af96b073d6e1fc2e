"""The CI recipes are real files: docs/ci.md shows them verbatim, actionlint passes the GitHub
workflows and the Action (action.yml, through a workflow that `uses: ./`), every `fidelity
...` command in them parses, each installs this project pinned after upgrading pip, and each
runs on a real repository with this tree pip-installed from a local git URL: the GitHub
workflows (the Action's steps too) through an emulator (tests/actions_emulator.py), the
Slurm job files under an array's variables, the Kubernetes Jobs' containers under each
completion index; each ends in the judge's verdict. Each judge also gates the records and
docs: a committed unclosed fence, a lost row and a duplicated key fail it, annotated at
file and line. A shard started again after it began (a requeue) ends HELD; a judge that
fails still leaves its JUnit file. One venv for the module: only the first install builds."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
import yaml
from actions_emulator import Step, Unknown, World, run_workflow
from support import PROG, Repo, git_env

from fidelity.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "recipes"
GITHUB = RECIPES / "github-actions.yml"
ACTION_WORKFLOW = RECIPES / "github-action.yml"
ACTION = ROOT / "action.yml"
SOURCE = ("pyproject.toml", "README.md", "fidelity", "checkers", "action.yml")
DOCS = {"docs/ci.md": "docs/ci.md", "README.md": "README.md"}
PIN = re.compile(r"fidelity-gate @ git\+https://\S+@(v\d+\.\d+\.\d+|[0-9a-f]{40})")


def recipe_files() -> list[Path]:
    return sorted(p for p in RECIPES.iterdir() if p.is_file())


# --- the Markdown shows the files as they are ------------------------------------------------


def shown_copies(page: str) -> dict[str, str]:
    """Each fenced block that follows a line linking a recipe file (and the block's
    `<!-- example: ... -->` comment, tests/docexamples.py): file name -> block."""
    found = re.finditer(
        r"\]\(recipes/([\w.-]+)\)[^\n]*\n+(?:<!--[^\n]*-->\n)?```\w*\n(.*?)^```", page, re.M | re.S
    )
    return {m.group(1): m.group(2) for m in found}


def test_docs_ci_shows_every_recipe_file_verbatim() -> None:
    shown = shown_copies((ROOT / "docs" / "ci.md").read_text())
    assert sorted(shown) == [p.name for p in recipe_files()]
    for path in recipe_files():
        assert shown[path.name] == path.read_text(), f"docs/ci.md's copy of {path.name} differs"


def test_an_edited_copy_would_be_caught() -> None:
    page = "See [the file](recipes/a.yml):\n\n```yaml\nname: x\n```\n"
    assert shown_copies(page) == {"a.yml": "name: x\n"}
    assert shown_copies(page.replace("name: x", "name: y")) != {"a.yml": "name: x\n"}
    commented = page.replace("```yaml", '<!-- example: skip="a job file" -->\n```yaml')
    assert shown_copies(commented) == {"a.yml": "name: x\n"}


# --- every fidelity command parses ------------------------------------------------------------


def shell_lines(script: str) -> list[str]:
    """The script's lines with backslash continuations joined and comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line.strip() for line in joined.splitlines() if not line.strip().startswith("#")]


def github_scripts(workflow: dict[str, Any]) -> list[str]:
    return [s["run"] for job in workflow["jobs"].values() for s in job["steps"] if "run" in s]


def kubernetes_scripts(path: Path) -> list[str]:
    scripts = []
    for doc in yaml.safe_load_all(path.read_text()):
        if doc and doc.get("kind") == "Job":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                scripts += container.get("args", [])
    return scripts


def action_scripts(path: Path) -> list[str]:
    return [s["run"] for s in yaml.safe_load(path.read_text())["runs"]["steps"] if "run" in s]


def scripts_of(path: Path) -> list[str]:
    if path == ACTION:
        return action_scripts(path)
    if path.suffix == ".yml":
        return github_scripts(yaml.safe_load(path.read_text()))
    if path.suffix == ".yaml":
        return kubernetes_scripts(path)
    return [path.read_text()]


def fidelity_commands(script: str) -> list[list[str]]:
    """Every `fidelity ...` command of a script, its shell expansions replaced by a word."""
    found = []
    for line in shell_lines(script):
        for command in re.split(r"&&|\|\||;", line):
            words = command.strip()
            if not words.startswith("fidelity "):
                continue
            words = re.sub(r'"\$\{\w+\[@\]\}"', "", words)  # an array of options: none
            words = re.sub(r"\$\{\{[^}]+\}\}|\$\(\([^)]*\)\)|\$\{?\w+\}?", "1", words)
            found.append(shlex.split(words)[1:])
    return found


def test_every_fidelity_command_in_the_recipes_parses() -> None:
    """And every judge gates what the project gates: the merge writes its reports itself
    (a step after a failing one would not run), check-docs, and preflight over the range;
    every shard step carries on in its own folder when it is started again."""
    parser = build_parser()
    seen: dict[str, list[Any]] = {}
    for path in [*(p for p in recipe_files() if p != ACTION_WORKFLOW), ACTION]:
        commands = [c for s in scripts_of(path) for c in fidelity_commands(s)]
        assert commands, f"{path.name} runs no fidelity command"
        for words in commands:
            args = parser.parse_args(words)  # exits 2 on an unknown command or option
            assert callable(args.handler)
            seen.setdefault(path.name, []).append(args)
    judges = ("github-actions.yml", "slurm-judge.sbatch", "kubernetes-judge.yaml", "action.yml")
    for name in judges:
        by = {a.command: a for a in seen[name]}
        assert {"merge", "check-docs", "preflight"} <= set(by), (name, sorted(by))
        assert by["merge"].junit and by["merge"].markdown and by["merge"].html, name
        assert by["preflight"].from_ref and by["preflight"].to_ref, name
    for name in ("github-actions.yml", "slurm-shards.sbatch", "kubernetes-shards.yaml"):
        (run,) = [a for a in seen[name] if a.command == "run"]
        assert run.resume_if_exists and run.out and run.shard == "auto", name


def test_a_wrong_option_in_a_recipe_would_be_caught(capsys: pytest.CaptureFixture[str]) -> None:
    words = fidelity_commands('fidelity -q merge "shards/$X" --out merged --outptu x && echo done')
    assert words == [["-q", "merge", "shards/1", "--out", "merged", "--outptu", "x"]]
    build_parser().parse_args(words[0][:-2])  # the same line without the misspelt option
    with pytest.raises(SystemExit):
        build_parser().parse_args(words[0])
    assert "unrecognized arguments: --outptu x" in capsys.readouterr().err


# --- each recipe installs this project, pinned ------------------------------------------------


def installs(script: str) -> list[str]:
    return [line for line in shell_lines(script) if re.search(r"\bpip[3]? install\b", line)]


UPGRADE = re.compile(r"pip install (-q )?--upgrade pip && ")


def pins(text: str) -> list[str]:
    """The values FIDELITY_PIP is set to, in any of the recipes' syntaxes."""
    return re.findall(r"FIDELITY_PIP[=:]\s*(?:\n\s*value:\s*)?\"([^\"]*)\"", text)


def test_every_install_is_this_project_pinned_from_one_setting() -> None:
    """Every FIDELITY_PIP the docs and recipes set is pinned; every install in a recipe's
    scripts installs "$FIDELITY_PIP", set once in its file (Kubernetes: a ConfigMap the
    judge shares) or, for Slurm, once in docs/ci.md's login-node step."""
    texts = {p.name: p.read_text() for p in recipe_files()}
    texts |= {name: (ROOT / path).read_text() for name, path in DOCS.items()}
    assert [len(pins(texts[n])) for n in ("github-actions.yml", "kubernetes-shards.yaml")] == [1, 1]
    assert len(pins(texts["docs/ci.md"])) == 4  # its own, Slurm's, and the two files' copies
    for name, text in texts.items():
        for value in pins(text) + re.findall(r'"(fidelity-gate @ [^"]*)"', text):
            assert PIN.fullmatch(value), f"{name}: {value!r}: pin a tag or a full commit sha"
    lines = [i for p in recipe_files() for s in scripts_of(p) for i in installs(s)]
    lines += installs((ROOT / "docs" / "ci.md").read_text())
    assert len(lines) >= 6
    for line in lines:
        assert re.search(r'install (-q )?"\$FIDELITY_PIP"( \|\| exit)?$', line), line
        # pip first: the pip of a fresh Python 3.11 venv refuses a git+file:///...@SHA line
        assert UPGRADE.search(line.split('"$FIDELITY_PIP"')[0]), line
    (action,) = [i for s in scripts_of(ACTION) for i in installs(s)]
    assert UPGRADE.search(action) and action.endswith('install -q "$ACTION_PATH"'), action


@pytest.mark.parametrize(
    "value",
    [
        "fidelity-gate @ git+https://github.com/OWNER/fidelity@main",  # a branch moves
        "fidelity-gate @ git+https://github.com/OWNER/fidelity@0123abc",  # a short sha
        "fidelity-gate @ git+https://github.com/OWNER/fidelity",  # no pin at all
        "fidelity @ git+https://github.com/OWNER/fidelity@v0.1.0",  # the other project's name
    ],
)
def test_an_unpinned_or_misnamed_install_is_caught(value: str) -> None:
    assert pins(f'env:\n  FIDELITY_PIP: "{value}"\n') == [value]
    assert not PIN.fullmatch(value)


# --- actionlint --------------------------------------------------------------------------------


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    """actionlint from the test extra, without shellcheck or pyflakes: the same answer on a
    machine that has them on PATH and one that has not."""
    binary = Path(sys.executable).parent / "actionlint"
    found = str(binary) if binary.exists() else shutil.which("actionlint")
    assert found, "actionlint is missing: python -m pip install -e '.[test]'"
    argv = [found, "-no-color", "-shellcheck=", "-pyflakes=", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("workflow", [GITHUB, ACTION_WORKFLOW], ids=lambda p: p.name)
def test_actionlint_passes_the_workflows(workflow: Path) -> None:
    done = actionlint(workflow)
    assert done.returncode == 0, done.stdout + done.stderr


def linted_action(tmp_path: Path, action: str, edit: tuple[str, str] = ("", "")) -> str:
    """actionlint over the Action workflow recipe made to say `uses: ./`, in a repository
    whose action.yml is `action`: actionlint lints workflows, and a local action's
    metadata (runs, steps, inputs) through the workflow that uses it."""
    (tmp_path / ".git").mkdir()  # actionlint finds the project's root by its .git
    (tmp_path / "action.yml").write_text(action)
    workflow = tmp_path / ".github" / "workflows" / "fidelity.yml"
    workflow.parent.mkdir(parents=True)
    text = ACTION_WORKFLOW.read_text()
    assert "uses: OWNER/fidelity@RELEASE_SHA\n" in text and edit[0] in text
    workflow.write_text(text.replace("OWNER/fidelity@RELEASE_SHA", "./").replace(*edit))
    binary = Path(sys.executable).parent / "actionlint"
    found = str(binary) if binary.exists() else shutil.which("actionlint")
    assert found
    argv = [found, "-no-color", "-shellcheck=", "-pyflakes=", ".github/workflows/fidelity.yml"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def test_actionlint_passes_the_action(tmp_path: Path) -> None:
    assert linted_action(tmp_path, ACTION.read_text()) == "exit 0\n"


@pytest.mark.parametrize(
    ("action_edit", "workflow_edit", "says"),
    [
        (("", ""), ("expect:", "expectt:"), 'input "expectt" is not defined in action'),
        (("using: composite", "using: compose"), ("", ""), 'invalid runner name "compose"'),
        (("      shell: bash\n", ""), ("", ""), 'requires "shell" key since it has "run" key'),
    ],
)
def test_actionlint_fails_a_broken_action(
    tmp_path: Path, action_edit: tuple[str, str], workflow_edit: tuple[str, str], says: str
) -> None:
    text = ACTION.read_text()
    assert action_edit[0] in text
    said = linted_action(tmp_path, text.replace(*action_edit), workflow_edit)
    assert said.startswith("exit 1") and says in said, said


def test_the_action_metadata_holds_together() -> None:
    """What actionlint does not check in action.yml: each `${{ inputs.X }}` is declared,
    every input is described with a string default, no expression is pasted into a script
    (inputs reach the shell as environment variables only), every step runs whatever the
    step before it said but the install, and the install is from the Action's own checkout."""
    action = yaml.safe_load(ACTION.read_text())
    assert set(action) == {"name", "description", "author", "branding", "inputs", "runs"}
    declared = action["inputs"]
    for name, spec in declared.items():
        assert spec["description"] and isinstance(spec.get("default"), str), name
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", ACTION.read_text()))
    assert used == set(declared), used ^ set(declared)
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    for step in steps:
        assert step["shell"] == "bash" and "${{" not in step["run"], step["name"]
    assert [s.get("if") for s in steps] == [None] + ["always()"] * (len(steps) - 1)
    assert steps[0]["env"] == {"ACTION_PATH": "${{ github.action_path }}"}


def action_pins(text: str) -> list[str]:
    return re.findall(r"^\s*(?:- )?uses: OWNER/fidelity@(\S+)$", text, re.M)


def test_the_action_is_pinned_to_a_commit_that_has_it() -> None:
    """The recipe and docs/ci.md pin `uses: OWNER/fidelity@REF` to a placeholder until a
    release ships action.yml: a ref there must resolve in this repository to a commit
    holding action.yml (release 0.2.0 does not, so it cannot be the pin)."""
    refs = action_pins(ACTION_WORKFLOW.read_text()) + action_pins((ROOT / "docs/ci.md").read_text())
    assert refs
    pinned = [ref for ref in refs if ref != "RELEASE_SHA"]  # none yet: the placeholder
    assert [ref for ref in pinned if not _holds_action(ref)] == [], "pin a release with action.yml"
    release = "332b1233576cdb1974c4ebfeeb336cf1656ece57"
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{release}^{{commit}}"],
        cwd=ROOT,
        env=git_env(ROOT.parent),
        capture_output=True,
    )
    assert known.returncode == 0, "release 0.2.0's commit is not in this clone"
    assert not _holds_action(release), "0.2.0 ships action.yml now: pin it in the Action recipe"


def _holds_action(ref: str) -> bool:
    argv = ["git", "cat-file", "-e", f"{ref}:action.yml"]
    done = subprocess.run(argv, cwd=ROOT, env=git_env(ROOT.parent), capture_output=True)
    return done.returncode == 0


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (("${{ matrix.shard }}\n", "${{ matrix.nope }}\n"), 'property "nope" is not defined'),
        (("needs: shard\n", "needs: shards\n"), 'needs job "shards" which does not exist'),
        (("actions/checkout@v6", "actions/checkout@v4"), 'runtime "node20" is deprecated'),
    ],
)
def test_actionlint_fails_a_broken_copy(tmp_path: Path, edit: tuple[str, str], says: str) -> None:
    text = GITHUB.read_text()
    assert edit[0] in text
    broken = tmp_path / "fidelity.yml"
    broken.write_text(text.replace(edit[0], edit[1], 1))
    done = actionlint(broken)
    assert done.returncode == 1 and says in done.stdout, done.stdout + done.stderr


# --- the workflow, run ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Installed:
    venv: Path
    pip: str  # the FIDELITY_PIP that installs this source tree from a local URL
    source: Path  # the source tree, committed: what `uses: OWNER/fidelity@REF` checks out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """This source tree committed into a repository of its own (uncommitted edits included),
    and a fresh venv with pip that the workflow's install step installs it into: one for the
    module, so only the first install step builds."""
    tmp = tmp_path_factory.mktemp("recipe")
    source = Repo(tmp / "fidelity-source")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source.path / name, ignore=ignore)
        else:
            shutil.copy(path, source.path / name)
    sha = source.commit(message="fidelity, as tested")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # git+file:///...: the pip that ensurepip gives Python 3.11.7 (23.2.1) refuses this
    # direct reference ("Invalid requirement"); every recipe upgrades pip before it installs
    with pytest.MonkeyPatch.context() as patch:  # the wheel it builds: not in the user's home
        patch.setenv("PIP_CACHE_DIR", str(tmp / "pip-cache"))
        yield Installed(venv, f"fidelity-gate @ git+file://{source.path}@{sha}", source.path)


PREDICT = '[prediction]\nwhy = "a refactor: nothing moves"\nmoved = []\n'
PYPROJECT = """\
[tool.fidelity.docs]
paths = ["README.md", "records/*.md"]

[[tool.fidelity.docs.page]]
path = "records/r.md"
keyed_tables = { key = "row" }

[[tool.fidelity.records]]
path = "records/r.md"
key = "row"

[tool.fidelity.preflight]
gates = ["cases", "predictions", "docs", "rows"]
"""
README = "# Sim\n\nIts records: [rows](records/r.md).\n"


def record(*rows: str) -> str:
    return "# Records\n\n## Rows\n\n| row | value |\n|---|---|\n" + "".join(
        f"| {r} |\n" for r in rows
    )


def pull_request(repo: Repo, files: dict[str, str]) -> str:
    """main holds the baseline, its prediction, its records and docs; branch pr one commit
    on top; the head."""
    base = {"cases/predict.toml": PREDICT, "pyproject.toml": PYPROJECT, "README.md": README}
    repo.commit({**base, "records/r.md": record("a | 1", "b | 2")}, "predict: nothing moves")
    repo.git("checkout", "-q", "-b", "pr")
    head = repo.commit(files, "the change")
    repo.git("checkout", "-q", "main")
    return head


def world(repo: Repo, head: str, installed: Installed, scratch: Path, **more: Any) -> World:
    env = {"FIDELITY_PIP": installed.pip}
    actions = {"OWNER/fidelity": installed.source}
    return World(repo.path, "main", head, installed.venv, scratch, env, actions, **more)


def emulate(
    repo: Repo, head: str, installed: Installed, scratch: Path, recipe: Path = GITHUB
) -> list[Step]:
    workflow = yaml.safe_load(recipe.read_text())
    if recipe == ACTION_WORKFLOW:
        return run_workflow(workflow, replace(world(repo, head, installed, scratch), env={}))
    return run_workflow(workflow, world(repo, head, installed, scratch))


def codes(steps: list[Step], job: str) -> list[int | None]:
    return [s.code for s in steps if s.job.startswith(job)]


def log(steps: list[Step]) -> str:
    return "\n".join(f"[{s.job}] {s.label[:60]} -> {s.code}\n{s.output[-3000:]}" for s in steps)


def junit_counts(path: Path) -> dict[str, str]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None, path.read_text()
    return {k: suite.get(k, "") for k in ("tests", "failures", "errors")}


def test_the_workflow_passes_a_change_that_moves_nothing(
    sim_repo: Repo, installed: Installed, tmp_path: Path
) -> None:
    """And a re-run of its jobs (GitHub's "Re-run all jobs": fresh runners, the same
    artifacts) passes again: each upload replaces its first attempt's."""
    head = pull_request(sim_repo, {"NOTES.md": "a refactor\n"})
    steps = emulate(sim_repo, head, installed, tmp_path)
    assert [s.job for s in steps if s.label.startswith("fidelity -q run")] == [
        f"shard ({k})" for k in (1, 2, 3, 4)
    ]
    assert all(code == 0 for code in codes(steps, "shard")), log(steps)
    assert codes(steps, "judge") == [0] * 8, log(steps)
    merged = next(s for s in reversed(steps) if s.label.startswith("fidelity -q merge"))
    assert "HELD" in merged.output and "(exit 0)" in merged.output
    reports = tmp_path / "artifacts" / "fidelity-reports"
    assert (
        "HELD: the moved set equals the prediction"
        in (reports / "fidelity-report.html").read_text()
    )  # uploaded
    assert junit_counts(reports / "junit.xml") == {"tests": "4", "failures": "0", "errors": "0"}
    # each shard ran its own share: 3 cases over 4 shards, the fourth empty
    shards = [s.output for s in steps if s.label.startswith("fidelity -q run")]
    assert [f"SHARD {k}/4" in out for k, out in enumerate(shards, 1)] == [True] * 4
    assert "evidence kept for 0 of 3" in shards[3]
    summary = tmp_path / "runners" / "judge-summary.md"
    assert "HELD" in summary.read_text()
    again = run_workflow(
        yaml.safe_load(GITHUB.read_text()), world(sim_repo, head, installed, tmp_path, attempt=2)
    )
    assert all(s.code == 0 for s in again), log(again)


def test_the_workflow_fails_a_change_that_moves_against_its_prediction(
    sim_repo: Repo, installed: Installed, tmp_path: Path
) -> None:
    head = pull_request(sim_repo, {"value.txt": "two\n"})
    steps = emulate(sim_repo, head, installed, tmp_path)
    assert all(code == 0 for code in codes(steps, "shard")), log(steps)  # evidence only
    judged = [s for s in steps if s.job == "judge" and s.code is not None]
    last = next(s for s in reversed(judged) if s.label.startswith("fidelity"))  # merge's
    assert last.code == 1 and "FALSIFIED" in last.output, log(steps)
    assert "unexpected (moved, not predicted): a, b, c" in last.output
    assert judged[-1].label.startswith("actions/upload-artifact") and judged[-1].code == 0
    reports = tmp_path / "artifacts" / "fidelity-reports"
    assert "FALSIFIED" in (reports / "fidelity-report.html").read_text()  # kept when it fails
    assert junit_counts(reports / "junit.xml")["failures"] != "0"  # the judge failed: JUnit kept


def lost_row(repo: Repo) -> str:
    """The pull request adds a row; main adds another meanwhile; the pull request merges
    main with `-s ours`, which keeps its own file and loses main's row: the head."""
    pull_request(repo, {"records/r.md": record("a | 1", "b | 2", "c | 3")})
    repo.commit({"records/r.md": record("a | 1", "b | 2", "s | 9")}, "main's row")
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "-s", "ours", "main", "-m", "merge main, losing its row")
    head = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "main")
    return head


DEFECTS = {  # what the pull request commits -> the annotations it must get, each located
    "unclosed fence": (
        lambda repo: pull_request(repo, {"README.md": README + "\n```sh\nmake\n"}),
        {"check-docs": "::error file=README.md,line=5,col=1,title=FD301::unclosed ```",
         "preflight": "::error file=README.md,line=5,col=1,title=fidelity preflight%3A docs::"},
    ),
    "lost row": (
        lost_row,
        {"preflight": "::error file=records/r.md,line=3,title=fidelity preflight%3A rows::merge "},
    ),
    "duplicated key": (
        lambda repo: pull_request(repo, {"records/r.md": record("a | 1", "b | 2", "a | 5")}),
        {"check-docs": "::error file=records/r.md,line=9,col=3,title=FD501::duplicate 'row' key",
         "preflight": "::error file=records/r.md,line=9,title=fidelity preflight%3A rows::row 'a'"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("defect", DEFECTS)
def test_the_workflow_fails_a_record_defect_at_its_line(
    sim_repo: Repo, installed: Installed, tmp_path: Path, defect: str
) -> None:
    """A change that moves no case but commits a broken record page: the shards and the
    merge hold, the judge's records gates fail it, annotated at the file and line."""
    make, annotations = DEFECTS[defect]
    steps = emulate(sim_repo, make(sim_repo), installed, tmp_path)
    assert all(code == 0 for code in codes(steps, "shard")), log(steps)
    by = {s.label.split()[2]: s for s in steps if s.label.startswith("fidelity -q ")}
    assert by["merge"].code == 0 and "HELD" in by["merge"].output, log(steps)
    for gate, annotation in annotations.items():
        assert by[gate].code == 1, log(steps)
        lines = by[gate].output.splitlines()
        assert any(line.startswith(annotation) for line in lines), (annotation, by[gate].output)
    assert any(c not in (0, None) for c in codes(steps, "judge"))  # the job, and so the run


def test_the_action_gates_records_and_the_matrix(
    sim_repo: Repo, installed: Installed, tmp_path: Path
) -> None:
    """`uses: OWNER/fidelity@REF` run from its action.yml: installed from its own checkout,
    the matrix HELD into the step summary and reports, the duplicated key annotated."""
    head = pull_request(sim_repo, {"records/r.md": record("a | 1", "b | 2", "a | 5")})
    steps = emulate(sim_repo, head, installed, tmp_path, ACTION_WORKFLOW)
    (used,) = [s for s in steps if s.label.startswith("OWNER/fidelity@")]
    assert used.code == 1, log(steps)
    said = used.output
    assert "[Install fidelity from this action's checkout] -> 0" in said, said
    assert "[Records and docs (check-docs)] -> 1" in said
    assert "::error file=records/r.md,line=9,col=3,title=FD501::" in said
    assert "[Records over the range (preflight)] -> 1" in said
    assert "[Case matrix] -> 0" in said and "HELD" in said, said
    assert "HELD" in (tmp_path / "runners" / "fidelity-summary.md").read_text()
    reports = tmp_path / "artifacts" / "fidelity-reports"
    assert junit_counts(reports / "junit.xml") == {"tests": "4", "failures": "0", "errors": "0"}


# --- the emulator refuses what it does not know --------------------------------------------------


def emulator_error(workflow: dict[str, Any], tmp_path: Path) -> str:
    world = World(tmp_path, "main", "0" * 40, tmp_path, tmp_path)
    with pytest.raises(Unknown) as refused:
        run_workflow(workflow, world)
    return str(refused.value)


JOB = {"runs-on": "ubuntu-latest", "steps": [{"run": "true"}]}


@pytest.mark.parametrize(
    ("job", "says"),
    [
        ({**JOB, "steps": [{"run": "echo ${{ github.sha }}"}]}, "${{ github.sha }} is not known"),
        ({**JOB, "steps": [{"run": "x", "if": "failure()"}]}, "step `if: failure()` is not known"),
        (
            {**JOB, "steps": [{"uses": "actions/cache@v4"}]},
            "action actions/cache@v4 is not emulated",
        ),
        (
            {**JOB, "steps": [{"uses": "actions/checkout@v6", "with": {"ref": "x"}}]},
            "['ref'] not known",
        ),
        (
            {**JOB, "steps": [{"run": "x", "working-directory": "a"}]},
            "['working-directory'] not known",
        ),
        ({**JOB, "timeout-minutes": 5}, "['timeout-minutes'] not known"),
        ({**JOB, "strategy": {"matrix": {"include": [{"a": 1}]}}}, "matrix key 'include'"),
    ],
)
def test_the_emulator_refuses_what_it_does_not_know(
    tmp_path: Path, job: dict[str, Any], says: str
) -> None:
    assert says in emulator_error({"on": "push", "jobs": {"j": job}}, tmp_path)
    workflow_env = {"on": "push", "env": {"X": "${{ runner.os }}"}, "jobs": {"j": JOB}}
    assert "${{ runner.os }} is not known" in emulator_error(workflow_env, tmp_path)


# --- the Slurm and Kubernetes recipes, run ------------------------------------------------------


def engine_env(installed: Installed, home: Path, **extra: str) -> dict[str, str]:
    """The machine's environment less every engine's variables, with the venv's bin (the
    cluster's python) first on PATH and a HOME of the test's own."""
    dropped = ("GIT_", "FIDELITY_", "SLURM_", "JOB_COMPLETION_INDEX", "VIRTUAL_ENV", "PYTHON")
    base = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    home.mkdir(parents=True, exist_ok=True)
    path = f"{installed.venv / 'bin'}{os.pathsep}{base.get('PATH', '')}"
    return {**base, "HOME": str(home), "PATH": path, **extra}


def shell(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def with_fidelity(installed: Installed) -> Installed:
    """The venv with fidelity installed, as docs/ci.md's login-node step does it."""
    step = next(i for i in installs((ROOT / "docs" / "ci.md").read_text()) if "venv" in i)
    install = step.split("&&", 1)[1].replace("~/fidelity-venv", str(installed.venv))
    env = {**os.environ, "FIDELITY_PIP": installed.pip}
    done = subprocess.run(
        ["bash", "-c", install], env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    return installed


def sbatch_output(job_file: Path, job: str, task: str = "") -> str:
    """The log name the job file's `#SBATCH --output` gives (%A, %a, %j), relative to the
    folder it is submitted from, as Slurm opens it."""
    pattern = re.search(r"^#SBATCH --output=(\S+)$", job_file.read_text(), re.M)
    assert pattern, f"{job_file.name} names no --output"
    return pattern.group(1).replace("%A", job).replace("%j", job).replace("%a", task)


def sbatch_mode(job_file: Path) -> str:
    """How Slurm opens the log on each start of the job: `--open-mode=append` keeps what
    the start before wrote, else the log is truncated."""
    return "a" if "#SBATCH --open-mode=append\n" in job_file.read_text() else "w"


SHARDS_FILE, JUDGE_FILE = RECIPES / "slurm-shards.sbatch", RECIPES / "slurm-judge.sbatch"


@dataclass(frozen=True, slots=True)
class Array:
    """One `sbatch --array=5-8` submission of the shards file, from a submit folder."""

    submit: Path
    exported: dict[str, str]  # what --export=ALL,REPO=...,BASELINE=...,CANDIDATE=... gives
    installed: Installed
    home: Path

    def task(self, task: int, **more: str) -> subprocess.Popen[bytes]:
        """Start array task `task` as Slurm does, its log opened in the submit folder."""
        array = {"SLURM_ARRAY_JOB_ID": "77", "SLURM_ARRAY_TASK_COUNT": "4"}
        array |= {"SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "8"}
        env = engine_env(self.installed, self.home, **array, **self.exported, **more)
        env["SLURM_ARRAY_TASK_ID"] = str(task)
        path = self.submit / sbatch_output(SHARDS_FILE, "77", str(task))
        with path.open(sbatch_mode(SHARDS_FILE)) as log:
            argv = ["bash", str(SHARDS_FILE)]
            return subprocess.Popen(
                argv, cwd=self.submit, env=env, stdout=log, stderr=log, start_new_session=True
            )

    def log(self, task: int) -> str:
        return (self.submit / sbatch_output(SHARDS_FILE, "77", str(task))).read_text()

    def judge(self) -> subprocess.CompletedProcess[str]:
        env = engine_env(self.installed, self.home, ARRAY="77", **self.exported)
        return shell(["bash", str(JUDGE_FILE)], self.submit, env)


def submitted(repo: Repo, head: str, installed: Installed, tmp_path: Path) -> Array:
    submit = tmp_path / "fidelity-shards"
    submit.mkdir()
    exported = {"REPO": str(repo.path), "CANDIDATE": head}
    exported |= {"BASELINE": repo.git("rev-parse", "main")}
    exported |= {"FIDELITY_VENV": str(installed.venv)}
    return Array(submit, exported, installed, tmp_path / "home")


def test_the_slurm_array_with_offset_ids_ends_held(
    sim_repo: Repo, with_fidelity: Installed, tmp_path: Path
) -> None:
    """`sbatch --array=5-8` from a folder outside the checkout: ids 5..8 are shards 1..4 by
    SLURM_ARRAY_TASK_MIN. The four tasks run at once, as an array's do, each with its log
    opened in the submit folder; then the judge merges, judges and gates the records."""
    head = pull_request(sim_repo, {"NOTES.md": "a refactor\n"})
    before = sim_repo.git("status", "--porcelain", "--untracked-files=all")
    assert "#SBATCH --array=1-4\n" in SHARDS_FILE.read_text()
    array = submitted(sim_repo, head, with_fidelity, tmp_path)
    tasks = [array.task(task) for task in range(5, 9)]
    codes = [process.wait(timeout=900) for process in tasks]
    for task, code in enumerate(codes, 5):
        assert code == 0, array.log(task)
        assert f"SHARD {task - 4}/4" in array.log(task)
    judged = array.judge()
    said = judged.stdout + judged.stderr
    assert judged.returncode == 0 and "HELD" in judged.stdout, said
    assert "fidelity-judge: exit 0" in judged.stdout, said
    assert sorted(p.name for p in (array.submit / "77").glob("shard-*")) == [
        f"shard-{i}" for i in range(5, 9)
    ]
    assert junit_counts(array.submit / "77" / "junit.xml")["failures"] == "0"
    assert sim_repo.git("status", "--porcelain", "--untracked-files=all") == before
    unsent = engine_env(with_fidelity, tmp_path / "home", SLURM_ARRAY_TASK_ID="5")
    refused = shell(["bash", str(SHARDS_FILE)], array.submit, {**unsent, "REPO": "x"})
    assert refused.returncode != 0 and "set BASELINE to the baseline commit" in refused.stderr


SLOW_PROG = PROG.replace(
    'if mode == "sleep":',
    'time.sleep(float(os.environ.get("CASE_SLEEP", "0")))\nif mode == "sleep":',
)


def test_a_requeued_slurm_task_resumes_and_the_array_ends_held(
    sim_repo: Repo, with_fidelity: Installed, tmp_path: Path
) -> None:
    """Task 5 is killed after it began (its plan written, its cases running), as a node
    failure or `scontrol requeue` kills it. The judge run now fails and still leaves its
    JUnit file, naming the shard unfinished; Slurm starts the task again with the same ids
    (SLURM_RESTART_COUNT=1): it resumes its own folder, its log keeps both starts, and the
    judge then holds."""
    assert SLOW_PROG != PROG
    sim_repo.commit({"prog.py": SLOW_PROG}, "cases that can be slow")
    head = pull_request(sim_repo, {"NOTES.md": "a refactor\n"})
    array = submitted(sim_repo, head, with_fidelity, tmp_path)
    first = array.task(5, CASE_SLEEP="30")
    plan = array.submit / "77" / "shard-5" / "plan.json"
    deadline = time.monotonic() + 120
    while not plan.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # its cases have started
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert plan.is_file() and not (plan.parent / "run.json").exists(), array.log(5)
    others = [array.task(task) for task in range(6, 9)]
    assert [p.wait(timeout=900) for p in others] == [0, 0, 0]
    failed = array.judge()
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "fidelity-judge: exit 2" in failed.stdout
    error = ET.parse(array.submit / "77" / "junit.xml").find("testsuite/testcase/error")
    assert error is not None and "fidelity run --resume 77/shard-5" in (error.text or "")
    again = array.task(5, SLURM_RESTART_COUNT="1")
    assert again.wait(timeout=900) == 0, array.log(5)
    log = array.log(5)
    assert "task 5, start 0," in log and "task 5, start 1," in log, log  # appended
    assert "holds this run, unfinished: resuming it" in log, log
    judged = array.judge()
    assert judged.returncode == 0 and "HELD" in judged.stdout, judged.stdout + judged.stderr
    assert junit_counts(array.submit / "77" / "junit.xml")["errors"] == "0"


def test_the_slurm_judge_fails_a_record_defect(
    sim_repo: Repo, with_fidelity: Installed, tmp_path: Path
) -> None:
    """A duplicated key committed: the shards and the merge hold, the judge fails on the
    records gates it runs in a clone of the candidate, and says where."""
    head = pull_request(sim_repo, {"records/r.md": record("a | 1", "b | 2", "a | 5")})
    array = submitted(sim_repo, head, with_fidelity, tmp_path)
    assert [array.task(t).wait(timeout=900) for t in range(5, 9)] == [0, 0, 0, 0]
    judged = array.judge()
    said = judged.stdout + judged.stderr
    assert judged.returncode == 1 and "HELD" in judged.stdout, said
    assert "records/r.md:9:3: FD501 duplicate 'row' key 'a'" in judged.stdout, said
    assert "fidelity-judge: exit 1" in judged.stdout


def kubernetes(name: str) -> dict[str, Any]:
    """The documents of a Kubernetes recipe file, by kind."""
    return {d["kind"]: d for d in yaml.safe_load_all((RECIPES / name).read_text()) if d}


def container_env(job: dict[str, Any], config: dict[str, Any]) -> dict[str, str]:
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        assert source["configMapRef"]["name"] == config["metadata"]["name"]
        env |= config["data"]
    return env | {e["name"]: str(e["value"]) for e in container.get("env", [])}


def test_the_kubernetes_jobs_agree_with_each_other() -> None:
    shards, judge = kubernetes("kubernetes-shards.yaml"), kubernetes("kubernetes-judge.yaml")
    job, config = shards["Job"], shards["ConfigMap"]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimit"] == 0
    env = container_env(job, config)
    assert int(env["FIDELITY_SHARD_COUNT"]) == spec["completions"] == spec["parallelism"]
    claim = shards["PersistentVolumeClaim"]["metadata"]["name"]
    for each in (job, judge["Job"]):
        pod = each["spec"]["template"]["spec"]
        assert pod["restartPolicy"] == "Never"
        assert [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]] == [claim]
        mount = pod["containers"][0]["volumeMounts"][0]["mountPath"]
        assert container_env(each, config)["EVIDENCE"] == mount


def run_pods(
    job: dict[str, Any],
    config: dict[str, Any],
    machine: dict[str, str],
    replaced: dict[str, str],
    cwd: Path,
) -> list[subprocess.CompletedProcess[str]]:
    """Each completion index's pod (one pod for a Job that is not Indexed): the container's
    command and args, with the env the file gives it, of which the test replaces some."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    own = container_env(job, config)
    assert set(replaced) <= set(own), f"the file sets none of {set(replaced) - set(own)}"
    indexed = job["spec"].get("completionMode") == "Indexed"
    done = []
    for index in range(job["spec"]["completions"] if indexed else 1):
        home = cwd / f"pod-{index}"
        home.mkdir(parents=True)
        env = {**machine, **own, **replaced, "HOME": str(home)}
        if indexed:
            env["JOB_COMPLETION_INDEX"] = str(index)
        done.append(shell([*container["command"], *container["args"]], home, env))
    return done


def test_the_kubernetes_indexed_job_fails_a_move_against_its_prediction(
    sim_repo: Repo, with_fidelity: Installed, tmp_path: Path
) -> None:
    head = pull_request(sim_repo, {"value.txt": "two\n"})
    shards, judge = kubernetes("kubernetes-shards.yaml"), kubernetes("kubernetes-judge.yaml")
    config = shards["ConfigMap"]
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    machine = engine_env(with_fidelity, tmp_path)
    replaced = {"FIDELITY_PIP": with_fidelity.pip, "EVIDENCE": str(evidence)}
    sides = {"BASELINE": sim_repo.git("rev-parse", "main"), "CANDIDATE": head}
    count = shards["Job"]["spec"]["completions"]
    pods = run_pods(
        shards["Job"],
        config,
        machine,
        {**replaced, **sides, "REPOSITORY": str(sim_repo.path)},
        tmp_path / "shards",
    )
    assert len(pods) == count
    for index, pod in enumerate(pods):
        assert pod.returncode == 0, pod.stdout + pod.stderr  # a shard keeps evidence
        assert f"SHARD {index + 1}/{count}" in pod.stdout
    judge_env = {**replaced, **sides, "REPOSITORY": str(sim_repo.path)}
    (judged,) = run_pods(judge["Job"], config, machine, judge_env, tmp_path / "judge")
    assert judged.returncode == 1, judged.stdout + judged.stderr
    assert junit_counts(evidence / "junit.xml")["failures"] != "0"  # the judge failed: kept
    assert (
        "FALSIFIED" in judged.stdout
        and "unexpected (moved, not predicted): a, b, c" in judged.stdout
    )
