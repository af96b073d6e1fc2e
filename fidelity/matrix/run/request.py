"""What `fidelity run` is asked to do, as one typed value: the CLI builds it from its options,
`gate.start`, `gate.resume` and `restart.run` take it, and plan.json records it.

Each field says in its metadata which of four sorts it is, and the rules below follow from
the sort, never from the field's name:

- a side (`baseline`, `candidate`): recorded in plan.json's `sides` with the commit it
  resolved to; named again with `--resume`, it must still resolve to that commit;
- recorded (the table, harness revision, prediction, selection, shard, durations, replay,
  partial): what the run is. Written to plan.json and read back by `--resume`, compared by
  `--resume-if-exists`, refused when given again with `--resume` (a resumed run keeps what it
  began with);
- fresh (`out`): how a fresh run begins; not recorded, refused with `--resume`;
- invocation (`jobs`, `ci`): how this command runs the cases; not recorded, a resume takes
  its own.

So a new run option is a field here (a recorded one also a property of plan.json in the run
schema: a test ties the two), an argparse line, and the code that uses it. What the run
reports to as it goes (progress, early warnings, notes) is `RunHooks`, never recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, Field, dataclass, field, fields, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fidelity.errors import UsageError
from fidelity.matrix.run import shards

if TYPE_CHECKING:
    from fidelity.matrix.verdict.findings import Finding
    from fidelity.progress import Progress


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard k of n, 1 <= k <= n: `--shard` below the CLI (`auto` already read)."""

    k: int
    n: int

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.n:
            raise UsageError(f"shard {self.k}/{self.n} does not exist: give K/N with 1 <= K <= N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N`; UsageError otherwise."""
        return cls(*shards.parse(text))

    @classmethod
    def given(cls, text: str | None, env: Mapping[str, str]) -> Shard | None:
        """`--shard` as given: `K/N`, or `auto` read from the job engine's variables in env."""
        resolved = shards.resolve(text, env)
        return None if resolved is None else cls.parse(resolved)

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


class Sort(StrEnum):
    """What a request field is to plan.json and to a resume (the module's rules)."""

    SIDE = "side"
    RECORDED = "recorded"
    FRESH = "fresh"
    INVOCATION = "invocation"


def _sort(
    sort: Sort,
    flag: str,
    words: str = "",
    key: str = "",
    read: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """A field's metadata: its sort, its command-line flag, what a message calls it (default
    the flag), its key in plan.json (default its name), and how plan.json's value is read."""
    return {"sort": sort, "flag": flag, "words": words or flag, "key": key, "read": read}


def _recorded(flag: str, words: str, **kw: Any) -> dict[str, Any]:
    return _sort(Sort.RECORDED, flag, f"{words} ({flag})" if words else flag, **kw)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One `fidelity run`, as asked: the revisions, the table and what of it to run, and how
    this command runs it. None for a side or the table: the default (HEAD, the table
    `[tool.fidelity]` names), or with `--resume` what the run began with."""

    baseline: str | None = field(default=None, metadata=_sort(Sort.SIDE, "--baseline"))
    candidate: str | None = field(default=None, metadata=_sort(Sort.SIDE, "--candidate"))
    _: KW_ONLY
    cases: str | None = field(
        default=None, metadata=_recorded("--cases", "case table", key="table_path")
    )
    harness_rev: str | None = field(
        default=None, metadata=_recorded("--harness", "harness revision")
    )
    expect: str | None = field(default=None, metadata=_recorded("--expect", "prediction"))
    selectors: tuple[str, ...] = field(
        default=(), metadata=_recorded("--case/--tag", "selection", read=tuple)
    )
    shard: Shard | None = field(
        default=None, metadata=_recorded("--shard", "shard", read=Shard.parse)
    )
    durations: Mapping[str, float] | None = field(
        default=None, metadata=_recorded("--shard-durations", "shard durations", read=dict)
    )
    replay: str | None = field(default=None, metadata=_recorded("--replay", ""))
    partial: bool = field(default=False, metadata=_recorded("--partial", ""))
    out: Path | None = field(default=None, metadata=_sort(Sort.FRESH, "--out"))
    jobs: int = field(default=2, metadata=_sort(Sort.INVOCATION, "--jobs"))
    ci: bool = field(default=False, metadata=_sort(Sort.INVOCATION, "the CI variable"))

    def to_json(self) -> dict[str, Any]:
        """The recorded fields, as plan.json writes them (the sides are the plan's)."""
        return {_key(f): _plain(getattr(self, f.name)) for f in of_sort(Sort.RECORDED)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], baseline: str, candidate: str) -> RunRequest:
        """The request plan.json records (`data` valid by the plan schema; a key an older
        fidelity did not write is its default); ValueError `(key, why)` for a value the
        schema cannot check."""
        given: dict[str, Any] = {}
        for f in of_sort(Sort.RECORDED):
            key, read = _key(f), f.metadata["read"]
            if key not in data:
                continue
            try:
                given[f.name] = read(data[key]) if read and data[key] is not None else data[key]
            except (UsageError, ValueError, TypeError) as exc:
                raise ValueError(key, f"{data[key]!r} is no {f.metadata['words']}: {exc}") from exc
        return cls(baseline, candidate, **given)

    def differences(self, other: RunRequest) -> list[tuple[str, Any, Any]]:
        """(what, mine, other's) for each recorded field the two differ in, as plan.json
        writes them: what makes them two runs."""
        mine, theirs = self.to_json(), other.to_json()
        return [
            (f.metadata["words"], mine[_key(f)], theirs[_key(f)])
            for f in of_sort(Sort.RECORDED)
            if mine[_key(f)] != theirs[_key(f)]
        ]

    def for_resume(self) -> RunRequest:
        """What of this request a resume takes: the sides it names, its jobs and ci."""
        defaults: dict[str, Any] = {f.name: f.default for f in of_sort(Sort.RECORDED, Sort.FRESH)}
        return replace(self, **defaults)

    def check_resumable(self) -> None:
        """UsageError naming the first option a resume cannot take (a recorded one, `--out`):
        a resumed run is the run it began as."""
        kept = self.for_resume()
        for f in of_sort(Sort.RECORDED, Sort.FRESH):
            if getattr(self, f.name) != getattr(kept, f.name):
                flag = f.metadata["flag"]
                raise UsageError(
                    f"a resumed run keeps the {flag} it began with: drop {flag}, or start a "
                    "new run without --resume"
                )

    def resumed_by(self, given: RunRequest) -> RunRequest:
        """This request (as recorded) run again by `given`: the sides given names, given's
        jobs and ci."""
        named = {f.name: getattr(given, f.name) for f in of_sort(Sort.SIDE)}
        taken = {f.name: getattr(given, f.name) for f in of_sort(Sort.INVOCATION)}
        return replace(self, **{k: v for k, v in named.items() if v is not None}, **taken)


def of_sort(*sorts: Sort) -> tuple[Field[Any], ...]:
    """The request's fields of these sorts, in order."""
    return tuple(f for f in fields(RunRequest) if f.metadata.get("sort") in sorts)


def _key(f: Field[Any]) -> str:
    key: str = f.metadata["key"] or f.name
    return key


def _plain(value: Any) -> Any:
    """A field's value as JSON holds it."""
    if isinstance(value, Shard):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


@dataclass(frozen=True, slots=True)
class RunHooks:
    """Who the run reports to as it goes: never part of the request, never recorded."""

    progress: Progress | None = None  # each case run, and how many there are
    warn: Callable[[tuple[Finding, ...]], None] | None = None  # findings sure before any case runs
    note: Callable[[str], None] | None = None  # what a restarted run does first (a line)


NO_HOOKS = RunHooks()
