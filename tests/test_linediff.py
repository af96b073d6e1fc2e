"""The line diff behind kind `text` (fidelity/kinds/linediff.py): correct on any input, and
bounded on every input shape, shown without a clock.

The bound is counted, not timed: the diff counts each line comparison and hash lookup it
makes (`Counter.spent`), and the count must stay within `BOUND_PER_LINE x n x log2 n + FLOOR`
for n lines of both sides on the shapes that cost diffs most: shuffled, reversed, all equal,
all different, one change, a block moved, and duplicate-heavy lines (no line unique, so no
anchor). The red cases run a quadratic diff through the same counter: Myers' diff with no
anchors and no budget (what difflib-like diffs cost on a shuffle), and the diff itself with
its budget lifted, on the duplicate-heavy shuffle; both go past the bound.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fidelity.kinds import linediff
from fidelity.kinds.linediff import Counter, budget_for, diff, myers

BOUND_PER_LINE = 10  # the budget's 8 per line, and the last step's overshoot
FLOOR = 30_000

Shape = Callable[[int], tuple[list[int], list[int]]]


def _shuffled(n: int) -> list[int]:
    return random.Random(n).sample(range(n), n)


ALIGNED: dict[str, Shape] = {
    "shuffled": lambda n: (list(range(n)), _shuffled(n)),
    "reversed": lambda n: (list(range(n)), list(range(n))[::-1]),
    "all equal": lambda n: ([7] * n, [7] * n),
    "all different": lambda n: (list(range(n)), list(range(n, 2 * n))),
    "one change": lambda n: (list(range(n)), [*range(n // 2), -1, *range(n // 2 + 1, n)]),
    "block moved": lambda n: (
        list(range(n)),
        [*range(n // 4, n // 2), *range(n // 4), *range(n // 2, n)],
    ),
    "every other line changed": lambda n: (list(range(n)), [-i if i % 2 else i for i in range(n)]),
}
DUPLICATES: dict[str, Shape] = {  # no line is unique: no anchor, Myers until the budget ends
    "duplicates shuffled": lambda n: (
        [i % 50 for i in range(n)],
        random.Random(n).sample([i % 50 for i in range(n)], n),
    ),
    "three letters": lambda n: (
        [random.Random(n).randrange(3) for _ in range(n)],
        [random.Random(n + 1).randrange(3) for _ in range(n)],
    ),
}
SIZES = (1_000, 4_000, 16_000)


def bound(lines: int) -> int:
    return BOUND_PER_LINE * lines * lines.bit_length() + FLOOR


def apply(a: list[int], b: list[int], ops: list[linediff.Opcode]) -> list[int]:
    """a edited by the opcodes; each `equal` checked to be equal."""
    out: list[int] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            out += a[i1:i2]
        else:
            out += b[j1:j2]
    return out


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shape", ALIGNED)
def test_count_stays_within_n_log_n_and_every_line_is_aligned(shape: str, n: int) -> None:
    a, b = ALIGNED[shape](n)
    counter = Counter(budget_for(2 * n))
    ops = diff(a, b, counter)
    assert apply(a, b, ops) == b
    assert counter.unaligned == 0, f"{shape}: the budget ran out, {counter.spent} spent"
    assert counter.spent <= bound(2 * n), f"{shape}: {counter.spent} over {bound(2 * n)}"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shape", DUPLICATES)
def test_count_stays_within_the_bound_where_no_line_is_unique(shape: str, n: int) -> None:
    a, b = DUPLICATES[shape](n)
    counter = Counter(budget_for(2 * n))
    assert apply(a, b, diff(a, b, counter)) == b
    assert counter.spent <= bound(2 * n), f"{shape}: {counter.spent} over {bound(2 * n)}"


def test_one_change_costs_a_pass_over_the_lines() -> None:
    a, b = ALIGNED["one change"](100_000)
    counter = Counter(budget_for(200_000))
    assert [op[0] for op in diff(a, b, counter)] == ["equal", "replace", "equal"]
    assert counter.spent <= 2 * 100_000 + 100


def test_the_bound_catches_a_quadratic_diff() -> None:
    """Red case: Myers' diff over the whole input, no anchors and no budget (the cost of a
    diff that is quadratic on reorders), has not finished 2,000 shuffled lines by the bound."""
    a, b = ALIGNED["shuffled"](2_000)
    counter = Counter(10**12)
    assert myers(a, b, bound(4_000), counter) is None
    assert counter.spent > bound(4_000), counter.spent


def test_the_bound_catches_the_diff_without_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Red case: with its budget lifted (only a limit past the bound stops it), the diff's
    own fallback has not finished where no line is unique: the budget is what holds it."""
    monkeypatch.setattr(linediff, "MYERS_PER_LINE", 10**9)
    a, b = DUPLICATES["duplicates shuffled"](4_000)
    counter = Counter(bound(8_000) + 1)
    assert apply(a, b, diff(a, b, counter)) == b
    assert counter.unaligned and counter.spent > bound(8_000), counter.spent


def test_past_its_budget_a_gap_is_changed_whole_and_counted() -> None:
    a, b = DUPLICATES["duplicates shuffled"](4_000)
    counter = Counter(budget_for(8_000))
    ops = diff(a, b, counter)
    assert apply(a, b, ops) == b
    assert counter.unaligned == 8_000 and [op[0] for op in ops] == ["replace"]


lines = st.lists(st.integers(0, 4), max_size=30)


@given(lines, lines, st.integers(0, 200))
def test_the_opcodes_turn_base_into_candidate(a: list[int], b: list[int], limit: int) -> None:
    """Whatever the budget (a small one gives up early), the edit script is right."""
    counter = Counter(limit)
    assert apply(a, b, diff(a, b, counter)) == b
    assert apply(a, b, diff(a, b)) == b


def _lcs(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            prev, row[j + 1] = row[j + 1], prev + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


@given(lines, lines)
def test_myers_finds_a_longest_common_subsequence(a: list[int], b: list[int]) -> None:
    found = myers(a, b, 10**9, Counter(10**9))
    assert found is not None
    assert sum(n for _, _, n in found) == _lcs(a, b)
    assert all(a[i : i + n] == b[j : j + n] for i, j, n in found)


def test_the_docs_state_the_budget() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "case-matrix.md").read_text()
    assert f"`{linediff.BUDGET_PER_LINE} × n × log2 n`" in docs, "update docs/case-matrix.md"
