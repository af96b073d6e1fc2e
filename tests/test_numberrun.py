"""Numbers judged in bulk (fidelity/kinds/numberrun.py) tally exactly as one `Tally.add` per
difference did: the same counts, keys and largest differences, in the same order, with
other changes met between them and runs flushed at any length."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fidelity.kinds import numberrun
from fidelity.kinds.diffs import Difference, Tally, Tolerance
from fidelity.kinds.numberrun import NumberRun

numbers = st.one_of(
    st.integers(-5, 5),
    st.integers(10**308, 10**309),  # too large for a float
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 1e-9, 1e308, -1e308]),
)
items = st.lists(
    st.one_of(
        st.tuples(st.just("n"), numbers, numbers), st.tuples(st.just("s"), st.text(), st.text())
    ),
    max_size=40,
)
tolerances = st.builds(Tolerance, st.sampled_from([0.0, 1e-9, 0.5]), st.sampled_from([0.0, 1.0]))


def _show(value: object) -> str:
    return json.dumps(value)


def _one_by_one(where: str, b: float, c: float, tol: Tolerance) -> Difference:
    """The judgement as it was made one difference at a time."""
    try:
        fb, fc = float(b), float(c)
    except OverflowError:
        return Difference(where, _show(b), _show(c))
    return Difference(where, _show(b), _show(c), abs(fc - fb), tol.holds(fb, fc))


def _state(t: Tally) -> tuple[object, ...]:
    """What a tally holds, a NaN difference equal to a NaN one (as `==` would not have it)."""
    top = [(d.where, d.base, d.cand, repr(d.abs_diff), d.within) for d in t.largest()]
    return (t.out, t.within, t.changed, list(t.keys), t.keys_total, top)


INF, NAN = float("inf"), float("nan")


@given(items, tolerances, st.integers(1, 6), st.integers(1, 5))
@example([("n", INF, INF), ("n", NAN, 1.0), ("n", NAN, NAN), ("n", 1, 10**400)], Tolerance(), 5, 2)
@example(
    [("n", 1.0, 2.0), ("s", "a", "b"), ("n", -INF, INF), ("n", 1e308, -1e308)], Tolerance(), 2, 9
)
def test_bulk_tally_is_the_one_by_one_tally(
    met: list[tuple[str, object, object]], tol: Tolerance, top: int, run: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numberrun, "RUN", run)
        old, new = Tally(top=top), Tally(top=top)
        bulk = NumberRun(tol, top, _show)
        for n, (kind, b, c) in enumerate(met):
            where = f"$[{n}]"
            if kind == "n":
                old.add(where, None, _one_by_one(where, b, c, tol))  # type: ignore[arg-type]
                bulk.add(where, b, c, new)
            else:
                diff = Difference(where, str(b), str(c))
                old.add(where, None, diff)
                bulk.flush(new)
                new.add(where, None, diff)
        bulk.flush(new)
    assert _state(new) == _state(old)
