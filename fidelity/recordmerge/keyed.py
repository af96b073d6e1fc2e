"""Three-way merge of keyed Markdown tables by key (pure; git's text merge is passed in).

A keyed table is a top-level GFM table whose header has the key column and whose rows all
carry a distinct, non-empty key. Tables are matched across the three versions by (heading,
key column, how many such tables came before). Each matched table is replaced by a
placeholder line, the rest of the file is merged by git's own merge, and the tables are
merged row by row: rows added on either side are kept, a row changed on one side takes that
change, a row deleted on one side and untouched on the other goes, and a key changed (or
added) differently on both sides, or changed on one side and deleted on the other, is a
conflict, marked around that row. Row order follows the side that reordered, else ours,
with the other side's additions placed after the row they followed there.

The result checks itself before it is returned: every table it merged holds exactly the
keys computed for it, once each. A merge that cannot be done this way (placeholders lost in
a conflict, or the self-check failing) falls back to git's merge of the whole file, which
is then checked for duplicated keys and lost rows, reported as conflicts.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from checkers.tables import Table, parse_tables

TextMerge = Callable[[str, str, str], tuple[str, int]]
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
Ident = tuple[str | None, str, int]


@dataclass(frozen=True, slots=True)
class KeyedTable:
    """A keyed table's place in its text and its lines as written (without line endings)."""

    ident: Ident
    start: int  # 0-based index of the header line
    end: int  # exclusive
    head: tuple[str, str]  # header and delimiter lines
    rows: tuple[tuple[str, str], ...]  # (key, line)
    eol: str  # the line ending the table uses
    closed: bool = True  # False when its last line ends the file without a line ending

    @property
    def lines(self) -> tuple[str, ...]:
        return (*self.head, *(line for _, line in self.rows))

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.rows)


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    conflicts: int
    notes: tuple[str, ...] = ()


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where markdown-it counts lines (\\n, \\r\\n, \\r)."""
    return _LINE.findall(text)


def _strip(line: str) -> str:
    return line.rstrip("\r\n")


def key_column(table: Table, keys: Sequence[str]) -> tuple[str, int] | None:
    """The first of keys that heads a column of table, and that column's index."""
    for key in keys:
        index = table.column(key)
        if index is not None:
            return key, index
    return None


def keyed_tables(text: str, keys: Sequence[str]) -> list[KeyedTable]:
    """The keyed tables of text that can be merged by key, in document order."""
    lines = split_lines(text)
    found: list[KeyedTable] = []
    seen: Counter[tuple[str | None, str]] = Counter()
    for table in parse_tables(text):
        column = key_column(table, keys)
        if column is None:
            continue
        key, index = column
        seen[(table.heading, key)] += 1
        ident = (table.heading, key, seen[(table.heading, key)])
        start = table.header.line - 1
        end = start + 2 + len(table.rows)
        rows = tuple(
            (row.texts[index] if index < row.cell_count else "", _strip(lines[row.line - 1]))
            for row in table.rows
        )
        top_level = all(
            _strip(lines[row.line - 1]).strip() == row.source for row in (table.header, *table.rows)
        )
        contiguous = all(row.line == table.header.line + 2 + i for i, row in enumerate(table.rows))
        keys_ok = all(rows_key for rows_key, _ in rows) and len({k for k, _ in rows}) == len(rows)
        if not (top_level and contiguous and keys_ok and end <= len(lines)):
            continue
        head = (_strip(lines[start]), _strip(lines[start + 1]))
        eol = lines[start][len(head[0]) :] or "\n"
        closed = lines[end - 1] != _strip(lines[end - 1])
        found.append(KeyedTable(ident, start, end, head, rows, eol, closed))
    return found


@dataclass(frozen=True, slots=True)
class Markers:
    ours: str
    theirs: str
    size: int = 7

    def block(self, ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
        return [
            f"{'<' * self.size} {self.ours}",
            *ours,
            "=" * self.size,
            *theirs,
            f"{'>' * self.size} {self.theirs}",
        ]


def _row_value(
    o: dict[str, str], a: dict[str, str], b: dict[str, str], k: str
) -> tuple[str | None, bool]:
    """(the merged row or None when it goes, conflict?) for one key."""
    ra, rb, ro = a.get(k), b.get(k), o.get(k)
    if ra == rb:
        return ra, False
    if ra == ro:
        return rb, False
    if rb == ro:
        return ra, False
    return None, True


def _reordered(base: Sequence[str], side: Sequence[str]) -> bool:
    common = set(base) & set(side)
    return [k for k in base if k in common] != [k for k in side if k in common]


def _order(o: Sequence[str], a: Sequence[str], b: Sequence[str], keep: set[str]) -> list[str]:
    """The merged row order: the primary side's kept rows, then each of the other side's
    additions after the row it followed there (past the rows the primary side added at that
    place). A linked list: each insertion walks only the primary-side additions right after
    the row it follows, and each row is followed once, so the order costs linear time."""
    primary, secondary = (b, a) if _reordered(o, b) and not _reordered(o, a) else (a, b)
    first = [k for k in primary if k in keep]
    after: dict[str | None, str | None] = dict(zip([None, *first], [*first, None], strict=True))
    in_secondary = set(secondary)
    before: str | None = None  # the last kept row of secondary so far (None: the top)
    for k in secondary:
        if k not in keep:
            continue
        if k not in after:
            at = before
            while (follower := after[at]) is not None and follower not in in_secondary:
                at = follower  # after the rows the primary side added there
            after[k], after[at] = follower, k
        before = k
    order, at = [], after[None]
    while at is not None:
        order.append(at)
        at = after[at]
    return order


def merge_table(
    o: KeyedTable, a: KeyedTable, b: KeyedTable, markers: Markers
) -> tuple[list[str], list[str], tuple[str, ...]]:
    """(lines, conflict notes, the keys the merged table holds)."""
    if a.lines == o.lines:
        return list(b.lines), [], b.keys
    if b.lines in (o.lines, a.lines):
        return list(a.lines), [], a.keys
    where = f"table under {o.ident[0]!r}" if o.ident[0] else "table"
    if not (a.head == b.head == o.head):
        note = f"{where}: its header changed on a side while both sides changed it; merge by hand"
        return markers.block(a.lines, b.lines), [note], ()
    ro, ra, rb = dict(o.rows), dict(a.rows), dict(b.rows)
    rows: dict[str, list[str]] = {}
    notes = []
    for k in {*ro, *ra, *rb}:
        value, conflict = _row_value(ro, ra, rb, k)
        if conflict:
            ours, theirs = [ra[k]] if k in ra else [], [rb[k]] if k in rb else []
            rows[k] = markers.block(ours, theirs)
            notes.append(
                f"{where}: row {k!r} changed differently on both sides (or changed and deleted)"
            )
        elif value is not None:
            rows[k] = [value]
    order = _order(o.keys, a.keys, b.keys, set(rows))
    kept = tuple(k for k in order if len(rows[k]) == 1)
    return [*a.head, *(line for k in order for line in rows[k])], sorted(notes), kept


def _nonce(*texts: str) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:20]


def _hollow(text: str, tables: dict[Ident, KeyedTable], marks: dict[Ident, str]) -> str:
    """text with each matched table replaced by its placeholder line."""
    lines = split_lines(text)
    for table in sorted(tables.values(), key=lambda t: t.start, reverse=True):
        lines[table.start : table.end] = [marks[table.ident] + "\n"]
    return "".join(lines)


def merge(
    base: str,
    ours: str,
    theirs: str,
    keys: Sequence[str],
    text_merge: TextMerge,
    *,
    markers: Markers = Markers("ours", "theirs"),
) -> Merged:
    """ours, base and theirs merged, keyed tables by key (see the module docstring)."""
    versions = [{t.ident: t for t in keyed_tables(text, keys)} for text in (base, ours, theirs)]
    common = [i for i in versions[1] if i in versions[0] and i in versions[2]]
    if not common:
        named = " or ".join(repr(k) for k in keys) or "no column"
        why = f"no table keyed by {named} is in base, ours and theirs alike"
        return _fallback(base, ours, theirs, keys, text_merge, why=why)
    nonce = _nonce(base, ours, theirs)
    marks = {
        ident: f"<!-- fidelity merge-records {nonce} table {n} -->"
        for n, ident in enumerate(common)
    }
    hollow = [
        _hollow(text, {i: v[i] for i in common}, marks)
        for text, v in zip((base, ours, theirs), versions, strict=True)
    ]
    text, conflicts = text_merge(*hollow)
    lines = split_lines(text)
    ident_of = {mark: ident for ident, mark in marks.items()}
    at: dict[Ident, list[int]] = {ident: [] for ident in marks}
    for i, line in enumerate(lines):
        if (ident := ident_of.get(_strip(line))) is not None:
            at[ident].append(i)
    if any(len(places) != 1 for places in at.values()):
        why = "git's merge of the text around a table could not place it once"
        return _fallback(base, ours, theirs, keys, text_merge, why=why)
    notes: list[str] = []
    expected: dict[Ident, tuple[str, ...]] = {}
    for ident in common:
        o, a, b = (v[ident] for v in versions)
        table_lines, table_notes, kept = merge_table(o, a, b, markers)
        notes += table_notes
        conflicts += len(table_notes)
        expected[ident] = kept
        (i,) = at[ident]
        eol = b.eol if a.eol == o.eol != b.eol else a.eol  # one side changed them: theirs
        lines[i] = "".join(line + eol for line in table_lines)
        if not a.closed and i == len(lines) - 1:
            lines[i] = lines[i][: -len(eol)]
    merged = "".join(lines)
    if not notes and conflicts == 0 and not _holds(merged, keys, expected):
        why = "the tables merged by key did not hold the rows they should"
        return _fallback(base, ours, theirs, keys, text_merge, why=why)
    return Merged(merged, conflicts, tuple(notes))


def _holds(text: str, keys: Sequence[str], expected: dict[Ident, tuple[str, ...]]) -> bool:
    """The self-check: each merged table holds exactly its computed keys, once each."""
    found = {t.ident: t.keys for t in keyed_tables(text, keys)}
    return all(sorted(found.get(ident, ())) == sorted(want) for ident, want in expected.items())


def _all_keys(text: str, keys: Sequence[str]) -> Counter[str]:
    """Every key of every table with a key column (keyed-mergeable or not)."""
    counts: Counter[str] = Counter()
    for table in parse_tables(text):
        column = key_column(table, keys)
        if column is not None:
            index = column[1]
            counts.update(
                r.texts[index] for r in table.rows if index < r.cell_count and r.texts[index]
            )
    return counts


def _fallback(
    base: str, ours: str, theirs: str, keys: Sequence[str], text_merge: TextMerge, *, why: str
) -> Merged:
    """git's merge of the whole file; a clean result that duplicated a key or lost a row
    both sides kept is a conflict all the same. A conflict says why it was not merged by
    key (a file both sides added has no base rows; a key column no table has)."""
    text, conflicts = text_merge(base, ours, theirs)
    if conflicts:
        return Merged(text, conflicts, (f"merged as text by git, not by key: {why}",))
    if not keys:
        return Merged(text, conflicts)
    got, a, b = (_all_keys(t, keys) for t in (text, ours, theirs))
    notes = [
        f"git's merge kept {n} rows with key {k!r}"
        for k, n in sorted(got.items())
        if n > max(a[k], b[k], 1)
    ]
    lost = sorted((set(a) & set(b)) - set(got))
    notes += [f"git's merge lost the row {k!r} that both sides kept" for k in lost]
    return Merged(text, len(notes), tuple(notes))
