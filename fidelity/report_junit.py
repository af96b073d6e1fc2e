"""JUnit XML for CI systems: one <testcase> per judged item, failures carrying the why.

Written with the standard library's ElementTree, so every name and message is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from fidelity.text import xml_safe


@dataclass(frozen=True, slots=True)
class JUnitCase:
    name: str
    classname: str
    time_s: float = 0.0
    failure: str | None = None  # the evidence says no
    error: str | None = None  # could not be judged (untrusted, crashed, missing)
    skipped: str | None = None
    output: str = ""


def to_xml(
    suite: str, cases: Sequence[JUnitCase], properties: dict[str, str] | None = None
) -> bytes:
    """One <testsuite> inside <testsuites>, with counts that match its test cases; any text
    XML cannot carry (control characters, names that are not UTF-8) is escaped first."""
    cases = [_safe(c) for c in cases]
    properties = {xml_safe(k): xml_safe(v) for k, v in (properties or {}).items()}
    failures = sum(1 for c in cases if c.failure is not None)
    errors = sum(1 for c in cases if c.error is not None)
    skipped = sum(1 for c in cases if c.skipped is not None)
    total_time = sum(c.time_s for c in cases)
    import xml.etree.ElementTree as ET  # not at import: a run's reports name JUnitCase

    root = ET.Element("testsuites")
    node = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{total_time:.3f}",
    )
    if properties:
        props = ET.SubElement(node, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=key, value=value)
    for case in cases:
        item = ET.SubElement(
            node, "testcase", name=case.name, classname=case.classname, time=f"{case.time_s:.3f}"
        )
        for tag, text in (
            ("failure", case.failure),
            ("error", case.error),
            ("skipped", case.skipped),
        ):
            if text is not None:
                ET.SubElement(item, tag, message=text.splitlines()[0] if text else tag).text = text
        if case.output:
            ET.SubElement(item, "system-out").text = case.output
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"


def _safe(case: JUnitCase) -> JUnitCase:
    def clean(text: str | None) -> str | None:
        return None if text is None else xml_safe(text)

    return replace(
        case,
        name=xml_safe(case.name),
        classname=xml_safe(case.classname),
        failure=clean(case.failure),
        error=clean(case.error),
        skipped=clean(case.skipped),
        output=xml_safe(case.output),
    )
