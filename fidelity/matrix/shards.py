"""Shards: a deterministic share of the cases for one CI job, balanced by past durations.

Every declared case lands in exactly one of N shards. Without durations, cases go round
robin in table order; with the durations of an earlier run, the longest case goes first
to the shard with the least work so far (ties: table order, lowest shard). A shard may be
empty when there are fewer cases than shards.

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

import re
from collections.abc import Callable, Mapping, Sequence

from fidelity.errors import UsageError

_SHARD = re.compile(r"^(\d+)/(\d+)$")


def parse(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N; UsageError otherwise."""
    found = _SHARD.match(text.strip())
    if found:
        k, n = int(found.group(1)), int(found.group(2))
        if 1 <= k <= n:
            return k, n
    raise UsageError(
        f"--shard {text!r}: give K/N with 1 <= K <= N, e.g. --shard 2/4, or --shard auto"
    )


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
        raise UsageError(f"--shard auto: {name}={value!r} is not a whole number; {TO_SET}")
    return int(value)


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


def assign(
    ids: Sequence[str], n: int, durations: Mapping[str, float] | None = None
) -> list[list[str]]:
    """The case ids of each of n shards, in table order within each."""
    shards: list[list[str]] = [[] for _ in range(n)]
    if not durations:
        for i, case_id in enumerate(ids):
            shards[i % n].append(case_id)
        return shards
    known = sorted(durations[c] for c in ids if c in durations)
    typical = known[len(known) // 2] if known else 1.0
    order = sorted(range(len(ids)), key=lambda i: (-durations.get(ids[i], typical), i))
    load = [0.0] * n
    for i in order:
        target = min(range(n), key=lambda s: (load[s], s))
        shards[target].append(ids[i])
        load[target] += durations.get(ids[i], typical)
    position = {case_id: i for i, case_id in enumerate(ids)}
    return [sorted(shard, key=position.__getitem__) for shard in shards]
