"""`fidelity stale`: is each keyed record row still current on the reference branch?

A row names the commit it was measured at. It is `unknown` when that names no commit here,
`unlanded` when the commit did not land on the ref, `reverted` when it landed and was
undone since (both in the one meaning of `landing`, shared with `fidelity landed`: a row
measured on a pull-request branch that was squash-merged or cherry-picked has landed), and
`stale` when more than `stale_after` commits touching the watched paths have landed since:
non-merge commits on the ref that the measured commit does not contain, the commit that
carried its own patch excepted. The newest of those are named, so a stale row's detail says
what moved since it was measured. Counting needs full history: in a shallow clone counts
would come out low and rows look fresh, so that is refused (exit 3) rather than reported. A
run that finds no rows also exits 3: an empty table proves nothing is fresh.

All rows are answered from one walk of the history (`rev-list --parents`), one listing of
the commits touching each distinct set of watched paths, and the batched landing search;
never a history walk per row. A record path must stay inside the repository (after
symbolic links are followed), and is read as UTF-8, with located errors otherwise.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checkers.tables import Table, parse_tables
from fidelity import config, schema
from fidelity.errors import UsageError
from fidelity.git import log, objects
from fidelity.git.command import GitError
from fidelity.history import landing
from fidelity.text import counted

DEFAULT_STALE_AFTER = 20
SHA = re.compile(r"[0-9a-fA-F]{7,64}")  # git resolves either case
NEWEST_SHOWN = 3


class RowStatus(enum.StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    UNLANDED = "unlanded"
    REVERTED = "reverted"  # landed, then undone on the ref
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
    via: str | None = None  # the commit on the ref that carried its patch (landed-as)
    reverted_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is RowStatus.FRESH

    def detail(self) -> str:
        if self.status is RowStatus.UNKNOWN:
            if SHA.fullmatch(self.row.commit):
                return (
                    "names no commit in this clone: fix it, or fetch the branch it was measured on"
                )
            return (
                "names no commit here (a sha of 7+ hex digits is required): fix it, or fetch "
                "the branch it was measured on"
            )
        if self.status is RowStatus.MISSING:
            return f"the {self.row.key!r} row records no commit; re-measure and record it"
        if self.status is RowStatus.UNLANDED:
            return (
                "measured on a commit that did not land on the ref (not an ancestor, and no "
                "commit there carries its patch); re-measure on the ref"
            )
        if self.status is RowStatus.REVERTED:
            return (
                f"the measured commit landed, then {str(self.reverted_by)[:10]} reverted it; "
                "re-measure on the ref"
            )
        landed = f"landed as {self.via[:10]}; " if self.via else ""
        if self.status is not RowStatus.STALE:
            return f"{landed}within limit"
        shown = "; ".join(f"{sha[:10]} {_short(subject)}" for sha, subject in self.newest)
        newest = f"; newest: {shown}" if shown else ""
        since = "more commits than allowed" if self.since is None else counted(self.since, "commit")
        return (
            f"{landed}{since} touching its watched paths landed since it was measured (limit "
            f"{self.stale_after}): re-measure it and record the new commit{newest}"
        )


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
        head = (
            f"{counted(len(self.checks), 'row')} checked against {self.ref} ({self.ref_sha[:12]})"
        )
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
                    "via": c.via,
                    "reverted_by": c.reverted_by,
                    "detail": c.detail(),  # what the table shows, and what to do
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
    """Every row of every table in text that has the spec's key and commit columns (a byte
    order mark before a header on line 1 is not part of it, as GitHub shows it)."""
    tables = [
        t
        for t in parse_tables(text.removeprefix("\ufeff"))
        if t.column(spec.key) is not None and t.column(spec.commit_column) is not None
    ]
    if not tables:
        raise UsageError(
            f"{spec.path}: no table with columns {spec.key!r} and {spec.commit_column!r}; "
            "fix the table's header or the [[tool.fidelity.records]] entry"
        )
    return [row for table in tables for row in _rows_of(table, spec)]


def _counts(
    walk: landing.Walk, touching: Sequence[tuple[str, str]], rows: Mapping[str, str | None]
) -> dict[str, tuple[int, tuple[tuple[str, str], ...]]]:
    """For each measured sha (-> the commit that carried its patch, if not itself), how many
    of the commits touching the watched paths (newest first) the ref holds and it does
    not, and the newest of them."""
    bit = {sha: 1 << i for i, (sha, _) in enumerate(touching)}
    everything = (1 << len(touching)) - 1
    masks = walk.masks(bit, rows)
    found = {}
    for sha, via in rows.items():
        missing = everything & ~masks.get(sha, 0) & ~bit.get(via or "", 0)
        newest: list[tuple[str, str]] = []
        rest = missing
        while rest and len(newest) < NEWEST_SHOWN:
            low = rest & -rest
            newest.append(touching[low.bit_length() - 1])
            rest ^= low
        found[sha] = (missing.bit_count(), tuple(newest))
    return found


def check_rows(repo: Path, ref_sha: str, rows: Sequence[tuple[Row, int]]) -> list[RowCheck]:
    """Every (row, stale_after) against ref_sha, answered together."""
    named = [r.commit for r, _ in rows if r.commit and SHA.fullmatch(r.commit)]
    names = sorted(set(named))
    resolved = dict(
        zip(names, objects.object_ids(repo, [f"{n}^{{commit}}" for n in names]), strict=True)
    )
    shas = sorted({sha for sha in resolved.values() if sha})
    bases = tuple(log.merge_bases(repo, [ref_sha, *shas]))
    watches = sorted({r.watch for r, _ in rows})
    with ThreadPoolExecutor(max_workers=2) as pool:  # the listings run while landing is found
        listed = {w: pool.submit(log.touching, repo, ref_sha, bases, w) for w in watches}
        walk = landing.Walk.of(repo, ref_sha, shas, bases)
        landings = landing.find(repo, ref_sha, shas, walk)
        touching = {w: future.result() for w, future in listed.items()}
    held = {  # the commit that stands in for a measured one is not a change since it
        s: landings[s].via if landings[s].status is landing.Status.LANDED_AS else None
        for s in shas
        if landings[s].holds
    }
    counted = {w: _counts(walk, touching[w], held) for w in watches}
    return [_one(row, limit, resolved, landings, counted) for row, limit in rows]


def refuse_unwatched(
    repo: Path, ref_sha: str, rows: Sequence[Row], adding: Collection[str] = ()
) -> None:
    """UsageError naming each watched path that no commit of the ref's history touched (a
    typo, `scr/`, kept every row watching it fresh forever) or that git cannot read; once
    per path, before any row is checked. `adding`: the files a change being judged adds or
    changes, where a plain path that first appears there is no typo."""
    first: dict[str, Row] = {}
    for row in rows:
        for path in row.watch:
            plain = path.rstrip("/")
            if not any(f == plain or f.startswith(plain + "/") for f in adding):
                first.setdefault(path, row)
    problems = []
    for path, row in sorted(first.items()):
        where = f"{row.path}:{row.line}: row {row.key!r} watches {path!r}"
        try:
            if log.last_change(repo, ref_sha, path) is None:
                problems.append(f"{where}, which no commit of {ref_sha[:10]}'s history touched")
        except GitError as exc:
            said = str(exc).rpartition("fatal: ")[2] or str(exc)
            problems.append(f"{where}, which git cannot read as a pathspec ({said})")
    if problems:
        raise UsageError(
            "\n".join(problems) + "\nsuch a row could never go stale: fix the path in the "
            "record's watch (its [[tool.fidelity.records]] entry, or the row's watch cell)"
        )


def check_row(repo: Path, ref_sha: str, row: Row, stale_after: int) -> RowCheck:
    """One row alone (preflight asks row by row); `check_rows` answers many at once."""
    return check_rows(repo, ref_sha, [(row, stale_after)])[0]


def _one(
    row: Row,
    limit: int,
    resolved: Mapping[str, str | None],
    landings: Mapping[str, landing.Landing],
    counted: Mapping[tuple[str, ...], Mapping[str, tuple[int, tuple[tuple[str, str], ...]]]],
) -> RowCheck:
    if not row.commit:
        return RowCheck(row, RowStatus.MISSING, limit)
    # a measurement names a commit by its sha: `HEAD` or a branch name would always be fresh
    sha = resolved.get(row.commit) if SHA.fullmatch(row.commit) else None
    if sha is None:
        return RowCheck(row, RowStatus.UNKNOWN, limit)
    found = landings[sha]
    if found.status is landing.Status.UNLANDED:
        return RowCheck(row, RowStatus.UNLANDED, limit, sha)
    if found.status is landing.Status.REVERTED:
        return RowCheck(row, RowStatus.REVERTED, limit, sha, reverted_by=found.reverted_by)
    since, newest = counted[row.watch][sha]
    status = RowStatus.STALE if since > limit else RowStatus.FRESH
    return RowCheck(row, status, limit, sha, since, newest, found.via)


def read_record(repo: Path, path: str) -> str:
    """A record's text; UsageError, located, when it lies outside the repository (also
    through a symbolic link), loops, cannot be read or is not UTF-8. Never parsed then."""
    root = repo.resolve()
    try:
        target = (root / path).resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before 3.13
        why = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"cannot read record {path}: {why}") from None
    if not target.is_relative_to(root):
        raise UsageError(
            f"record {path} resolves to {target}, outside the repository {root}; a record "
            "must be a file of the repository"
        )
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read record {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(
            f"{path}:{line}:{col}: not UTF-8 (byte 0x{data[exc.start]:02x}); save the record "
            "as UTF-8"
        ) from None


def check(repo: Path, ref: str, specs: Sequence[RecordSpec]) -> StaleReport:
    """Every row of every record against ref; UntrustedError in a shallow clone."""
    ref_sha = objects.rev_parse(repo, ref)
    landing.refuse_shallow(repo)
    rows = []
    for spec in specs:
        for row in read_rows(read_record(repo, spec.path), spec):
            rows.append((row, spec.stale_after))
    refuse_unwatched(repo, ref_sha, [r for r, _ in rows])
    checks = check_rows(repo, ref_sha, rows) if rows else []
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
    """A record named on the command line, as a repository path; UsageError outside it
    (after following symbolic links) or when its path cannot be resolved."""
    root = repo.resolve()
    try:
        path = Path(record).resolve()  # relative to the working directory when inside
        if not path.is_relative_to(root) and not Path(record).is_absolute():
            path = (root / record).resolve()  # else relative to the repository
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before 3.13
        raise UsageError(f"cannot resolve record {record}: {exc}") from None
    if not path.is_relative_to(root):
        raise UsageError(
            f"record {record} is outside the repository {repo} (symbolic links followed); "
            "name a file of the repository"
        )
    return path.relative_to(root).as_posix()


def check_configured(
    repo: Path, ref: str, records: Sequence[str], overrides: Mapping[str, Any]
) -> StaleReport:
    """The records asked for (every configured one when none), checked against ref."""
    section = config.load(repo).get("records", [])
    configured = specs_from_config(section, str(repo / "pyproject.toml"))
    wanted = [relpath(repo, r) for r in records]
    return check(repo, ref, select(configured, wanted, overrides))
