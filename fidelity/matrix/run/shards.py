"""Shards: a deterministic share of the cases for one CI job, balanced by past durations.

Every declared case lands in exactly one of N shards. Without durations, cases go round
robin in table order; with the durations of an earlier run, the longest case goes first
to the shard with the least work so far (ties: table order, lowest shard). A shard may be
empty when there are fewer cases than shards: a CI matrix or job array keeps its width while
the table shrinks, so N is not capped at the case count. One shard's share (`pick`) costs
time and memory in the number of cases, never in N; N and K are capped at MAX_SHARDS (no
job engine numbers more tasks), so a mistyped count is refused with exit 2.

`--shard auto` takes K and N from the variables a job engine sets (`from_env`): the explicit
FIDELITY_SHARD_INDEX (1-based) and FIDELITY_SHARD_COUNT that a CI matrix passes, a Slurm job
array's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (offset by SLURM_ARRAY_TASK_MIN and
divided by SLURM_ARRAY_TASK_STEP when set), and a Kubernetes Indexed Job's 0-based
JOB_COMPLETION_INDEX with FIDELITY_SHARD_COUNT. The first found, in that order, is the
shard; every other one found must say the same, or the run is refused. Nothing found, a
value that is not a whole number, or an index outside 1..N is refused too: a job that ran
the wrong share, or every job the same share, would only show up at the merge.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Mapping, Sequence

from fidelity.errors import UsageError

_SHARD = re.compile(r"^(\d+)/(\d+)$")
MAX_SHARDS = 2**31 - 1  # a Kubernetes Job's completions are an int32; Slurm arrays are smaller


def parse(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N <= MAX_SHARDS; UsageError otherwise."""
    found = _SHARD.match(text.strip())
    if found:
        k, n = _bounded(found.group(1), "K"), _bounded(found.group(2), "N")
        if 1 <= k <= n:
            return k, n
    raise UsageError(
        f"--shard {text[:40]!r}: give K/N with 1 <= K <= N, e.g. --shard 2/4, or --shard auto"
    )


def _bounded(digits: str, what: str, flag: str = "--shard") -> int:
    """A whole number of at most MAX_SHARDS; UsageError naming the value and the limit."""
    stripped = digits.lstrip("0") or "0"
    if len(stripped) > len(str(MAX_SHARDS)) or int(stripped) > MAX_SHARDS:
        shown = stripped if len(stripped) <= 30 else f"{stripped[:12]}... ({len(stripped)} digits)"
        raise UsageError(
            f"{flag}: {what}={shown} is more than {MAX_SHARDS:,} shards, the most a job "
            "engine numbers; give --shard K/N with N the number of jobs the run is split "
            "over (shards beyond the number of cases are valid and empty)"
        )
    return int(stripped)


def resolve(text: str | None, env: Mapping[str, str]) -> str | None:
    """The `K/N` a --shard value stands for: `auto` is read from env, anything else as given."""
    if text is None or text.strip() != "auto":
        return text
    k, n = from_env(env)
    return f"{k}/{n}"


LOOKED_FOR = (
    "FIDELITY_SHARD_INDEX with FIDELITY_SHARD_COUNT (a CI matrix), SLURM_ARRAY_TASK_ID with "
    "SLURM_ARRAY_TASK_COUNT (a Slurm job array), JOB_COMPLETION_INDEX with "
    "FIDELITY_SHARD_COUNT (a Kubernetes Indexed Job)"
)
TO_SET = (
    "set FIDELITY_SHARD_INDEX=K (1-based) and FIDELITY_SHARD_COUNT=N in the job's "
    "environment, or give --shard K/N"
)


def from_env(env: Mapping[str, str]) -> tuple[int, int]:
    """K and N from a job engine's variables (precedence: explicit, Slurm, Kubernetes);
    UsageError when none is found, a value is malformed, or two engines disagree."""
    found = [(name, kn) for name, read in _ENGINES if (kn := read(env)) is not None]
    if not found:
        raise UsageError(
            f"--shard auto: no shard index in the environment (looked for {LOOKED_FOR}); {TO_SET}"
        )
    (first, shard), *others = found
    for name, other in others:
        if other != shard:
            raise UsageError(
                f"--shard auto: the {first} variables say shard {shard[0]}/{shard[1]} but the "
                f"{name} variables say {other[0]}/{other[1]}; unset one set, or give --shard K/N"
            )
    return shard


def _number(env: Mapping[str, str], name: str, index: str) -> int:
    """A whole number from env; UsageError naming the variable when absent or malformed."""
    if name not in env:
        raise UsageError(f"--shard auto: {index} is set but {name} is not; {TO_SET}")
    value = env[name]
    if not re.fullmatch(r"[0-9]+", value):
        raise UsageError(f"--shard auto: {name}={value[:40]!r} is not a whole number; {TO_SET}")
    return _bounded(value, name, "--shard auto")


def _in_range(k: int, n: int, why: str) -> tuple[int, int]:
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard auto: {why} is not a shard of 1..{n}; {TO_SET}")
    return k, n


def _explicit(env: Mapping[str, str]) -> tuple[int, int] | None:
    if "FIDELITY_SHARD_INDEX" not in env:
        return None
    n = _number(env, "FIDELITY_SHARD_COUNT", "FIDELITY_SHARD_INDEX")
    k = _number(env, "FIDELITY_SHARD_INDEX", "FIDELITY_SHARD_INDEX")
    return _in_range(k, n, f"FIDELITY_SHARD_INDEX={k} with FIDELITY_SHARD_COUNT={n}")


def _slurm(env: Mapping[str, str]) -> tuple[int, int] | None:
    """Array ids mapped onto 1..N: `--array=4-7` gives ids 4..7 with SLURM_ARRAY_TASK_MIN=4,
    `--array=1-7:2` ids 1, 3, 5, 7 with SLURM_ARRAY_TASK_STEP=2; a list (`--array=1,3,8`) is
    no range (SLURM_ARRAY_TASK_MAX tells) and is refused."""
    index = "SLURM_ARRAY_TASK_ID"
    if index not in env:
        return None
    task, n = _number(env, index, index), _number(env, "SLURM_ARRAY_TASK_COUNT", index)
    low = _number(env, "SLURM_ARRAY_TASK_MIN", index) if "SLURM_ARRAY_TASK_MIN" in env else 1
    step = _number(env, "SLURM_ARRAY_TASK_STEP", index) if "SLURM_ARRAY_TASK_STEP" in env else 1
    why = f"{index}={task} (SLURM_ARRAY_TASK_MIN={low}, step {step}, {n} tasks)"
    if "SLURM_ARRAY_TASK_MAX" in env:
        high = _number(env, "SLURM_ARRAY_TASK_MAX", index)
        if step < 1 or high < low or (high - low) != (n - 1) * step:
            raise UsageError(
                f"--shard auto: the Slurm array {low}-{high} (step {step}) is not a range of "
                f"SLURM_ARRAY_TASK_COUNT={n} tasks; submit it as --array=1-{n}, or {TO_SET}"
            )
    if step < 1 or task < low or (task - low) % step:
        raise UsageError(f"--shard auto: {why} is not a shard of 1..{n}; {TO_SET}")
    return _in_range((task - low) // step + 1, n, why)


def _kubernetes(env: Mapping[str, str]) -> tuple[int, int] | None:
    index = "JOB_COMPLETION_INDEX"
    if index not in env:
        return None
    n = _number(env, "FIDELITY_SHARD_COUNT", f"{index} (set it to the Job's .spec.completions)")
    i = _number(env, index, index)
    return _in_range(i + 1, n, f"{index}={i} (0-based) with FIDELITY_SHARD_COUNT={n}")


_ENGINES: tuple[tuple[str, Callable[[Mapping[str, str]], tuple[int, int] | None]], ...] = (
    ("FIDELITY_SHARD_INDEX/COUNT", _explicit),
    ("Slurm array", _slurm),
    ("Kubernetes Indexed Job", _kubernetes),
)
# What each engine's reader above reads, in the same order, said in `--shard`'s help: the one
# place the help names the variables (tests/test_shards.py holds it against the readers)
READS = (
    "FIDELITY_SHARD_INDEX (1-based) and FIDELITY_SHARD_COUNT",
    "a Slurm array's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (offset by "
    "SLURM_ARRAY_TASK_MIN, divided by SLURM_ARRAY_TASK_STEP, checked against "
    "SLURM_ARRAY_TASK_MAX when set)",
    "a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) with FIDELITY_SHARD_COUNT",
)
AUTO_HELP = f"`auto` reads K and N from {', else '.join(READS)}"


def assign(
    ids: Sequence[str], n: int, durations: Mapping[str, float] | None = None
) -> list[list[str]]:
    """The case ids of each of n shards, in table order within each (n lists: for a small n)."""
    shards: list[list[str]] = [[] for _ in range(n)]
    for case_id, shard in zip(ids, owners(ids, n, durations), strict=True):
        shards[shard].append(case_id)
    return shards


def pick(
    ids: Sequence[str], k: int, n: int, durations: Mapping[str, float] | None = None
) -> list[str]:
    """The case ids of shard k of n (1-based), in table order: `assign(ids, n)[k - 1]`,
    in time and memory bounded by the number of cases whatever n is."""
    return [c for c, shard in zip(ids, owners(ids, n, durations), strict=True) if shard == k - 1]


def owners(ids: Sequence[str], n: int, durations: Mapping[str, float] | None = None) -> list[int]:
    """The 0-based shard of each case: round robin without durations, else the longest case
    first to the least loaded shard (ties: table order, lowest shard). The shards no case
    has reached are all at load 0 and only the lowest of them can be chosen next, so only
    the shards reached are held (a heap), never n of them."""
    if not durations:
        return [i % n for i in range(len(ids))]
    known = sorted(durations[c] for c in ids if c in durations)
    typical = known[len(known) // 2] if known else 1.0
    cost = [durations.get(c, typical) for c in ids]
    shard_of = [0] * len(ids)
    reached: list[tuple[float, int]] = []  # (load, shard) of every shard given a case
    fresh = 0  # the lowest shard not given a case yet
    for i in sorted(range(len(ids)), key=lambda i: (-cost[i], i)):
        if fresh < n and (not reached or (0.0, fresh) < reached[0]):
            load, target = 0.0, fresh
            fresh += 1
        else:
            load, target = heapq.heappop(reached)
        shard_of[i] = target
        heapq.heappush(reached, (load + cost[i], target))
    return shard_of
