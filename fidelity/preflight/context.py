"""What every gate is handed, and how a gate is declared."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fidelity.errors import UsageError
from fidelity.preflight.outcome import GateResult, Status
from fidelity.preflight.settings import Settings
from fidelity.preflight.tree import Changes, Tree

PYPROJECT = "pyproject.toml"


@dataclass(frozen=True, slots=True)
class Merge:
    """A merge whose record rows are judged: its parents, and the merge commit (None when
    the merge is the judged content, waiting to be committed). `bases` fixes each step's
    merge bases (a cherry-pick's is its parent); by default git is asked. `labels` name
    the parents in findings; `remedy` says what to do when the merge lost a row."""

    label: str
    parents: tuple[str, ...]
    commit: str | None = None
    bases: tuple[tuple[str, ...], ...] | None = None
    labels: tuple[str, ...] | None = None
    remedy: str = ""


@dataclass(frozen=True, slots=True)
class Context:
    """The judged content, its change, and `[tool.fidelity]` as that content holds it."""

    repo: Path
    tree: Tree
    changes: Changes
    tool: Mapping[str, Any]
    settings: Settings
    parent: str | None  # the commit the judged content would sit on (None: no commit yet)
    message: Path | None = None  # the commit message file, when one is judged
    partial: bool = False  # the message file holds only the trailers the commit adds
    merges: tuple[Merge, ...] = ()  # merges the judged change makes or brings
    span: tuple[str, str] | None = None  # (from, to) commits of a judged range

    def path_setting(self, key: str, default: str) -> str:
        """A path setting of `[tool.fidelity]` (the case table's, the control table's)."""
        value = self.tool.get(key, default)
        if not isinstance(value, str) or not value:
            raise UsageError(f"{PYPROJECT}: [tool.fidelity] {key} must be a non-empty string")
        return value

    def config_touched(self) -> bool:
        return self.changes.touched(PYPROJECT)


@dataclass(frozen=True, slots=True)
class Plan:
    """Whether a gate runs on this change: `skip` is None when it runs, else why not."""

    why: str
    skip: Status | None = None

    @property
    def runs(self) -> bool:
        return self.skip is None


def skip_unconfigured(why: str) -> Plan:
    return Plan(why, Status.NOT_CONFIGURED)


def skip_unchanged(why: str) -> Plan:
    return Plan(why, Status.NOT_APPLICABLE)


@dataclass(frozen=True, slots=True)
class Gate:
    """A gate, one row of `gates.GATES`: its name, what it judges, when it applies (a Plan
    whose `skip` says why not), and the check itself, run only when it applies."""

    name: str
    what: str
    applies: Callable[[Context], Plan]
    check: Callable[[Context], GateResult]
