"""Reading JUnit XML: node ids from pytest's own reports, both id forms, shards, bad files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fidelity.controls.junit import (
    JUnitError,
    Outcome,
    canonical,
    merge,
    node_id,
    parse_bytes,
    read,
)

PROJECT = {
    "tests/test_a.py": """import pytest


def test_ok():
    pass


def test_bad():
    assert 1 == 2


class TestC:
    @pytest.mark.parametrize("v", ["a.b", "c/d"])
    def test_p(self, v):
        assert v != "c/d"


@pytest.fixture
def boom():
    raise RuntimeError("setup")


def test_err(boom):
    pass


@pytest.mark.skip
def test_skip():
    pass
""",
    "tests/test_coll.py": "import no_such_module_zz\n",
}


@pytest.fixture(scope="module")
def pytest_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "junit_family=xunit1",
            "--continue-on-collection-errors",
            "--junitxml=report.xml",
        ],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return root / "report.xml"


def test_pytest_report_reads_as_node_ids(pytest_report: Path) -> None:
    suite = read([pytest_report])
    outcomes = {tid: r.outcome for tid, r in suite.results.items()}
    assert outcomes == {
        "tests/test_a.py::test_ok": Outcome.PASSED,
        "tests/test_a.py::test_bad": Outcome.FAILED,
        "tests/test_a.py::TestC::test_p[a.b]": Outcome.PASSED,
        "tests/test_a.py::TestC::test_p[c/d]": Outcome.FAILED,
        "tests/test_a.py::test_err": Outcome.ERROR,
        "tests/test_a.py::test_skip": Outcome.SKIPPED,
        "tests/test_coll.py": Outcome.COLLECTION,
    }
    assert suite.failing == {
        "tests/test_a.py::test_bad",
        "tests/test_a.py::TestC::test_p[c/d]",
        "tests/test_a.py::test_err",
    }
    assert suite.collection_errors == {"tests/test_coll.py"}
    assert suite.counts()["tests"] == 7


XUNIT2 = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2">
<testcase classname="tests.test_a.TestC" name="test_p[c/d]"><failure message="boom"/></testcase>
<testcase classname="tests.test_a" name="test_ok"/>
</testsuite></testsuites>"""


def test_without_file_attributes_ids_are_class_names_and_match_node_ids() -> None:
    found = {r.id: r.outcome for r in parse_bytes(XUNIT2, "x.xml")}
    assert found == {
        "tests.test_a.TestC::test_p[c/d]": Outcome.FAILED,
        "tests.test_a::test_ok": Outcome.PASSED,
    }
    assert canonical("tests/test_a.py::TestC::test_p[c/d]") == canonical(
        "tests.test_a.TestC::test_p[c/d]"
    )


def test_shards_merge_and_a_repeated_test_keeps_its_worst_outcome(tmp_path: Path) -> None:
    one = b'<testsuite><testcase classname="m" name="t"/><testcase classname="m" name="u"/></testsuite>'
    two = b'<testsuite><testcase classname="m" name="t"><failure/></testcase></testsuite>'
    (tmp_path / "1.xml").write_bytes(one)
    (tmp_path / "2.xml").write_bytes(two)
    suite = read([tmp_path / "1.xml", tmp_path / "2.xml"])
    assert suite.failing == {"m::t"} and set(suite.results) == {"m::t", "m::u"}
    assert merge(parse_bytes(two, "2") + parse_bytes(one, "1")).failing == {"m::t"}


def test_unreadable_reports_are_untrusted(tmp_path: Path) -> None:
    (tmp_path / "cut.xml").write_bytes(b"<testsuite><testcase")
    with pytest.raises(JUnitError, match="not JUnit XML"):
        read([tmp_path / "cut.xml"])
    with pytest.raises(JUnitError, match="cannot read"):
        read([tmp_path / "missing.xml"])
    with pytest.raises(JUnitError, match="root element <html>"):
        parse_bytes(b"<html/>", "page.html")


ident = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)


@given(
    dirs=st.lists(ident, max_size=3),
    module=ident,
    classes=st.lists(ident.map(str.title), max_size=2),
    func=ident,
    params=st.one_of(st.none(), st.text(st.characters(blacklist_characters="\n\r"), max_size=8)),
)
def test_pytest_mangling_round_trips(
    dirs: list[str], module: str, classes: list[str], func: str, params: str | None
) -> None:
    """As pytest's junitxml mangles a node id, so node_id restores it, and canonical agrees."""
    file = "/".join([*dirs, f"test_{module}.py"])
    name = func if params is None else f"{func}[{params}]"
    nodeid = "::".join([file, *classes, name])
    classname = ".".join([*dirs, f"test_{module}", *classes])
    assert node_id(classname, name, file) == nodeid
    assert canonical(nodeid) == canonical(node_id(classname, name, None))
