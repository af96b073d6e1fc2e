"""GitHub annotations (fidelity/github.py): one line each, escaped as the Actions toolkit does.

Each escaping rule is a row of data with the exact line GitHub must read; the property reads
any line back as GitHub's runner would and gets the text again, on one line.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fidelity import github
from fidelity.github import Annotation
from fidelity.text import visible

RULES = [
    # message (data): %, CR and LF; a literal "%0A" must not become a line break
    (Annotation("t", "100% sure"), "::error title=t::100%25 sure"),
    (Annotation("t", "said %0A twice"), "::error title=t::said %250A twice"),
    (Annotation("t", "one\ntwo\r\nthree"), "::error title=t::one%0Atwo%0D%0Athree"),
    # ":" and "," stay in a message, which runs to the end of the line
    (Annotation("t", "a: b, c::d"), "::error title=t::a: b, c::d"),
    # properties: also ":" and ",", which would end the property or the property list
    (Annotation("fidelity run: case a", "m"), "::error title=fidelity run%3A case a::m"),
    (
        Annotation("t", "m", "dir,x/a:b.toml", 3),
        "::error file=dir%2Cx/a%3Ab.toml,line=3,title=t::m",
    ),
    (Annotation("50%\nx", "m"), "::error title=50%25%0Ax::m"),
    # control characters from a case never reach the log raw
    (
        Annotation("t", "nul\x00 esc\x1b[31m del\x7f"),
        "::error title=t::nul\\x00 esc\\x1b[31m del\\x7f",
    ),
    (Annotation("t\x1b", "\u202eevil"), "::error title=t\\x1b::\\u202eevil"),
    # where: a file with its line and column; a line without a file means nothing
    (Annotation("t", "m", "a.md", 3, 14), "::error file=a.md,line=3,col=14,title=t::m"),
    (Annotation("t", "m", "a.md"), "::error file=a.md,title=t::m"),
    (Annotation("t", "m", None, 3), "::error title=t::m"),
]


RULE_IDS = [
    "percent",
    "percent-0A",
    "line-breaks",
    "data-keeps-colons",
    "title-colon",
    "file-comma-colon",
    "title-percent-break",
    "controls",
    "controls-title",
    "file-line-col",
    "file-only",
    "line-without-file",
]


@pytest.mark.parametrize(("note", "line"), RULES, ids=RULE_IDS)
def test_each_escaping_rule(note: Annotation, line: str) -> None:
    assert github.command(note) == line


def test_the_function_preflight_calls() -> None:
    assert github.error("a.toml", 7, "gate: cases", "bad, fix") == (
        "::error file=a.toml,line=7,title=gate%3A cases::bad, fix"
    )
    assert github.error(None, None, "t", "m") == "::error title=t::m"


def test_only_under_github_actions() -> None:
    assert github.active({"GITHUB_ACTIONS": "true"})
    assert not github.active({"GITHUB_ACTIONS": "false"}) and not github.active({})


def _unescape(text: str) -> str:
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def read_back(line: str) -> dict[str, str]:
    """What GitHub's runner reads from one line: properties split on ',' and '=', then the
    message after the first '::' that follows them."""
    m = re.fullmatch(r"::error (?:(.*?))::(.*)", line, re.DOTALL)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group(1).split(",")) if m.group(1) else {}
    return {**{k: _unescape(v) for k, v in props.items()}, "message": _unescape(m.group(2))}


texts = st.text(st.characters(codec="utf-8") | st.sampled_from(list("%:,=\r\n\x00\x1b")))


def shown(text: str) -> str:
    """The text GitHub shows: CR and LF as they were, other control characters as escapes."""
    return "\r".join(visible(part) for part in text.split("\r"))


@example(title="a\rb", message="c\r\nd", file="e\rf")
@given(title=texts, message=texts, file=st.none() | texts.filter(bool))
def test_any_text_reads_back_from_one_line(title: str, message: str, file: str | None) -> None:
    line = github.command(Annotation(title, message, file, 1 if file else None))
    assert "\n" not in line and "\r" not in line and "\x00" not in line and "\x1b" not in line
    got = read_back(line)
    assert got["title"] == shown(title) and got["message"] == shown(message)
    assert got.get("file") == (shown(file) if file else None)
