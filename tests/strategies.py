"""Hypothesis strategies for evidence, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from fidelity.matrix.evidence import CaseEvidence, CaseStatus, SideEvidence

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
