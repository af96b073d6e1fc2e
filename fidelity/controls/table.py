"""Control tables: TOML files of named one-edit trees, validated against the shipped schema.

Errors are the case table's (`TableError`): every problem is listed, located by
file, control id and JSON path, and the whole table is refused (exit 2).
"""

from __future__ import annotations

import enum
import hashlib
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fidelity import placeholders, schema

DEFAULT_COMMAND = ("python", "-m", "pytest", "-q")
NOOP_ID = "(no-op)"


class Match(enum.StrEnum):
    EXACT = "exact"  # the failing set equals caught_by
    INCLUDES = "includes"  # the failing set holds every test of caught_by (and maybe more)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace `find` (which must occur exactly once) in `file`, or apply `patch`."""

    file: str
    find: str | None = None
    replace: str | None = None
    patch: str | None = None

    def __post_init__(self) -> None:
        # `./pkg/m.py` is `pkg/m.py`: the trace and selection name files as the tree does
        object.__setattr__(self, "file", posixpath.normpath(self.file))


@dataclass(frozen=True, slots=True)
class Control:
    id: str
    why: str
    edits: tuple[Edit, ...]
    command: tuple[str, ...]
    timeout_s: float | None = None  # None: derived from the unmodified tree's time
    caught_by: tuple[str, ...] = ()
    match: Match = Match.EXACT
    survives: bool = False
    residue: str = ""
    raises: tuple[str, ...] = ()  # exceptions whose raising is the behaviour under test

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.file for e in self.edits))


@dataclass(frozen=True, slots=True)
class ControlTable:
    source: str
    sha256: str
    controls: tuple[Control, ...]
    command: tuple[str, ...] = DEFAULT_COMMAND
    import_check: tuple[str, ...] = ()
    timeout_s: float | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    setup: tuple[tuple[str, ...], ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict)  # control id -> line of its entry

    def noop(self) -> Control:
        """The built-in control whose edit changes nothing: it must survive."""
        return Control(
            id=NOOP_ID,
            why="an edit that changes nothing must survive, or state leaks between controls",
            edits=(),
            command=self.command,
            timeout_s=self.timeout_s,
            survives=True,
            residue="built in",
        )


_ONE_OF = {
    "edit": "give either find + replace, or patch (not both)",
    "control": "give either caught_by (with an optional match), or survives = true with a residue",
}


def _locate(raw: Mapping[str, Any], path: Sequence[str | int], msg: str) -> str:
    if "is not valid under any of the given schemas" in msg or "is valid under each" in msg:
        kind = "edit" if len(path) >= 2 and path[-2] == "edit" else "control"
        msg = _ONE_OF[kind]
    return f"{schema.entry_label(raw, path, 'control')}at {schema.json_path(path)}: {msg}"


COMMAND = frozenset({"junit", "worktree", "python"})  # placeholders a command may name
TREE = frozenset({"worktree", "python"})  # those of setup and env


def _placeholder_problems(raw: Mapping[str, Any]) -> list[str]:
    head = raw.get("controls", {})
    places: list[tuple[tuple[str | int, ...], Any, frozenset[str]]] = [
        (("controls", key), head[key], COMMAND if key == "command" else TREE)
        for key in ("command", "setup", "env")
        if key in head
    ]
    places += [
        (("control", i, "command"), control["command"], COMMAND)
        for i, control in enumerate(raw.get("control", ()))
        if "command" in control
    ]
    return [
        _locate(raw, path, problem)
        for where, value, allowed in places
        for path, text in schema.strings(value, where)
        for problem in placeholders.problems(text, allowed)
    ]


def _semantic_problems(raw: Mapping[str, Any]) -> list[str]:
    problems = _placeholder_problems(raw)
    seen: dict[str, int] = {}
    for i, control in enumerate(raw.get("control", ())):
        if control["id"] in seen:  # counted as the path counts: $.control[0] is the first
            first = f"$.control[{seen[control['id']]}]"
            problems.append(
                _locate(raw, ("control", i, "id"), f"duplicate id; first used at {first}")
            )
        seen.setdefault(control["id"], i)
    return problems


def parse(data: bytes, source: str) -> ControlTable:
    """Parse and validate a control table; TableError lists every problem found."""
    raw = schema.load_toml(
        data, source, schema="controls", kind="control", locate=_locate, semantic=_semantic_problems
    )
    table = _build(raw, source, hashlib.sha256(data).hexdigest())
    return replace(table, lines=schema.entry_lines(data.decode("utf-8", errors="replace")))


def _build(raw: Mapping[str, Any], source: str, sha: str) -> ControlTable:
    head = raw.get("controls", {})
    command = tuple(head.get("command", DEFAULT_COMMAND))
    timeout = float(head["timeout_s"]) if "timeout_s" in head else None
    controls = tuple(
        Control(
            id=c["id"],
            why=c["why"],
            edits=tuple(Edit(**e) for e in c["edit"]),
            command=tuple(c.get("command", command)),
            timeout_s=float(c["timeout_s"]) if "timeout_s" in c else timeout,
            caught_by=tuple(c.get("caught_by", ())),
            match=Match(c.get("match", "exact")),
            survives=bool(c.get("survives", False)),
            residue=c.get("residue", ""),
            raises=tuple(c.get("raises", ())),
        )
        for c in raw.get("control", ())
    )
    return ControlTable(
        source=source,
        sha256=sha,
        controls=controls,
        command=command,
        import_check=tuple(head.get("import_check", ())),
        timeout_s=timeout,
        env=dict(head.get("env", {})),
        setup=tuple(tuple(argv) for argv in head.get("setup", ())),
    )
