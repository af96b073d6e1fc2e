"""Case tables: TOML matrices validated against the shipped schema, as frozen values."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from fidelity import placeholders, schema
from fidelity.digest import sha256_hex
from fidelity.errors import UsageError
from fidelity.matrix.cases import specs
from fidelity.matrix.cases.outputs import Output

if TYPE_CHECKING:  # the verdict's modules load when a table has [[accept]]: `cases list` waits
    from fidelity.matrix.verdict.accept import Allowance

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
    cwd: str | None = None  # the working directory (a template); None: {worktree}
    replay: str | None = None  # "cold-warm" or "twice": run again on each side (`replay`)
    repeat: int = 1  # cold runs per side: the spread of a nondeterministic case
    nondeterministic: bool = False  # declared: a difference within the spread is not moved
    # why it is replayed otherwise than the run asked (`--replay cold-warm`, no cache): said
    replay_note: str = ""

    def definition(self) -> dict[str, Any]:
        """What decides the evidence a case produces; timeout, tags and the comparison spec
        (which judges evidence but does not produce it) are not part of it. `cwd` is only
        there when set, so that tables written before it keep their definitions."""
        found = {
            "argv": self.argv if isinstance(self.argv, str) else list(self.argv),
            "shell": self.shell,
            "outputs": [o.definition() for o in self.outputs],
            "cache_env": self.cache_env,
            "env": dict(sorted(self.env.items())),
        }
        if self.cwd is not None:
            found["cwd"] = self.cwd
        return found

    @property
    def cold_runs(self) -> int:
        """How many times the case runs cold (fresh cache) on each side."""
        return max(self.repeat, 2 if self.replay == "twice" else 1)

    @property
    def replayed(self) -> bool:
        return self.replay is not None or self.repeat > 1

    def templates(self) -> list[str]:
        """Every string of the case that placeholders are filled in: argv, cwd, env values."""
        words = [self.argv] if isinstance(self.argv, str) else list(self.argv)
        return [*words, self.cwd or "", *self.env.values()]

    @property
    def uses_cache(self) -> bool:
        """Whether the case is given a cache folder: a `cache_env`, or `{cache}` named in its
        argv, env or working directory. Such a cache is what a cold-warm replay warms."""
        return bool(self.cache_env) or names_cache(self.templates())

    def definition_sha(self) -> str:
        blob = json.dumps(self.definition(), sort_keys=True, separators=(",", ":"))
        return sha256_hex(blob.encode())


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
    harness_paths: tuple[str, ...] = ()  # what {harness} holds; () the whole tree
    accepts: tuple[Allowance, ...] = ()  # findings the team accepts, `[[accept]]`

    def reads_harness(self, cases: bool = True) -> bool:
        """Whether any command, environment or working directory names `{harness}` (with
        `cases` False: setup, `[matrix]` env or python): only then is the harness revision
        checked out for the run."""
        texts = [self.python, *self.env.values()]
        texts += [w for c in self.setup for w in ([c] if isinstance(c, str) else c)]
        for c in self.cases if cases else ():
            texts += c.templates()
        return any("harness" in placeholders.names(text) for text in texts)

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
    return _build(raw, source, sha256_hex(data))


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


def _placeholder_problems(raw: Mapping[str, Any]) -> list[str]:
    head = raw.get("matrix", {})
    without = frozenset() if head.get("venv") else frozenset({"venv"})  # {venv} needs venv
    places: list[tuple[tuple[str | int, ...], Any, frozenset[str]]] = [
        (("matrix", key), head[key], placeholders.SIDE - without)
        for key in ("setup", "env", "python")
        if key in head
    ]
    if "cwd" in head:
        places.append((("matrix", "cwd"), head["cwd"], CWD))
    for i, case in enumerate(raw["case"]):
        places += [
            (("case", i, key), case[key], placeholders.CASE - without)
            for key in ("argv", "env")
            if key in case
        ]
        if "cwd" in case:
            places.append((("case", i, "cwd"), case["cwd"], CWD))
    problems = []
    for where, value, allowed in places:
        for path, text in schema.strings(value, where):
            problems += [_locate(raw, path, p) for p in placeholders.problems(text, allowed)]
    return problems


CWD = frozenset({"worktree", "harness"})  # the folders a case may run in


def cwd_problem(value: str) -> str | None:
    """Why a `cwd` cannot be used, or None: it must be `{worktree}` or `{harness}`, then
    optionally a folder inside it."""
    root, _, rest = value.partition("/")
    if root not in ("{worktree}", "{harness}"):
        return "must start with {worktree} or {harness} (then optionally /folder)"
    if ".." in PurePosixPath(rest).parts:
        return "must not leave its folder with '..'"
    return None


def _path_problems(raw: Mapping[str, Any]) -> list[str]:
    """`cwd` and `harness_paths` entries that would point outside their folder."""
    head = raw.get("matrix", {})
    found: list[tuple[tuple[str | int, ...], str]] = (
        [(("matrix", "cwd"), head["cwd"])] if "cwd" in head else []
    )
    found += [(("case", i, "cwd"), c["cwd"]) for i, c in enumerate(raw["case"]) if "cwd" in c]
    problems = [_locate(raw, at, why) for at, value in found if (why := cwd_problem(value))]
    for j, path in enumerate(head.get("harness_paths", ())):
        posix = PurePosixPath(path)
        if posix.is_absolute() or ".." in posix.parts or str(posix) == "." or "\0" in path:
            problems.append(
                _locate(
                    raw,
                    ("matrix", "harness_paths", j),
                    "must be a folder or file relative to the repository top, without '..' "
                    "(the whole tree is the default: leave harness_paths out)",
                )
            )
    return problems


def _accept_problems(raw: Mapping[str, Any]) -> list[str]:
    """`[[accept]]` entries that name no finding one may accept, or no case of the table."""
    if not raw.get("accept"):
        return []
    from fidelity.matrix.verdict import accept

    ids = {c["id"] for c in raw["case"]}
    problems = []
    for i, entry in enumerate(raw.get("accept", ())):
        wrong = accept.entry_problem(entry)
        if wrong:
            at = ("accept", i, wrong[0])
            problems.append(f"{schema.entry_label(raw, at, 'accept')}{_locate(raw, at, wrong[1])}")
        if "case" in entry and entry["case"] not in ids:
            problems.append(
                _locate(raw, ("accept", i, "case"), f"names no case: {entry['case']!r}")
            )
    return problems


def _semantic_problems(raw: Mapping[str, Any]) -> list[str]:
    problems = _placeholder_problems(raw)
    problems += _path_problems(raw)
    problems += _accept_problems(raw)
    seen: dict[str, int] = {}
    for i, case in enumerate(raw["case"]):
        here = ("case", i)
        if case["id"] in seen:
            problems.append(
                _locate(
                    raw, (*here, "id"), f"duplicate id; first used at $.case[{seen[case['id']]}]"
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
        problems += [_locate(raw, (*here, key), why) for key, why in _replay_problems(case)]
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


def names_cache(templates: Sequence[str]) -> bool:
    return any("{cache}" in t and "cache" in placeholders.names(t) for t in templates)


def _raw_templates(case: Mapping[str, Any]) -> list[str]:
    argv = case.get("argv", [])
    words = [argv] if isinstance(argv, str) else [str(w) for w in argv]
    return [*words, str(case.get("cwd", "")), *map(str, dict(case.get("env", {})).values())]


def _replay_problems(case: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A cold-warm replay needs a cache to warm; a declared nondeterministic case needs
    more than one cold run, or its spread is never seen."""
    found = []
    cached = case.get("cache_env") or names_cache(_raw_templates(case))
    if case.get("replay") == "cold-warm" and not cached:
        why = "`cold-warm` needs a cache to warm: name `{cache}` in the command or set `cache_env`"
        found.append(("replay", why))
    runs = max(int(case.get("repeat", 1)), 2 if case.get("replay") == "twice" else 1)
    if case.get("nondeterministic") and runs < 2:
        found.append(
            (
                "nondeterministic",
                "needs two or more cold runs per side to measure its spread: "
                'set repeat = 3 (or replay = "twice")',
            )
        )
    return found


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
                cwd=c.get("cwd", head.get("cwd")),
                replay=c.get("replay"),
                repeat=int(c.get("repeat", 1)),
                nondeterministic=bool(c.get("nondeterministic", False)),
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
        # as git names paths: "./cases" or "cases/." is "cases", or nothing under it is dirt
        harness_paths=tuple(PurePosixPath(p).as_posix() for p in head.get("harness_paths", ())),
        accepts=_accepts(raw.get("accept", ())),
    )


def _accepts(entries: Sequence[Mapping[str, Any]]) -> tuple[Allowance, ...]:
    if not entries:
        return ()
    from fidelity.matrix.verdict.accept import Allowance

    return tuple(Allowance.parse(a) for a in entries)


REPLAYS = ("cold-warm", "twice")


NO_CACHE_TO_WARM = (
    "--replay cold-warm asked; no cache to warm (no cache_env, no {cache}), so run twice cold"
)


def with_replay(matrix: Matrix, mode: str | None) -> Matrix:
    """`--replay MODE` for a whole run: every case without its own `replay` gets it, except
    that a case with no cache to warm is replayed `twice` under `cold-warm`."""
    if mode is None:
        return matrix
    return replace(matrix, cases=tuple(_replayed(c, mode) for c in matrix.cases))


def _replayed(case: Case, mode: str) -> Case:
    if case.replay is not None:  # its own key wins
        return case
    if mode == "cold-warm" and not case.uses_cache:
        return replace(case, replay="twice", replay_note=NO_CACHE_TO_WARM)
    return replace(case, replay=mode)


WRITE_ONE = (
    "write one there (docs/case-table.md in fidelity's repository shows how; `fidelity demo "
    "--dir DIR` builds a repository with a working one), or name another with --cases FILE"
)


def read(path: Path) -> Matrix:
    """The case table in a file (`cases validate FILE`, `cases list FILE`); UsageError when
    there is none."""
    if not path.is_file():
        named = WRITE_ONE.replace("with --cases FILE", "as FILE")  # these take no --cases
        raise UsageError(f"no case table at {path}: {named}")
    return parse(path.read_bytes(), str(path))
