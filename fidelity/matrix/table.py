"""Case tables: TOML matrices validated against the shipped schema, as frozen values."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from fidelity import placeholders, schema
from fidelity.errors import UsageError
from fidelity.matrix import specs
from fidelity.matrix.outputs import Output

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_SETUP_TIMEOUT_S = 1800.0

Command = tuple[str, ...] | str


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    argv: Command
    shell: bool = False
    outputs: tuple[Output, ...] = ()
    cache_env: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    tags: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    # its comparison specs: its own, then the table-wide ones for outputs it declares
    compare: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def definition(self) -> dict[str, Any]:
        """What decides the evidence a case produces; timeout, tags and the comparison spec
        (which judges evidence but does not produce it) are not part of it."""
        return {
            "argv": self.argv if isinstance(self.argv, str) else list(self.argv),
            "shell": self.shell,
            "outputs": [o.definition() for o in self.outputs],
            "cache_env": self.cache_env,
            "env": dict(sorted(self.env.items())),
        }

    def definition_sha(self) -> str:
        blob = json.dumps(self.definition(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Matrix:
    source: str
    sha256: str
    name: str
    cases: tuple[Case, ...]
    setup: tuple[Command, ...] = ()
    setup_timeout_s: float = DEFAULT_SETUP_TIMEOUT_S
    import_check: tuple[str, ...] = ()
    python: str = "python"
    env: Mapping[str, str] = field(default_factory=dict)
    venv: bool = False  # a virtual environment per side: {venv}, and {python} is its python
    reuse_setup: bool = False  # keep each side's set-up worktree for the next run

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)


def parse(data: bytes, source: str, *, authored: bool = True) -> Matrix:
    """Parse and validate a case table; TableError lists every problem found. A side's own
    table (`authored=False`) is read as it was, not refused for the TOML trap of a block
    written after its last case (`specs`): its specs are what its cases were judged by."""

    def semantic(raw: Mapping[str, Any]) -> list[str]:
        return _semantic_problems(raw) + specs.problems(raw, _locate, trap=authored)

    raw = schema.load_toml(
        data, source, schema="matrix", kind="case", locate=_locate, semantic=semantic
    )
    return _build(raw, source, hashlib.sha256(data).hexdigest())


def _locate(raw: Mapping[str, Any], path: Sequence[str | int], msg: str) -> str:
    return f"{schema.entry_label(raw, path, 'case')}at {schema.json_path(path)}: {msg}"


def glob_problem(pattern: str) -> str | None:
    """Why an output glob cannot be used, or None: it must stay inside {out}."""
    posix = PurePosixPath(pattern)
    if posix.is_absolute() or pattern.startswith("~"):
        return "must be relative to the case's {out} directory"
    if ".." in posix.parts:
        return "must not leave the {out} directory with '..'"
    depth = 0
    for ch in pattern:
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
    if depth:
        return "has an unclosed '[' character class"
    return None


def _numbers(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    """Paths of every number that is not finite (TOML allows nan and inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, (*path, i))


def _placeholder_problems(raw: Mapping[str, Any]) -> list[str]:
    head = raw.get("matrix", {})
    without = frozenset() if head.get("venv") else frozenset({"venv"})  # {venv} needs venv
    places: list[tuple[tuple[str | int, ...], Any, frozenset[str]]] = [
        (("matrix", key), head[key], placeholders.SIDE - without)
        for key in ("setup", "env", "python")
        if key in head
    ]
    for i, case in enumerate(raw["case"]):
        places += [
            (("case", i, key), case[key], placeholders.CASE - without)
            for key in ("argv", "env")
            if key in case
        ]
    problems = []
    for where, value, allowed in places:
        for path, text in schema.strings(value, where):
            problems += [_locate(raw, path, p) for p in placeholders.problems(text, allowed)]
    return problems


def _semantic_problems(raw: Mapping[str, Any]) -> list[str]:
    problems: list[str] = [
        _locate(raw, path, "must be a finite number (TOML's nan and inf would disable the check)")
        for path in _numbers(raw, ())
    ]
    problems += _placeholder_problems(raw)
    seen: dict[str, int] = {}
    for i, case in enumerate(raw["case"]):
        here = ("case", i)
        if case["id"] in seen:
            problems.append(
                _locate(
                    raw, (*here, "id"), f"duplicate id; first used by case #{seen[case['id']] + 1}"
                )
            )
        seen.setdefault(case["id"], i)
        if isinstance(case["argv"], str) and not case.get("shell", False):
            problems.append(
                _locate(raw, (*here, "argv"), "is a string; give an argv list, or set shell = true")
            )
        outputs = [Output.parse(o) for o in case.get("outputs", [])]
        for j, output in enumerate(outputs):
            for key, pattern in (("glob", output.glob), ("strip", output.strip)):
                why = glob_problem(pattern) if pattern is not None else None
                if why:
                    where = (
                        (*here, "outputs", j)
                        if output == Output(output.glob)
                        else (*here, "outputs", j, key)
                    )
                    problems.append(_locate(raw, where, f"glob {pattern!r} {why}"))
        if not case.get("outputs") and not case.get("cache_env"):
            problems.append(
                _locate(
                    raw,
                    here,
                    "declares no evidence: give `outputs` globs or a `cache_env`; "
                    "a case with nothing to compare could never move",
                )
            )
    return problems


def _command(value: Any) -> Command:
    return value if isinstance(value, str) else tuple(value)


def _build(raw: Mapping[str, Any], source: str, sha: str) -> Matrix:
    head = raw.get("matrix", {})
    defaults = head.get("compare", {})
    cases = []
    for c in raw["case"]:
        outputs = tuple(Output.parse(o) for o in c.get("outputs", ()))
        cases.append(
            Case(
                id=c["id"],
                argv=_command(c["argv"]),
                shell=c.get("shell", False),
                outputs=outputs,
                cache_env=c.get("cache_env"),
                timeout_s=float(c.get("timeout_s", DEFAULT_TIMEOUT_S)),
                tags=tuple(c.get("tags", ())),
                env=dict(c.get("env", {})),
                compare=specs.effective(defaults, c.get("compare", {}), outputs),
            )
        )
    return Matrix(
        source=source,
        sha256=sha,
        name=head.get("name", ""),
        cases=tuple(cases),
        setup=tuple(_command(c) for c in head.get("setup", ())),
        setup_timeout_s=float(head.get("setup_timeout_s", DEFAULT_SETUP_TIMEOUT_S)),
        import_check=tuple(head.get("import_check", ())),
        python=head.get("python", "python"),
        env=dict(head.get("env", {})),
        venv=bool(head.get("venv", False)),
        reuse_setup=bool(head.get("reuse_setup", False)),
    )


def read(path: Path) -> Matrix:
    """The case table in a file; UsageError when there is none."""
    if not path.is_file():
        raise UsageError(f"no case table at {path}")
    return parse(path.read_bytes(), str(path))
