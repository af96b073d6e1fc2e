"""Commit-trailer checks: required trailers with value patterns, forbidden trailers, values
checked against the repository, and an optional size rule for a range.

The rules are pure over trailers that git itself parsed and a `Probe` that answers the
repository questions; reading messages and trailers from git, and the git-backed probe,
live in `fidelity.history.trailers`. Keys compare case-insensitively, as git compares them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from checkers.errors import ConfigError


class Code(enum.StrEnum):
    """Stable codes in the FD8xx family (commit trailers); never renumber. They were FD701-FD706
    up to 0.2.0, the numbers of check-docs' page codes."""

    MISSING = "FD801"
    BAD_VALUE = "FD802"
    FORBIDDEN = "FD803"
    NOT_ANCESTOR = "FD804"
    NO_SUCH_PATH = "FD805"
    TOO_LARGE = "FD806"


class Verify(enum.StrEnum):
    ANCESTOR = "ancestor"  # names a commit that exists and is an ancestor of the commit
    PATH = "path"  # names a path (file or directory) in the commit's tree


@dataclass(frozen=True, slots=True)
class Rules:
    required: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    forbidden: tuple[str, ...] = ()
    verify: Mapping[str, Verify] = field(default_factory=dict)
    max_changed_files: int | None = None
    max_changed_lines: int | None = None
    # lower-cased views, computed once: a range of 20,000 messages asks them per trailer
    _patterns: Mapping[str, re.Pattern[str]] = field(init=False, repr=False, compare=False)
    _checks: Mapping[str, Verify] = field(init=False, repr=False, compare=False)
    _forbidden: frozenset[str] = field(init=False, repr=False, compare=False)
    _judged: frozenset[str] = field(init=False, repr=False, compare=False)
    _needed: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = {k.lower(): p for k, p in self.required.items()}
        checks = {k.lower(): v for k, v in self.verify.items()}
        forbidden = frozenset(k.lower() for k in self.forbidden)
        object.__setattr__(self, "_patterns", patterns)
        object.__setattr__(self, "_checks", checks)
        object.__setattr__(self, "_forbidden", forbidden)
        object.__setattr__(self, "_judged", forbidden | set(patterns) | set(checks))
        object.__setattr__(self, "_needed", frozenset(patterns))

    @property
    def empty(self) -> bool:
        return not (self.required or self.forbidden or self.verify) and not self.sized

    @property
    def sized(self) -> bool:
        return self.max_changed_files is not None or self.max_changed_lines is not None


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem at `where:line:col` (a message file, or a commit's short sha)."""

    where: str
    line: int
    col: int
    code: Code
    message: str

    def render(self) -> str:
        return f"{self.where}:{self.line}:{self.col}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, str | int]:
        return {
            "where": self.where,
            "line": self.line,
            "col": self.col,
            "code": str(self.code),
            "message": self.message,
        }


class Probe(Protocol):
    """The repository questions a trailer value can raise, for one commit (or the index)."""

    def commit_problem(self, value: str) -> str | None: ...

    def has_path(self, value: str) -> bool: ...


def _line_of(lines: Sequence[str], key: str, last: bool = True) -> int | None:
    """1-based line where `key:` starts, searching from the end (the trailer block) or
    from the start; None when no line starts with it."""
    pattern = re.compile(rf"^{re.escape(key)}\s*:", re.IGNORECASE)
    order = range(len(lines) - 1, -1, -1) if last else range(len(lines))
    return next((i + 1 for i in order if pattern.match(lines[i])), None)


def _missing(where: str, key: str, lines: Sequence[str]) -> Finding:
    line = _line_of(lines, key, last=False)
    if line is None:
        return Finding(where, 1, 1, Code.MISSING, f"missing required trailer `{key}: ...`")
    return Finding(
        where,
        line,
        1,
        Code.MISSING,
        f"{key} is written on line {line} but is not a trailer: git reads trailers from the "
        "last paragraph only; move it into the final block of `Key: value` lines",
    )


def _value_findings(
    where: str, key: str, value: str, rules: Rules, probe: Probe, *, line: int
) -> list[Finding]:
    found = []
    pattern = rules._patterns.get(key.lower())
    if pattern is not None and not pattern.fullmatch(value):
        found.append(
            Finding(
                where,
                line,
                1,
                Code.BAD_VALUE,
                f"{key}: {value!r} does not match {pattern.pattern!r}",
            )
        )
    check = rules._checks.get(key.lower())
    if check is Verify.ANCESTOR:
        problem = probe.commit_problem(value)
        if problem:
            found.append(Finding(where, line, 1, Code.NOT_ANCESTOR, f"{key}: {value} {problem}"))
    elif check is Verify.PATH and not probe.has_path(value):
        found.append(
            Finding(
                where,
                line,
                1,
                Code.NO_SUCH_PATH,
                f"{key}: {value} names no file or directory in the tree",
            )
        )
    return found


def clean(trailers: Sequence[tuple[str, str]], rules: Rules) -> bool:
    """True when a message's trailers break no rule that needs no repository answer: the
    fast first look over a long range (check_message then locates what this flags)."""
    if not rules._needed <= {key.lower() for key, _ in trailers}:
        return False
    for key, value in trailers:
        low = key.lower()
        if low in rules._forbidden or low in rules._checks:
            return False
        pattern = rules._patterns.get(low)
        if pattern is not None and not pattern.fullmatch(value):
            return False
    return True


def check_message(
    where: str, text: str, trailers: Sequence[tuple[str, str]], rules: Rules, probe: Probe
) -> tuple[Finding, ...]:
    """Every rule broken by one commit message, given the trailers git parsed from it."""
    lines = text.split("\n")  # as git counts lines (splitlines also breaks at U+0085)
    keys = {key.lower() for key, _ in trailers}
    found = [_missing(where, k, lines) for k in rules.required if k.lower() not in keys]
    for key, value in trailers:
        low = key.lower()
        if low not in rules._judged:
            continue  # a trailer no rule names
        line = (_line_of(lines, key) or 1) if lines else 1
        if low in rules._forbidden:
            found.append(Finding(where, line, 1, Code.FORBIDDEN, f"{key} is a forbidden trailer"))
        found.extend(_value_findings(where, key, value, rules, probe, line=line))
    return tuple(sorted(found))


def check_size(where: str, files: int, lines: int, rules: Rules) -> tuple[Finding, ...]:
    """The size rule over a range's whole diff; a breach names both limits and the split."""
    over = []
    if rules.max_changed_files is not None and files > rules.max_changed_files:
        over.append(f"{files} files changed (limit {rules.max_changed_files})")
    if rules.max_changed_lines is not None and lines > rules.max_changed_lines:
        over.append(f"{lines} lines changed (limit {rules.max_changed_lines})")
    if not over:
        return ()
    return (
        Finding(
            where, 1, 1, Code.TOO_LARGE, f"{' and '.join(over)}; split the change into smaller ones"
        ),
    )


_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_SECTION_KEYS = {"required", "forbidden", "verify", "max_changed_files", "max_changed_lines"}


def plainly_valid(section: Mapping[str, Any]) -> bool:
    """True only for a section the shipped schema accepts (never for one it refuses), so
    that the common case skips importing jsonschema (~0.1 s, as long as reading 20,000
    messages); anything else goes to the schema for its located messages."""
    if not isinstance(section, Mapping) or not set(section) <= _SECTION_KEYS:
        return False
    required, verify = section.get("required", {}), section.get("verify", {})
    forbidden = section.get("forbidden", [])
    maps_ok = all(
        isinstance(m, dict) and all(isinstance(k, str) and _KEY.fullmatch(k) for k in m)
        for m in (required, verify)
    )
    return (
        maps_ok
        and all(isinstance(v, str) for v in required.values())
        and all(v in ("ancestor", "path") for v in verify.values())
        and isinstance(forbidden, list)
        and all(isinstance(k, str) and _KEY.fullmatch(k) for k in forbidden)
        and len(set(forbidden)) == len(forbidden)
        and all(
            type(section[k]) is int and section[k] >= 1
            for k in ("max_changed_files", "max_changed_lines")
            if k in section
        )
    )


def rules_from_config(section: Mapping[str, Any], source: str) -> Rules:
    """Rules from `[tool.fidelity.trailers]`, validated by the shipped schema."""
    problems = []
    if not plainly_valid(section):
        from checkers import schema  # jsonschema: only when the section needs its messages

        problems = [
            f"{source}: [tool.fidelity.trailers]{schema.json_path(path)[1:]}: {msg}"
            for path, msg in schema.errors("checkers", "trailers", dict(section))
        ]
    required: dict[str, re.Pattern[str]] = {}
    for key, pattern in section.get("required", {}).items() if not problems else ():
        try:
            required[key] = re.compile(pattern)
        except re.error as exc:
            problems.append(f"{source}: [tool.fidelity.trailers].required.{key}: bad regex: {exc}")
    if problems:
        raise ConfigError("invalid configuration:\n" + "\n".join(problems))
    return Rules(
        required=required,
        forbidden=tuple(section.get("forbidden", ())),
        verify={k: Verify(v) for k, v in section.get("verify", {}).items()},
        max_changed_files=section.get("max_changed_files"),
        max_changed_lines=section.get("max_changed_lines"),
    )


@dataclass(frozen=True, slots=True)
class Checked:
    where: str  # the message file as given, or the commit's short sha
    subject: str
    trailers: tuple[tuple[str, str], ...]


OK_ROWS_SHOWN = 20


@dataclass(frozen=True, slots=True)
class TrailerReport:
    checked: tuple[Checked, ...]
    findings: tuple[Finding, ...]
    size: tuple[int, int] | None = None  # (files, lines) when the size rule ran
    source: str = ""  # the range or message file checked

    def exit_code(self) -> int:
        """1 on any finding; 3 when no message was checked (an empty range proves nothing)."""
        if not self.checked:
            return 3
        return 1 if self.findings else 0

    def summary(self) -> str:
        if not self.checked:
            return f"nothing checked: {self.source} holds no non-merge commits (exit 3)"
        size = (
            f"; {_n(self.size[0], 'file')}, {_n(self.size[1], 'line')} changed" if self.size else ""
        )
        return f"{_n(len(self.findings), 'finding')} in {_n(len(self.checked), 'message')}{size}"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "checked": [
                {"where": c.where, "subject": c.subject, "trailers": [list(t) for t in c.trailers]}
                for c in self.checked
            ],
            "findings": [f.as_dict() for f in self.findings],
            "size": None if self.size is None else {"files": self.size[0], "lines": self.size[1]},
        }

    def table(self) -> tuple[list[str], list[list[str]]]:
        """A row per finding, and an `ok` row per message that broke no rule: the first
        OK_ROWS_SHOWN of them, then one row counting the rest (the JSON lists every one)."""
        rows = [[f.where, str(f.line), str(f.code), f.message] for f in self.findings]
        bad = {f.where for f in self.findings}
        ok = [c for c in self.checked if c.where not in bad]
        for c in ok[:OK_ROWS_SHOWN]:
            keys = ", ".join(k for k, _ in c.trailers) or "none"
            rows.append([c.where, "", "ok", f"{c.subject} (trailers: {keys})"])
        if len(ok) > OK_ROWS_SHOWN:
            more = len(ok) - OK_ROWS_SHOWN
            rows.append(["...", "", "ok", f"{more} more messages broke no rule (see --json)"])
        return ["where", "line", "code", "message"], rows


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
