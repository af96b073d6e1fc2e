"""The CI recipes are real files: docs/ci.md shows them verbatim, actionlint passes the GitHub
workflow, every `fidelity ...` command in them parses, each installs this project pinned,
and each runs on a real repository with this tree pip-installed from a local git URL: the
GitHub workflow through an emulator (tests/actions_emulator.py), the Slurm job files under
an array's variables, the Kubernetes Jobs' containers under each completion index; each
ends in the judge's verdict. One venv for the module: only the first install builds."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from actions_emulator import Step, Unknown, World, run_workflow
from support import Repo

from fidelity.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "docs" / "recipes"
GITHUB = RECIPES / "github-actions.yml"
SOURCE = ("pyproject.toml", "README.md", "fidelity", "checkers")
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


def scripts_of(path: Path) -> list[str]:
    if path == GITHUB:
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
            words = re.sub(r"\$\{\{[^}]+\}\}|\$\(\([^)]*\)\)|\$\{?\w+\}?", "1", words)
            found.append(shlex.split(words)[1:])
    return found


def test_every_fidelity_command_in_the_recipes_parses() -> None:
    parser = build_parser()
    seen = set()
    for path in recipe_files():
        commands = [c for s in scripts_of(path) for c in fidelity_commands(s)]
        assert commands, f"{path.name} runs no fidelity command"
        for words in commands:
            args = parser.parse_args(words)  # exits 2 on an unknown command or option
            assert callable(args.handler)
            seen.add((path.name, args.command))
    assert ("github-actions.yml", "run") in seen and ("github-actions.yml", "verify") in seen


def test_a_wrong_option_in_a_recipe_would_be_caught() -> None:
    words = fidelity_commands('fidelity -q merge "shards/$X" --output merged && echo done')
    assert words == [["-q", "merge", "shards/1", "--output", "merged"]]
    with pytest.raises(SystemExit):
        build_parser().parse_args(words[0])


# --- each recipe installs this project, pinned ------------------------------------------------


def installs(script: str) -> list[str]:
    return [line for line in shell_lines(script) if re.search(r"\bpip[3]? install\b", line)]


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
    assert len(lines) >= 5
    for line in lines:
        assert line.endswith('install "$FIDELITY_PIP"') or line.endswith(
            'install -q "$FIDELITY_PIP"'
        ), line


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


def test_actionlint_passes_the_workflow() -> None:
    done = actionlint(GITHUB)
    assert done.returncode == 0, done.stdout + done.stderr


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
    # file://localhost/...: the pip that ensurepip gives Python 3.11.7 (23.2.1) refuses a
    # direct reference to git+file:///... ("Invalid requirement"); a host in the URL it takes
    yield Installed(venv, f"fidelity-gate @ git+file://localhost{source.path}@{sha}")


PREDICT = '[prediction]\nwhy = "a refactor: nothing moves"\nmoved = []\n'


def pull_request(repo: Repo, files: dict[str, str]) -> str:
    """main holds the baseline and its prediction; branch pr one commit on top; the head."""
    repo.commit({"cases/predict.toml": PREDICT}, "predict: nothing moves")
    repo.git("checkout", "-q", "-b", "pr")
    head = repo.commit(files, "the change")
    repo.git("checkout", "-q", "main")
    return head


def emulate(repo: Repo, head: str, installed: Installed, scratch: Path) -> list[Step]:
    world = World(repo.path, "main", head, installed.venv, scratch, {"FIDELITY_PIP": installed.pip})
    return run_workflow(yaml.safe_load(GITHUB.read_text()), world)


def codes(steps: list[Step], job: str) -> list[int | None]:
    return [s.code for s in steps if s.job.startswith(job)]


def log(steps: list[Step]) -> str:
    return "\n".join(f"[{s.job}] {s.label[:60]} -> {s.code}\n{s.output[-3000:]}" for s in steps)


def test_the_workflow_passes_a_change_that_moves_nothing(
    sim_repo: Repo, installed: Installed, tmp_path: Path
) -> None:
    head = pull_request(sim_repo, {"NOTES.md": "a refactor\n"})
    steps = emulate(sim_repo, head, installed, tmp_path)
    assert [s.job for s in steps if s.label.startswith("fidelity -q run")] == [
        f"shard ({k})" for k in (1, 2, 3, 4)
    ]
    assert all(code == 0 for code in codes(steps, "shard")), log(steps)
    assert codes(steps, "judge") == [0, 0, 0, 0, 0, 0], log(steps)
    verified = next(s for s in reversed(steps) if s.label.startswith("fidelity -q verify"))
    assert "HELD" in verified.output and "(exit 0)" in verified.output
    page = tmp_path / "artifacts" / "fidelity-report" / "fidelity-report.html"
    assert "HELD: the moved set equals the prediction" in page.read_text()  # uploaded
    # each shard ran its own share: 3 cases over 4 shards, the fourth empty
    shards = [s.output for s in steps if s.label.startswith("fidelity -q run")]
    assert [f"SHARD {k}/4" in out for k, out in enumerate(shards, 1)] == [True] * 4
    assert "evidence kept for 0 of 3" in shards[3]
    summary = tmp_path / "runners" / "judge-summary.md"
    assert "HELD" in summary.read_text()


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
    page = tmp_path / "artifacts" / "fidelity-report" / "fidelity-report.html"
    assert "FALSIFIED" in page.read_text()  # the page is kept when the gate does not hold


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
    install = step.split("&&")[1].replace("~/fidelity-venv", str(installed.venv))
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


def test_the_slurm_array_with_offset_ids_ends_held(
    sim_repo: Repo, with_fidelity: Installed, tmp_path: Path
) -> None:
    """`sbatch --array=5-8` from a folder outside the checkout: ids 5..8 are shards 1..4 by
    SLURM_ARRAY_TASK_MIN. The four tasks run at once, as an array's do, each with its log
    opened in the submit folder; then the judge merges and verifies."""
    head = pull_request(sim_repo, {"NOTES.md": "a refactor\n"})
    before = sim_repo.git("status", "--porcelain", "--untracked-files=all")
    shards_file, judge_file = RECIPES / "slurm-shards.sbatch", RECIPES / "slurm-judge.sbatch"
    assert "#SBATCH --array=1-4\n" in shards_file.read_text()
    submit = tmp_path / "fidelity-shards"
    submit.mkdir()
    array = {"SLURM_ARRAY_JOB_ID": "77", "SLURM_ARRAY_TASK_COUNT": "4"}
    array |= {"SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_MAX": "8"}
    exported = {"REPO": str(sim_repo.path), "CANDIDATE": head}
    exported |= {"BASELINE": sim_repo.git("rev-parse", "main")}
    exported |= {"FIDELITY_VENV": str(with_fidelity.venv)}
    tasks = []
    for task in range(5, 9):
        env = engine_env(with_fidelity, tmp_path / "home", **array, **exported)
        env["SLURM_ARRAY_TASK_ID"] = str(task)
        with (submit / sbatch_output(shards_file, "77", str(task))).open("w") as log:
            argv = ["bash", str(shards_file)]
            tasks.append(subprocess.Popen(argv, cwd=submit, env=env, stdout=log, stderr=log))
    codes = [process.wait(timeout=900) for process in tasks]
    for task, code in enumerate(codes, 5):
        printed = (submit / sbatch_output(shards_file, "77", str(task))).read_text()
        assert code == 0, printed
        assert f"SHARD {task - 4}/4" in printed
    env = engine_env(with_fidelity, tmp_path / "home", ARRAY="77")
    env["FIDELITY_VENV"] = str(with_fidelity.venv)
    judged = shell(["bash", str(judge_file)], submit, env)
    assert judged.returncode == 0 and "HELD" in judged.stdout, judged.stdout + judged.stderr
    assert sorted(p.name for p in (submit / "77").glob("shard-*")) == [
        f"shard-{i}" for i in range(5, 9)
    ]
    assert sim_repo.git("status", "--porcelain", "--untracked-files=all") == before
    unsent = engine_env(with_fidelity, tmp_path / "home", **array, SLURM_ARRAY_TASK_ID="5")
    refused = shell(["bash", str(shards_file)], submit, {**unsent, "REPO": str(sim_repo.path)})
    assert refused.returncode != 0 and "set BASELINE to the baseline commit" in refused.stderr


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
    (judged,) = run_pods(judge["Job"], config, machine, replaced, tmp_path / "judge")
    assert judged.returncode == 1, judged.stdout + judged.stderr
    assert (
        "FALSIFIED" in judged.stdout
        and "unexpected (moved, not predicted): a, b, c" in judged.stdout
    )
