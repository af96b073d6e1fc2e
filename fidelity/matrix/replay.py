"""A case run again on the same side: cold, then warm with the cache the first run wrote,
or cold again; and what those runs showed.

A regression suite that runs a case once exercises one path. A simulator that persists
what it trained has two: the fresh one that trains and writes the cache, and the warm one
that loads it; only running both on one commit shows whether the cache-hit path
reproduces the fresh one. The same runs measure a nondeterministic case's spread
(`spread`). Each run keeps its own folder under the case's (`replay/cold-2`,
`replay/warm`), and the warm run gets a copy of the first run's cache, so the first run's
evidence stays exactly as recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from fidelity.matrix.evidence import CaseEvidence, CaseStatus, Replay, ReplayRun, ReplayVerdict
from fidelity.matrix.explain import spec_for
from fidelity.matrix.files import walk
from fidelity.matrix.sources import Neutral
from fidelity.matrix.table import Case
from fidelity.matrix.valuecmp import explain

# (the run's case folder, a cache folder to start from or None) -> its evidence
RunOnce = Callable[[Path, Path | None], CaseEvidence]

FOLDER = "replay"
MIN_COLD_S = 1.0  # a cold run shorter than this is not judged on speed
SLOWER = 0.8  # a warm run taking this share of the cold run's time or more did not gain
SHOWN = 3


def replay(case: Case, first: CaseEvidence, case_dir: Path, run_once: RunOnce, wt: str) -> Replay:
    """Run the case's extra runs on this side and judge them against its first run."""
    mode = case.replay or "repeat"
    if first.status is not CaseStatus.OK:
        why = f"the first run was {first.status}: there is nothing to reproduce"
        return Replay(mode, ReplayVerdict.NOT_REPLAYED, detail=why, declared=case.nondeterministic)
    runs: list[ReplayRun] = []
    for k in range(2, case.cold_runs + 1):
        folder = f"{FOLDER}/cold-{k}"
        runs.append(_as_run("cold", folder, run_once(case_dir / folder, None), case_dir, None))
    if case.replay == "cold-warm":
        folder = f"{FOLDER}/warm"
        given = _stamps(case_dir / "cache")
        ev = run_once(case_dir / folder, case_dir / "cache")
        runs.append(_as_run("warm", folder, ev, case_dir, given))
    return judge(case, first, tuple(runs), case_dir, wt)


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    """Size and modification time of each file: a warm cache is a copy that keeps both."""
    found = {}
    for rel, path in walk(root).files.items():
        st = os.lstat(path)
        found[rel] = (st.st_size, st.st_mtime_ns)
    return found


def _as_run(
    kind: str,
    folder: str,
    ev: CaseEvidence,
    case_dir: Path,
    given: Mapping[str, tuple[int, int]] | None,
) -> ReplayRun:
    """A run's evidence as a replay run. The cache files a warm run wrote are those not as
    it was given them (added, or written again, even with the same bytes); a cold run
    wrote all of its own."""
    if given is None:
        written = tuple(sorted(ev.cache))
    else:
        now = _stamps(case_dir / folder / "cache")
        written = tuple(sorted(rel for rel, stamp in now.items() if given.get(rel) != stamp))
    return ReplayRun(
        kind=kind,
        folder=folder,
        status=ev.status,
        exit_code=ev.exit_code,
        duration_s=ev.duration_s,
        outputs=dict(ev.outputs),
        paths=dict(ev.paths),
        cache=dict(ev.cache),
        cache_written=written,
    )


def _place(case_dir: Path, folder: str, wt: str) -> dict[str, str]:
    here = case_dir / folder if folder else case_dir
    return {"out": str(here / "out"), "cache": str(here / "cache"), "worktree": wt}


def differing(
    case: Case,
    one: tuple[str, Mapping[str, str], Mapping[str, str]],
    other: tuple[str, Mapping[str, str], Mapping[str, str]],
    case_dir: Path,
    wt: str,
) -> tuple[list[str], list[str]]:
    """Outputs that differ between two runs of one side beyond the case's tolerances, and
    the differences in words; each run is (folder, output hashes, paired paths)."""
    (fa, a, pa), (fb, b, pb) = one, other
    names, said = [], []
    for name in sorted(a.keys() | b.keys()):
        if a.get(name) == b.get(name):
            continue
        spec = spec_for(name, case.compare)
        files = [
            Path(_place(case_dir, fa, wt)["out"]) / pa.get(name, name),
            Path(_place(case_dir, fb, wt)["out"]) / pb.get(name, name),
        ]
        if spec is None or name not in a or name not in b:
            names.append(name)
            how = "bytes differ" if name in a and name in b else "in one run only"
            said.append(f"{name}: {how}")
            continue
        neutral = Neutral.of(_place(case_dir, fa, wt), _place(case_dir, fb, wt))
        found = explain(name, files[0], files[1], spec, neutral)
        if not found.within_tolerance:
            names.append(name)
            values = "; ".join(f"{d.where}: {d.base} -> {d.cand}" for d in found.largest[:SHOWN])
            said.append(f"{name}: {found.summary}" + (f" ({values})" if values else ""))
    return names, said


def _listed(names: list[str]) -> str:
    more = f" (+{len(names) - SHOWN} more)" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def _cold_spread(
    case: Case, first: CaseEvidence, runs: tuple[ReplayRun, ...], case_dir: Path, wt: str
) -> tuple[list[str], list[str]]:
    """Outputs (and `cache/` files) that differ between the cold runs, and how."""
    varying: list[str] = []
    said: list[str] = []
    for r in (x for x in runs if x.kind == "cold"):
        one = ("", first.outputs, first.paths)
        names, words = differing(case, one, (r.folder, r.outputs, r.paths), case_dir, wt)
        keys = first.cache.keys() | r.cache.keys()
        cache = sorted(f"cache/{p}" for p in keys if first.cache.get(p) != r.cache.get(p))
        pairs = [*zip(names, words, strict=True), *((c, f"{c}: bytes differ") for c in cache)]
        for name, word in pairs:
            if name not in varying:
                varying.append(name)
                said.append(f"{r.folder}: {word}")
    return varying, said


def _not_used(first: CaseEvidence, warm: ReplayRun) -> str:
    """Why the warm run shows the cache was not used, or ""."""
    if not first.cache:
        return "the cold run wrote nothing to its cache, so the warm run had nothing to load"
    if warm.cache_written:
        n = len(warm.cache_written)
        return f"the warm run wrote {n} cache files again ({_listed(list(warm.cache_written))})"
    if first.duration_s >= MIN_COLD_S and warm.duration_s >= SLOWER * first.duration_s:
        return (
            f"the warm run took {warm.duration_s:.2f} s against the cold run's "
            f"{first.duration_s:.2f} s: loading the cache saved nothing"
        )
    return ""


def _made(
    case: Case,
    runs: tuple[ReplayRun, ...],
    verdict: ReplayVerdict,
    detail: str,
    *,
    varying: list[str] | None = None,
    differences: list[str] | None = None,
) -> Replay:
    return Replay(
        mode=case.replay or "repeat",
        verdict=verdict,
        runs=runs,
        varying=tuple(varying or ()),
        detail=detail,
        differences=tuple((differences or [])[: 2 * SHOWN]),
        declared=case.nondeterministic,
    )


def judge(
    case: Case, first: CaseEvidence, runs: tuple[ReplayRun, ...], case_dir: Path, wt: str
) -> Replay:
    """The replay verdict of one side's runs of a case, its first run ok."""
    failed = [r for r in runs if r.status is not CaseStatus.OK]
    if failed:
        r = failed[0]
        code = f" (exit {r.exit_code})" if r.exit_code is not None else ""
        why = f"the {r.kind} run in {r.folder} was {r.status}{code} where the first run was ok"
        return _made(case, runs, ReplayVerdict.REPLAY_FAILED, why)
    colds = 1 + sum(1 for r in runs if r.kind == "cold")
    varying, said = _cold_spread(case, first, runs, case_dir, wt)
    if varying:
        verb = "differs" if len(varying) == 1 else "differ"
        why = f"{_listed(varying)} {verb} between the {colds} cold runs"
        verdict = ReplayVerdict.NONDETERMINISTIC
        return _made(case, runs, verdict, why, varying=varying, differences=said)
    warm = next((r for r in runs if r.kind == "warm"), None)
    if warm is None:
        why = f"{colds} cold runs gave the same outputs"
        return _made(case, runs, ReplayVerdict.REPRODUCES, why)
    one = ("", first.outputs, first.paths)
    names, words = differing(case, one, (warm.folder, warm.outputs, warm.paths), case_dir, wt)
    if names:
        verb = "differs" if len(names) == 1 else "differ"
        why = f"the warm run's {_listed(names)} {verb} from the cold run's"
        return _made(case, runs, ReplayVerdict.CACHE_DIVERGES, why, differences=words)
    unused = _not_used(first, warm)
    if unused:
        return _made(case, runs, ReplayVerdict.CACHE_NOT_USED, unused)
    share = f", {warm.duration_s / first.duration_s:.2f}x cold" if first.duration_s > 0 else ""
    why = (
        f"cold {first.duration_s:.2f} s, {len(first.cache)} cache files written; warm "
        f"{warm.duration_s:.2f} s{share}, none written; same outputs"
    )
    return _made(case, runs, ReplayVerdict.CACHE_REPRODUCES, why)
