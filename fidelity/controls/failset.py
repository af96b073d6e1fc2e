"""The failing-set gate: the SET of failing tests against a recorded baseline, both ways.

A count can stay equal while one failure is swapped for another; the set cannot. A repaired
(or vanished) baseline failure also turns the gate red until the baseline is re-recorded,
so that the repaired test can never fail again unnoticed. Given several runs of one side,
a test that both fails and passes is `flaky`: reported apart, never new and never repaired.
Ids are compared by `junit_read.canonical`, so node ids and JUnit class names agree.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fidelity import __version__, schema
from fidelity.controls import junit as junit_read
from fidelity.controls.junit import Outcome, Suite, canonical
from fidelity.errors import UntrustedError, UsageError

_BAD = (Outcome.FAILED, Outcome.ERROR)


@dataclass(frozen=True, slots=True)
class Sides:
    """One side's tests across its runs, each classed once."""

    failing: frozenset[str] = frozenset()
    passing: frozenset[str] = frozenset()
    flaky: frozenset[str] = frozenset()
    collection_errors: frozenset[str] = frozenset()
    seen: frozenset[str] = frozenset()


def classify_runs(suites: Sequence[Suite]) -> Sides:
    """Pure: failing in every run that ran it, passing, or flaky (failed and passed)."""
    outcomes: dict[str, set[Outcome]] = {}
    for suite in suites:
        for tid, result in suite.results.items():
            outcomes.setdefault(tid, set()).add(result.outcome)
    failing, passing, flaky, collection = set(), set(), set(), set()
    for tid, seen in outcomes.items():
        bad, good = bool(seen & set(_BAD)), Outcome.PASSED in seen
        if Outcome.COLLECTION in seen:
            collection.add(tid)
        elif bad and good:
            flaky.add(tid)
        elif bad:
            failing.add(tid)
        elif good:
            passing.add(tid)
    return Sides(*map(frozenset, (failing, passing, flaky, collection, outcomes)))


@dataclass(frozen=True, slots=True)
class FailSet:
    failing: tuple[str, ...]
    collection_errors: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)


def _file_entry(path: Path) -> dict[str, str]:
    return {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _revision(repo: Path) -> dict[str, Any]:
    from fidelity.git import objects, worktrees

    try:
        top = worktrees.toplevel(repo)
    except UsageError:
        return {"revision": None, "dirty": None}
    return {"revision": objects.resolve(top, "HEAD"), "dirty": bool(worktrees.dirty_paths(top))}


def record(runs: Sequence[Sequence[Path]], command: str, repo: Path) -> FailSet:
    """Read every run's JUnit files into a baseline; UntrustedError when no test ran."""
    suites = [junit_read.read(files) for files in runs]
    sides = classify_runs(suites)
    if not sides.seen:
        raise UntrustedError("the JUnit reports hold no test: nothing to record")
    counts = {
        "tests": len(sides.seen),
        "failing": len(sides.failing),
        "passing": len(sides.passing),
        "flaky": len(sides.flaky),
        "collection_errors": len(sides.collection_errors),
        "runs": len(runs),
    }
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    provenance = {
        **_revision(repo),
        "command": command,
        "tool": f"fidelity {__version__}",
        "recorded_at": now,
        "files": [[_file_entry(p) for p in files] for files in runs],
    }
    return FailSet(
        tuple(sorted(sides.failing)),
        tuple(sorted(sides.collection_errors)),
        tuple(sorted(sides.flaky)),
        counts,
        provenance,
    )


def to_json(fs: FailSet) -> dict[str, Any]:
    return {
        "version": 1,
        "failing": list(fs.failing),
        "collection_errors": list(fs.collection_errors),
        "flaky": list(fs.flaky),
        "counts": dict(fs.counts),
        "provenance": dict(fs.provenance),
    }


def text(fs: FailSet) -> str:
    """The recorded baseline as the file `failset record --out` writes."""
    return json.dumps(to_json(fs), indent=2) + "\n"


def record_line(fs: FailSet, path: Path) -> str:
    c = fs.counts
    return (
        f"recorded {path}: {c['failing']} failing, {c['collection_errors']} collection "
        f"errors, {c['flaky']} flaky of {c['tests']} tests over {c['runs']} run(s) at "
        f"{str(fs.provenance.get('revision') or 'no revision')[:12]}"
    )


def load(path: Path) -> FailSet:
    """A recorded baseline; UsageError naming the file and JSON path of a bad value."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise UsageError(f"cannot read baseline {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON: {exc}") from exc
    problems = [f"at {schema.json_path(p)}: {m}" for p, m in schema.errors("failset", data)]
    if problems:
        raise UsageError(f"invalid failing-set baseline {path}:\n  " + "\n  ".join(problems))
    return FailSet(
        tuple(data["failing"]),
        tuple(data.get("collection_errors", ())),
        tuple(data.get("flaky", ())),
        data.get("counts", {}),
        data.get("provenance", {}),
    )


CATEGORIES = (
    ("new-failure", "fails now, not in the baseline"),
    ("new-collection-error", "cannot be collected now"),
    ("repaired", "baseline failure that passes now: re-record the baseline"),
    ("vanished", "baseline failure that did not run: re-record the baseline"),
    ("collection-cleared", "baseline collection error that is gone: re-record the baseline"),
    ("flaky", "failed and passed across runs: reported apart"),
    ("still-failing", "in the baseline and still failing"),
)
RED = frozenset(
    {"new-failure", "new-collection-error", "repaired", "vanished", "collection-cleared"}
)


@dataclass(frozen=True, slots=True)
class Diff:
    """Test ids per category; `tests` is how many the current runs saw."""

    found: Mapping[str, tuple[str, ...]]
    tests: int
    runs: int

    def exit_code(self) -> int:
        if not self.tests:
            return 3
        return 1 if any(self.found.get(c) for c in RED) else 0

    def table(self) -> tuple[list[str], list[list[str]]]:
        rows = [[cat, tid] for cat, _ in CATEGORIES for tid in self.found.get(cat, ())]
        return ["category", "test"], rows

    def to_json(self) -> dict[str, Any]:
        return {
            "tests": self.tests,
            "runs": self.runs,
            "categories": {c: list(self.found.get(c, ())) for c, _ in CATEGORIES},
        }

    def summary(self) -> str:
        if not self.tests:
            return "UNTRUSTED: the JUnit reports hold no test; nothing compared (exit 3)"
        parts = ", ".join(f"{len(self.found.get(c, ()))} {c}" for c, _ in CATEGORIES)
        code = self.exit_code()
        head = "HOLDS: the failing set is the baseline's" if code == 0 else "CHANGED"
        hint = ""
        new = any(self.found.get(c) for c in ("new-failure", "new-collection-error"))
        gone = any(self.found.get(c) for c in ("repaired", "vanished", "collection-cleared"))
        if new and gone:  # re-recording now would take the new failures in as known
            hint = "; fix the new failures first, then re-record the baseline"
        elif new:  # once they are fixed, the set is the baseline's again
            hint = "; fix the new failures (the baseline stays as it is)"
        elif gone:
            hint = "; re-record the baseline with `fidelity failset record`"
        return f"{head}: {parts} over {self.tests} tests, {self.runs} run(s){hint} (exit {code})"


def _pick(ids: Iterable[str], keys: set[str]) -> tuple[str, ...]:
    return tuple(sorted(i for i in ids if canonical(i) in keys))


def compare(base: FailSet, now: Sides, runs: int) -> Diff:
    """Pure: the current side's classes against the baseline, by canonical id."""
    key = {
        name: {canonical(i) for i in ids}
        for name, ids in (
            ("failing", now.failing),
            ("passing", now.passing),
            ("flaky", now.flaky),
            ("collection", now.collection_errors),
            ("seen", now.seen),
            ("b_failing", base.failing),
            ("b_flaky", base.flaky),
            ("b_collection", base.collection_errors),
        )
    }
    flaky = key["flaky"] | (key["b_flaky"] & key["seen"])
    found = {
        "new-failure": _pick(now.failing, key["failing"] - key["b_failing"] - flaky),
        "new-collection-error": _pick(
            now.collection_errors, key["collection"] - key["b_collection"]
        ),
        "repaired": _pick(base.failing, (key["b_failing"] & key["passing"]) - flaky),
        # not run: absent, or skipped (a skip is seen, but `@skip` must not hide a failure)
        "vanished": _pick(base.failing, key["b_failing"] - key["failing"] - key["passing"] - flaky),
        "collection-cleared": _pick(base.collection_errors, key["b_collection"] - key["seen"]),
        "flaky": _pick(now.seen, flaky),
        "still-failing": _pick(now.failing, key["failing"] & key["b_failing"]),
    }
    return Diff(found, len(now.seen), runs)


def diff(base: FailSet, runs: Sequence[Sequence[Path]]) -> Diff:
    return compare(base, classify_runs([junit_read.read(files) for files in runs]), len(runs))
