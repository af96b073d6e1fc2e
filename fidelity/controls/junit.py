"""Read JUnit XML (pytest `--junitxml`, or any runner that writes it) into test outcomes.

Several files merge into one result, so a sharded or split suite reads as one run. Test ids
are pytest node ids when the file carries `file` attributes (pytest's `xunit1` family, which
the controls runner asks for) and `classname::name` otherwise; `canonical` maps both forms
to one key, so an expected node id matches either. Collection errors are their own outcome.
Each failure also says how it failed (`failkinds`).
"""

from __future__ import annotations

import enum
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fidelity.controls import failkinds
from fidelity.controls.failkinds import Failure
from fidelity.errors import UntrustedError
from fidelity.plugins.fidelity_testids import canonical as canonical  # one key for all forms


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # an error outside the assertion: setup, teardown
    SKIPPED = "skipped"
    COLLECTION = "collection-error"  # the module could not even be collected


# when an id repeats (overlapping shards, reruns) the worse outcome wins
_RANK = {
    Outcome.PASSED: 0,
    Outcome.SKIPPED: 1,
    Outcome.FAILED: 2,
    Outcome.ERROR: 3,
    Outcome.COLLECTION: 4,
}


@dataclass(frozen=True, slots=True)
class TestResult:
    __test__ = False  # not a pytest test class

    id: str
    outcome: Outcome
    message: str = ""
    failure: Failure | None = None  # how a failed or erroring test failed


@dataclass(frozen=True, slots=True)
class Suite:
    """One run's results by test id, merged from every file given."""

    results: Mapping[str, TestResult]
    files: tuple[str, ...] = ()

    def ids(self, *outcomes: Outcome) -> frozenset[str]:
        return frozenset(i for i, r in self.results.items() if r.outcome in outcomes)

    @property
    def failing(self) -> frozenset[str]:
        """Every test that failed or errored (collection errors excluded)."""
        return self.ids(Outcome.FAILED, Outcome.ERROR)

    @property
    def collection_errors(self) -> frozenset[str]:
        return self.ids(Outcome.COLLECTION)

    def counts(self) -> dict[str, int]:
        found = {str(o): 0 for o in Outcome}
        for r in self.results.values():
            found[str(r.outcome)] += 1
        return {"tests": len(self.results), **found}


class JUnitError(UntrustedError):
    """A JUnit file that cannot be read: the run's evidence is untrusted (exit 3)."""


def node_id(classname: str, name: str, file: str | None) -> str:
    """The node id when the file is known; `classname::name` otherwise."""
    if not classname:  # a collection error names the module in `name`
        return file or name
    if file and file.endswith(".py"):
        module = file[:-3].replace("/", ".")
        inner = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
        return "::".join([file, *filter(None, inner.split(".")), name])
    return f"{classname}::{name}"


def _failure(case: ET.Element, child: ET.Element, message: str) -> Failure:
    for prop in case.iter("property"):
        if prop.get("name") == failkinds.PROPERTY:
            return failkinds.from_property(prop.get("value", ""))
    return failkinds.from_junit(child.get("type", ""), message)


def _outcome(case: ET.Element) -> tuple[Outcome, str, Failure | None]:
    for tag, outcome in (("failure", Outcome.FAILED), ("error", Outcome.ERROR)):
        child = case.find(tag)
        if child is not None:
            message = child.get("message", "") or (child.text or "").strip()[:200]
            if outcome is Outcome.ERROR and not case.get("classname"):
                lines = [x.strip() for x in (child.text or "").splitlines() if x.strip()]
                return Outcome.COLLECTION, (lines[-1][:300] if lines else message), None
            return outcome, message, _failure(case, child, message)
    if case.find("skipped") is not None:
        return Outcome.SKIPPED, "", None
    return Outcome.PASSED, "", None


def parse_bytes(data: bytes, source: str) -> list[TestResult]:
    """Every <testcase> in one document, in document order."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise JUnitError(f"{source}: not JUnit XML ({exc}); was the run cut short?") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"{source}: root element <{root.tag}>, expected <testsuites>")
    found = []
    for case in root.iter("testcase"):
        outcome, message, failure = _outcome(case)
        tid = node_id(case.get("classname", ""), case.get("name", ""), case.get("file"))
        found.append(TestResult(tid, outcome, message, failure))
    return found


def merge(results: Iterable[TestResult], files: tuple[str, ...] = ()) -> Suite:
    """One suite; a test reported twice (shards overlap, reruns) keeps its worst outcome."""
    merged: dict[str, TestResult] = {}
    for r in results:
        old = merged.get(r.id)
        if old is None or _RANK[r.outcome] > _RANK[old.outcome]:
            merged[r.id] = r
    return Suite(dict(sorted(merged.items())), files)


def read(paths: Iterable[Path]) -> Suite:
    """Read and merge JUnit files; JUnitError when one is missing or unreadable."""
    found: list[TestResult] = []
    names = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise JUnitError(f"cannot read JUnit file {path}: {exc.strerror}") from exc
        found += parse_bytes(data, str(path))
        names.append(str(path))
    return merge(found, tuple(names))
