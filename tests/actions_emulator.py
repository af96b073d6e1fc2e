"""Just enough of GitHub Actions to run docs/recipes/github-actions.yml on this machine.

Jobs run in `needs` order, one instance per matrix combination, each in a workspace of its
own; `run:` steps go through bash as the runner starts them (`bash --noprofile --norc -eo
pipefail`), with every `${{ ... }}` substituted from a small context. The actions the
recipe uses are emulated: `actions/checkout` as a clone of the stand-in remote at the pull
request's head, `actions/setup-python` as a venv the test made (its bin first on PATH),
`upload-artifact`/`download-artifact` as copies through a folder (`overwrite` as GitHub
has it: without it, a second upload of one name fails, as a re-run's does). A composite
action (`using: composite`) runs from its action.yml: `uses: ./` from the workspace, or an
`OWNER/REPO@REF` the world maps to a folder, its steps through bash with `inputs.*` and
`github.action_path`. Anything else -- an expression, a key, an action or an input the
emulator does not know -- is an `Unknown` error, so no step can be skipped silently. Not
emulated: runners, services, secrets, containers, caches, concurrency; jobs run one at a
time.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import git_env

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
WORKFLOW_KEYS = {"name", "on", True, "env", "jobs"}  # PyYAML reads a bare `on:` as True
JOB_KEYS = {"runs-on", "strategy", "env", "steps", "needs", "if"}
STEP_KEYS = {"name", "uses", "with", "run", "if", "env"}
ACTION_KEYS = {"name", "description", "author", "branding", "inputs", "runs"}
INPUT_KEYS = {"description", "required", "default"}
COMPOSITE_STEP_KEYS = {"name", "run", "shell", "env", "if"}
INPUTS = {
    "actions/checkout": {"fetch-depth"},
    "actions/setup-python": {"python-version"},
    "actions/upload-artifact": {"name", "path", "include-hidden-files", "overwrite"},
    "actions/download-artifact": {"pattern", "path"},
}
# the runner's own variables a step may read; the test process's engine variables are dropped
DROPPED = ("GIT_", "FIDELITY_", "SLURM_", "JOB_COMPLETION_INDEX", "VIRTUAL_ENV", "PYTHON")


class Unknown(AssertionError):
    """The workflow uses something the emulator does not know: extend the emulator."""


@dataclass(frozen=True, slots=True)
class World:
    """What the workflow runs against: the remote and the pull request, a venv, a scratch dir."""

    remote: Path  # the repository GitHub holds: branch `base_ref`, and the PR's head
    base_ref: str
    head: str  # the sha a pull_request checkout lands on
    venv: Path  # what setup-python provides
    scratch: Path
    env: Mapping[str, str] = field(default_factory=dict)  # workflow env values replaced
    actions: Mapping[str, Path] = field(default_factory=dict)  # OWNER/REPO -> its checkout
    attempt: int = 1  # a re-run: 2 and on (fresh workspaces, the same artifacts)


@dataclass(frozen=True, slots=True)
class Step:
    job: str  # `shard (1)`: the job and its matrix values
    label: str
    code: int | None  # None: skipped
    output: str = ""


@dataclass
class _Job:
    name: str
    context: dict[str, str]
    env: dict[str, str]
    workspace: Path
    path: list[str] = field(default_factory=list)
    failed: bool = False


def substitute(text: str, context: Mapping[str, str]) -> str:
    """Every `${{ name }}` replaced from context; Unknown for one it does not hold."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1).strip()
        if name not in context:
            raise Unknown(f"expression ${{{{ {name} }}}} is not known to the emulator")
        return context[name]

    return EXPRESSION.sub(value, text)


def _text(value: object) -> str:
    """An input's value as the runner passes it: a YAML true is the string `true`."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _known(what: str, keys: object, allowed: set[Any]) -> None:
    extra = set(keys) - allowed if isinstance(keys, dict) else {keys}
    if extra:
        raise Unknown(f"{what}: {sorted(map(str, extra))} not known to the emulator")


def _scalar(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Unknown(f"matrix value {value!r}: only numbers and strings are emulated")
    return str(value)


def run_workflow(
    workflow: Mapping[Any, Any], world: World, only: frozenset[str] | None = None
) -> list[Step]:
    """Every job instance's steps in order, with each step's exit code (None: skipped);
    `only`: the jobs a re-run runs again (the others stand as they ended: passed)."""
    _known("workflow", workflow, WORKFLOW_KEYS)
    top = {"github.base_ref": world.base_ref}
    env = {k: substitute(str(v), top) for k, v in workflow.get("env", {}).items()}
    for name, value in world.env.items():
        if name not in env:
            raise Unknown(f"the workflow sets no {name} for the test to replace")
        env[name] = value
    results: list[Step] = []
    failed: dict[str, bool] = {}
    for name in _in_needs_order(workflow["jobs"]):
        spec = workflow["jobs"][name]
        _known(f"job {name}", spec, JOB_KEYS)
        if only is not None and name not in only:
            failed[name] = False
            continue
        needs = spec.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        condition = spec.get("if")
        if condition is not None and condition != "always()":
            raise Unknown(f"job {name}: `if: {condition}` is not known to the emulator")
        if condition is None and any(failed[n] for n in needs):
            results.append(Step(name, "(job skipped: a needed job failed)", None))
            failed[name] = True
            continue
        failed[name] = _run_job(name, spec, env, world, results)
    return results


def _in_needs_order(jobs: Mapping[str, Any]) -> list[str]:
    order: list[str] = []
    while len(order) < len(jobs):
        ready = [
            n
            for n, spec in jobs.items()
            if n not in order
            and all(
                d in order
                for d in (
                    [spec["needs"]] if isinstance(spec.get("needs"), str) else spec.get("needs", [])
                )
            )
        ]
        if not ready:
            raise Unknown(f"jobs {sorted(set(jobs) - set(order))} need jobs that never run")
        order += ready
    return order


def _instances(name: str, spec: Mapping[str, Any]) -> list[dict[str, str]]:
    strategy = spec.get("strategy", {})
    _known(f"job {name} strategy", strategy, {"fail-fast", "matrix"})
    matrix = strategy.get("matrix", {})
    for key, values in matrix.items():
        if key in ("include", "exclude") or not isinstance(values, list):
            raise Unknown(f"job {name}: matrix key {key!r} is not emulated")
    combos = list(itertools.product(*matrix.values())) if matrix else [()]
    instances = []
    for index, combo in enumerate(combos):
        context = {f"matrix.{k}": _scalar(v) for k, v in zip(matrix, combo, strict=True)}
        context["strategy.job-index"] = str(index)
        context["strategy.job-total"] = str(len(combos))
        instances.append(context)
    return instances


def _run_job(
    name: str, spec: Mapping[str, Any], env: Mapping[str, str], world: World, out: list[Step]
) -> bool:
    """Run every instance of one job; True when one failed (or was cancelled)."""
    fail_fast = spec.get("strategy", {}).get("fail-fast", True)
    any_failed = False
    for context in _instances(name, spec):
        context = {**context, "github.base_ref": world.base_ref}
        label = name + (
            f" ({', '.join(v for k, v in context.items() if k.startswith('matrix.'))})"
            if any(k.startswith("matrix.") for k in context)
            else ""
        )
        if any_failed and fail_fast:
            out.append(Step(label, "(cancelled: fail-fast)", None))
            continue
        again = f"-attempt{world.attempt}" if world.attempt > 1 else ""
        workspace = world.scratch / "runners" / (label.replace(" ", "_") + again)
        workspace.mkdir(parents=True)
        job_env = {
            **env,
            **{k: substitute(str(v), context) for k, v in spec.get("env", {}).items()},
        }
        job = _Job(label, context, job_env, workspace)
        for step in spec["steps"]:
            out.append(_step(job, step, world))
        any_failed |= job.failed
    return any_failed


def _step(job: _Job, step: Mapping[str, Any], world: World) -> Step:
    _known(f"{job.name} step", step, STEP_KEYS)
    label = str(step.get("name") or step.get("uses") or step.get("run", "")).strip()
    condition = step.get("if")
    if condition is not None and condition != "always()":
        raise Unknown(f"{job.name}: step `if: {condition}` is not known to the emulator")
    run, uses = step.get("run"), step.get("uses")
    if (run is None) == (uses is None):
        raise Unknown(f"{job.name}: a step needs exactly one of run and uses: {step}")
    text = substitute(run if run is not None else "", job.context)
    inputs = {k: substitute(_text(v), job.context) for k, v in step.get("with", {}).items()}
    env = {
        **job.env,
        **{k: substitute(str(v), job.context) for k, v in step.get("env", {}).items()},
    }
    if job.failed and condition is None:
        return Step(job.name, label, None)
    if uses is not None:
        code, output = _action(job, str(uses), inputs, world)
    else:
        code, output = _bash(job, text, env)
    job.failed |= code != 0
    return Step(job.name, label, code, output)


def _runner_env(job: _Job, env: Mapping[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    summary = job.workspace.parent / f"{job.workspace.name}-summary.md"
    path = os.pathsep.join([*job.path, base.get("PATH", "")])
    return {
        **base,
        **env,
        "PATH": path,
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(job.workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
    }


def _bash(job: _Job, script: str, env: Mapping[str, str]) -> tuple[int, str]:
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=job.workspace,
        env=_runner_env(job, env),
        capture_output=True,
        text=True,
        timeout=900,
    )
    return done.returncode, f"$ {script}\n{done.stdout}{done.stderr}"


def _action(job: _Job, uses: str, inputs: Mapping[str, str], world: World) -> tuple[int, str]:
    name, _, version = uses.partition("@")
    if uses == "./":
        return _composite(job, job.workspace, inputs, world)
    if name in world.actions and version:
        return _composite(job, world.actions[name], inputs, world)
    if name not in INPUTS or not version:
        raise Unknown(f"action {uses} is not emulated")
    _known(uses, dict(inputs), INPUTS[name])
    if name == "actions/checkout":
        return _checkout(job, inputs, world)
    if name == "actions/setup-python":
        wanted = inputs.get("python-version", "")
        have = f"{sys.version_info.major}.{sys.version_info.minor}"
        if wanted != have:
            raise Unknown(f"{uses} asks for Python {wanted!r}; the emulator has {have}")
        job.path.insert(0, str(world.venv / "bin"))
        return 0, f"python {have}: {world.venv}"
    store = world.scratch / "artifacts"
    if name == "actions/upload-artifact":
        return _upload(job, inputs, store)
    return _download(job, inputs, store)


def _checkout(job: _Job, inputs: Mapping[str, str], world: World) -> tuple[int, str]:
    """A clone of the remote at the head: full history with fetch-depth 0, else one commit."""
    env = git_env(world.scratch)
    remote = f"file://{world.remote}"
    if inputs.get("fetch-depth") == "0":
        argv = [
            ["git", "clone", "-q", remote, "."],
            ["git", "checkout", "-q", "--detach", world.head],
        ]
    else:
        argv = [
            ["git", "init", "-q"],
            ["git", "fetch", "-q", "--depth", "1", remote, world.head],
            ["git", "checkout", "-q", "--detach", "FETCH_HEAD"],
        ]
    for command in argv:
        done = subprocess.run(command, cwd=job.workspace, env=env, capture_output=True, text=True)
        if done.returncode:
            return done.returncode, done.stderr
    return 0, f"checked out {world.head}"


def _composite(job: _Job, folder: Path, given: Mapping[str, str], world: World) -> tuple[int, str]:
    """A composite action's steps, in order, as one step of the job: failed when one of them
    failed; a step after a failure runs only with `if: always()`."""
    import yaml

    action = yaml.safe_load((folder / "action.yml").read_text())
    _known(f"{folder}/action.yml", action, ACTION_KEYS)
    declared = action.get("inputs", {})
    _known(f"{folder}/action.yml inputs", dict(given), set(declared))
    for name, spec in declared.items():
        _known(f"input {name}", spec, INPUT_KEYS)
    if action["runs"].get("using") != "composite":
        raise Unknown(f"{folder}/action.yml: only composite actions are emulated")
    context = {**job.context, "github.base_ref": world.base_ref}
    context["github.action_path"] = str(folder)
    context |= {f"inputs.{k}": given.get(k, str(v.get("default", ""))) for k, v in declared.items()}
    failed, said = 0, []
    for step in action["runs"]["steps"]:
        code, output = _composite_step(job, step, context, folder, failed)
        failed = failed or code or 0
        said.append(f"[{step.get('name', '')}] -> {code}\n{output}")
    return failed, "\n".join(said)


def _composite_step(
    job: _Job, step: Mapping[str, Any], context: Mapping[str, str], folder: Path, failed: int
) -> tuple[int | None, str]:
    _known(f"{folder}/action.yml step", step, COMPOSITE_STEP_KEYS)
    condition = step.get("if")
    if condition not in (None, "always()"):
        raise Unknown(f"{folder}/action.yml: step `if: {condition}` is not known to the emulator")
    if step.get("shell") != "bash" or "run" not in step:
        raise Unknown(f"{folder}/action.yml: only `run` steps with `shell: bash` are emulated")
    if failed and condition is None:
        return None, "(skipped: a step before it failed)"
    env = {**job.env, **{k: substitute(str(v), context) for k, v in step.get("env", {}).items()}}
    env["GITHUB_ACTION_PATH"] = str(folder)
    return _bash(job, substitute(step["run"], context), env)


def _upload(job: _Job, inputs: Mapping[str, str], store: Path) -> tuple[int, str]:
    name, source = inputs["name"], job.workspace / inputs["path"]
    target = store / name
    if target.exists() and inputs.get("overwrite") == "true":
        shutil.rmtree(target)  # the artifact of an earlier attempt, replaced
    if target.exists():
        return 1, f"an artifact named {name} already exists"  # v4 and later: names are unique
    if not source.exists():
        return 0, f"no files found at {inputs['path']}; no artifact uploaded"  # a warning
    if source.is_file():  # a single file: the artifact holds it by its own name
        target.mkdir(parents=True)
        shutil.copy2(source, target / source.name)
        return 0, f"uploaded {name}"
    hidden = inputs.get("include-hidden-files") == "true"
    ignore = None if hidden else shutil.ignore_patterns(".*")
    shutil.copytree(source, target, ignore=ignore)
    return 0, f"uploaded {name}"


def _download(job: _Job, inputs: Mapping[str, str], store: Path) -> tuple[int, str]:
    dest = job.workspace / inputs.get("path", ".")
    names = sorted(p.name for p in store.iterdir()) if store.exists() else []
    chosen = [n for n in names if fnmatch.fnmatchcase(n, inputs.get("pattern", "*"))]
    for name in chosen:
        shutil.copytree(store / name, dest / name)
    return 0, f"downloaded {chosen}"
