"""`fidelity stale`: is each keyed record row still current on the reference branch?

A row names the commit it was measured at. It is `unknown` when that names no commit here,
`unlanded` when the commit is not an ancestor of the ref (measured on a branch that never
merged), and `stale` when more than `stale_after` commits touching the watched paths have
landed since; the newest of those are named, so "regrid owed" says what moved. Counting
needs full history: in a shallow clone counts would come out low and rows look fresh, so
that is refused (exit 3) rather than reported. A run that finds no rows also exits 3: an
empty table proves nothing is fresh.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checkers.tables import Table, parse_tables
from fidelity import config, git, schema
from fidelity.errors import UntrustedError, UsageError

DEFAULT_STALE_AFTER = 20
SHA = re.compile(r"[0-9a-f]{7,64}")
NEWEST_SHOWN = 3


class RowStatus(enum.StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    UNLANDED = "unlanded"
    UNKNOWN = "unknown"  # the commit cell names no commit in this repository
    MISSING = "missing"  # the commit cell is empty


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """One `[[tool.fidelity.records]]` entry: which table, which columns, what to watch."""

    path: str  # relative to the repository root, POSIX
    key: str = "row"
    commit_column: str = "commit"
    watch: tuple[str, ...] = ()  # empty: every commit counts
    watch_column: str | None = None  # per-row paths (comma or space separated) override watch
    stale_after: int = DEFAULT_STALE_AFTER


@dataclass(frozen=True, slots=True)
class Row:
    path: str
    line: int
    key: str
    commit: str  # as written, decoration removed
    watch: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RowCheck:
    row: Row
    status: RowStatus
    stale_after: int
    sha: str | None = None
    since: int | None = None  # commits touching the watched paths since sha
    newest: tuple[tuple[str, str], ...] = ()  # (sha, subject) of the newest of those

    @property
    def ok(self) -> bool:
        return self.status is RowStatus.FRESH

    def detail(self) -> str:
        if self.status is RowStatus.UNKNOWN:
            return (
                "names no commit here (a sha of 7+ hex digits is required): fix it, or fetch "
                "the branch it was measured on"
            )
        if self.status is RowStatus.MISSING:
            return f"the {self.row.key!r} row records no commit; re-measure and record it"
        if self.status is RowStatus.UNLANDED:
            return "measured on a commit that is not an ancestor of the ref; re-measure on it"
        if self.status is not RowStatus.STALE:
            return "within limit"
        shown = "; ".join(f"{sha[:10]} {_short(subject)}" for sha, subject in self.newest)
        return f"regrid owed; newest: {shown}" if shown else "regrid owed"


def _short(subject: str, width: int = 48) -> str:
    return subject if len(subject) <= width else subject[: width - 1] + "…"


@dataclass(frozen=True, slots=True)
class StaleReport:
    ref: str
    ref_sha: str
    records: tuple[str, ...]
    checks: tuple[RowCheck, ...]

    def exit_code(self) -> int:
        """1 when any row is not fresh; 3 when there was no row to check."""
        if not self.checks:
            return 3
        return 0 if all(c.ok for c in self.checks) else 1

    def summary(self) -> str:
        if not self.checks:
            return (
                f"nothing to check: no rows in {', '.join(self.records)}; an empty record "
                "proves nothing is fresh (exit 3). Add a measured row, or pass --allow-empty."
            )
        bad = [c for c in self.checks if not c.ok]
        counts = ", ".join(
            f"{sum(c.status is s for c in bad)} {s}"
            for s in RowStatus
            if any(c.status is s for c in bad)
        )
        head = f"{len(self.checks)} rows checked against {self.ref} ({self.ref_sha[:12]})"
        return f"{head}: {counts}" if bad else f"{head}: all fresh"

    def table(self) -> tuple[list[str], list[list[str]]]:
        rows = [
            [
                f"{c.row.path}:{c.row.line}",
                c.row.key,
                c.row.commit[:12],
                str(c.status),
                "" if c.since is None else f"{c.since}/{c.stale_after}",
                c.detail(),
            ]
            for c in self.checks
        ]
        return ["where", "row", "commit", "status", "since/limit", "detail"], rows

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "ref_sha": self.ref_sha,
            "records": list(self.records),
            "rows": [
                {
                    "path": c.row.path,
                    "line": c.row.line,
                    "key": c.row.key,
                    "commit": c.row.commit,
                    "sha": c.sha,
                    "status": str(c.status),
                    "since": c.since,
                    "stale_after": c.stale_after,
                    "watch": list(c.row.watch),
                    "newest": [{"sha": s, "subject": t} for s, t in c.newest],
                }
                for c in self.checks
            ],
        }


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain(cell: str) -> str:
    """A cell's text without link syntax, code backticks or emphasis around it."""
    return _LINK.sub(r"\1", cell).replace("`", "").strip().strip("*_").strip()


def _watch(cell: str) -> tuple[str, ...]:
    return tuple(p for p in re.split(r"[,\s]+", plain(cell)) if p)


def _rows_of(table: Table, spec: RecordSpec) -> list[Row]:
    key_i, commit_i = table.column(spec.key), table.column(spec.commit_column)
    watch_i = table.column(spec.watch_column) if spec.watch_column else None
    assert key_i is not None and commit_i is not None
    rows = []
    for row in table.rows:
        texts = row.texts

        def cell(i: int | None, texts: tuple[str, ...] = texts) -> str:
            return texts[i] if i is not None and i < len(texts) else ""

        own = _watch(cell(watch_i))
        rows.append(
            Row(spec.path, row.line, plain(cell(key_i)), plain(cell(commit_i)), own or spec.watch)
        )
    return rows


def read_rows(text: str, spec: RecordSpec) -> list[Row]:
    """Every row of every table in text that has the spec's key and commit columns."""
    tables = [
        t
        for t in parse_tables(text)
        if t.column(spec.key) is not None and t.column(spec.commit_column) is not None
    ]
    if not tables:
        raise UsageError(
            f"{spec.path}: no table with columns {spec.key!r} and {spec.commit_column!r}; "
            "fix the table's header or the [[tool.fidelity.records]] entry"
        )
    return [row for table in tables for row in _rows_of(table, spec)]


def check_row(repo: Path, ref_sha: str, row: Row, stale_after: int) -> RowCheck:
    """One row's status against ref_sha."""
    if not row.commit:
        return RowCheck(row, RowStatus.MISSING, stale_after)
    # a measurement names a commit by its sha: `HEAD` or a branch name would always be fresh
    sha = git.resolve(repo, row.commit) if SHA.fullmatch(row.commit) else None
    if sha is None:
        return RowCheck(row, RowStatus.UNKNOWN, stale_after)
    if not git.is_ancestor(repo, sha, ref_sha):
        return RowCheck(row, RowStatus.UNLANDED, stale_after, sha)
    since = git.count_commits(repo, [f"{sha}..{ref_sha}"], row.watch)
    newest = git.log_commits(repo, ["-n", str(NEWEST_SHOWN), f"{sha}..{ref_sha}"], row.watch)
    status = RowStatus.STALE if since > stale_after else RowStatus.FRESH
    return RowCheck(row, status, stale_after, sha, since, tuple(newest))


def check(repo: Path, ref: str, specs: Sequence[RecordSpec]) -> StaleReport:
    """Every row of every record against ref; UntrustedError in a shallow clone."""
    ref_sha = git.rev_parse(repo, ref)
    if git.is_shallow(repo):
        raise UntrustedError(
            "the repository is a shallow clone: commits since a row's measurement would be "
            "undercounted. Fetch full history (e.g. actions/checkout with fetch-depth: 0)."
        )
    checks = []
    for spec in specs:
        source = repo / spec.path
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read record {spec.path}: {exc.strerror}") from None
        for row in read_rows(text, spec):
            checks.append(check_row(repo, ref_sha, row, spec.stale_after))
    return StaleReport(ref, ref_sha, tuple(s.path for s in specs), tuple(checks))


def specs_from_config(section: Any, source: str) -> list[RecordSpec]:
    """`[[tool.fidelity.records]]` as specs, validated by the shipped schema."""
    problems = [
        f"{source}: [[tool.fidelity.records]]{schema.json_path(path)[1:]}: {msg}"
        for path, msg in schema.errors("records", section)
    ]
    if problems:
        raise UsageError("invalid configuration:\n" + "\n".join(problems))
    return [
        RecordSpec(
            path=entry["path"],
            key=entry.get("key", "row"),
            commit_column=entry.get("commit_column", "commit"),
            watch=tuple(entry.get("watch", ())),
            watch_column=entry.get("watch_column"),
            stale_after=entry.get("stale_after", DEFAULT_STALE_AFTER),
        )
        for entry in section
    ]


def select(
    configured: Sequence[RecordSpec], wanted: Sequence[str], overrides: Mapping[str, Any]
) -> list[RecordSpec]:
    """The specs for the records asked for (all configured ones when none), with command-line
    overrides applied; a record with no entry gets the defaults."""
    if not wanted and not configured:
        raise UsageError(
            "no records to check: name a record file, or configure [[tool.fidelity.records]] "
            "in pyproject.toml"
        )
    by_path = {spec.path: spec for spec in configured}
    chosen = [by_path.get(w, RecordSpec(w)) for w in wanted] if wanted else list(configured)
    changes = {k: v for k, v in overrides.items() if v is not None}
    return [replace(spec, **changes) for spec in chosen]


def relpath(repo: Path, record: str) -> str:
    """A record named on the command line, as a repository path; UsageError outside it."""
    root = repo.resolve()
    path = Path(record).resolve()  # relative to the working directory when inside the repo
    if not path.is_relative_to(root) and not Path(record).is_absolute():
        path = (root / record).resolve()  # else relative to the repository
    if not path.is_relative_to(root):
        raise UsageError(f"record {record} is outside the repository {repo}")
    return path.relative_to(root).as_posix()


def check_configured(
    repo: Path, ref: str, records: Sequence[str], overrides: Mapping[str, Any]
) -> StaleReport:
    """The records asked for (every configured one when none), checked against ref."""
    section = config.load(repo).get("records", [])
    configured = specs_from_config(section, str(repo / "pyproject.toml"))
    wanted = [relpath(repo, r) for r in records]
    return check(repo, ref, select(configured, wanted, overrides))
