"""Every case lands in exactly one shard, for any N, with or without durations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fidelity.errors import UsageError
from fidelity.matrix.shards import assign, parse

ids = st.lists(st.text("abc123", min_size=1, max_size=4), unique=True, max_size=40)


@given(ids, st.integers(1, 12), st.booleans(), st.data())
def test_every_case_lands_in_exactly_one_shard(
    cases: list[str], n: int, timed: bool, data: st.DataObject
) -> None:
    durations = None
    if timed:
        durations = {c: data.draw(st.floats(0, 1000)) for c in cases if data.draw(st.booleans())}
    shards = assign(cases, n, durations)
    assert len(shards) == n
    flat = [c for shard in shards for c in shard]
    assert sorted(flat) == sorted(cases) and len(flat) == len(set(flat))
    assert shards == assign(cases, n, durations)  # deterministic


def test_durations_balance_the_load() -> None:
    durations = {"slow": 100.0, "a": 10.0, "b": 10.0, "c": 10.0, "d": 10.0}
    shards = assign(["a", "b", "slow", "c", "d"], 2, durations)
    assert shards == [["slow"], ["a", "b", "c", "d"]]


@pytest.mark.parametrize("bad", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="give K/N"):
        parse(bad)
    assert parse("2/4") == (2, 4)
