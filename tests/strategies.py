"""Hypothesis strategies for evidence, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from fidelity.matrix.verdict.evidence import CaseEvidence, CaseStatus, SideEvidence

DEF = "d" * 64
names = st.sampled_from(["a.csv", "b.json", "c/d.txt", "e"])
hashes = st.sampled_from(["1" * 64, "2" * 64, "3" * 64])
files = st.dictionaries(names, hashes, max_size=4)


@st.composite
def case_evidence(draw: st.DrawFn, case_id: str) -> CaseEvidence:
    return CaseEvidence(
        case_id=case_id,
        definition_sha=DEF,
        status=draw(st.sampled_from(list(CaseStatus))),
        exit_code=draw(st.none() | st.integers(-9, 3)),
        outputs=draw(files),
        missing_outputs=tuple(draw(st.lists(names, max_size=1))),
        cache=draw(files),
    )


@st.composite
def side(draw: st.DrawFn, role: str, ids: list[str]) -> SideEvidence:
    present = draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
    cases = {cid: draw(case_evidence(cid)) for cid in present}
    return SideEvidence(role=role, rev="r", sha="0" * 40, cases=cases)


case_ids = st.lists(st.sampled_from([f"c{i}" for i in range(6)]), min_size=1, unique=True)


# Markdown pages for the differential test against cmark-gfm (tests/test_checkers_gfm.py):
# full, collapsed and shortcut references, inline links, images, footnotes, stray and
# escaped brackets, over a few labels of which a drawn subset is defined. Each paragraph
# starts with a word and a line break is followed by one, so no line starts a block.
REFERENCE_LABELS = ["a", "b", "c", "A", "a b", "A\nB", " c"]
FOOTNOTE_LABELS = ["x", "y", "X"]
_BRACKET_ATOMS = (
    [f"[{label}]" for label in REFERENCE_LABELS]
    + [f"[^{label}]" for label in FOOTNOTE_LABELS]
    + ["[]", "(u.md)", "(v.md)", "()", "(<u.md>)", "(u.md 't')"]
    + ["[", "]", "!", "^", " ", "w", "\nw", "\\[", "\\]", "`", "*", "<b>"]
)


@st.composite
def reference_pages(draw: st.DrawFn) -> str:
    atoms = st.lists(st.sampled_from(_BRACKET_ATOMS), min_size=1, max_size=10)
    paragraphs = draw(st.lists(atoms.map(lambda a: "w" + "".join(a)), min_size=1, max_size=3))
    defined = draw(st.lists(st.sampled_from(["a", "b", "c", "a b"]), unique=True))
    notes = draw(st.lists(st.sampled_from(["x", "y"]), unique=True))
    definitions = [f"[{label}]: /{label.replace(' ', '')}" for label in defined]
    definitions += [f"[^{label}]: note {label}" for label in notes]
    return "\n\n".join(paragraphs) + "\n\n" + "\n".join(definitions) + "\n"
