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
from dataclasses import dataclass, field
from pathlib import Path

from fidelity.kinds.registry import explain
from fidelity.kinds.sources import Neutral
from fidelity.matrix.cases.files import walk
from fidelity.matrix.cases.table import Case
from fidelity.matrix.verdict import spread
from fidelity.matrix.verdict.evidence import (
    CaseEvidence,
    CaseStatus,
    Replay,
    ReplayRun,
    ReplayVerdict,
)
from fidelity.matrix.verdict.explain import spec_for
from fidelity.text import counted

# (the run's case folder, a cache folder to start from or None) -> its evidence
RunOnce = Callable[[Path, Path | None], CaseEvidence]

FOLDER = "replay"
MIN_COLD_S = 1.0  # a cold run shorter than this is not judged on speed
SHOWN = 3


def replay(case: Case, first: CaseEvidence, case_dir: Path, run_once: RunOnce, wt: str) -> Replay:
    """Run the case's extra runs on this side and judge them against its first run."""
    if first.status is not CaseStatus.OK:
        why = f"the first run {first.status.said}: there is nothing to reproduce"
        return _made(case, (), ReplayVerdict.NOT_REPLAYED, why)
    runs: list[ReplayRun] = []
    for k in range(2, case.cold_runs + 1):
        folder = f"{FOLDER}/cold-{k}"
        runs.append(_as_run("cold", folder, run_once(case_dir / folder, None), case_dir, None))
    if case.replay == "cold-warm":
        folder = f"{FOLDER}/warm"
        given = _stamps(case_dir / "cache")
        try:
            ev = run_once(case_dir / folder, case_dir / "cache")
        except OSError as exc:  # the copy of the cache: a full disk, say
            why = f"the warm run could not start: its copy of the cache failed ({exc})"
            return _made(case, tuple(runs), ReplayVerdict.REPLAY_FAILED, why)
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
    """A run's evidence as a replay run. The cache files a warm run wrote are those with
    content not as it was given them (added, or written again, even with the same bytes);
    an empty file (a lock) holds nothing cached. A cold run wrote all of its own."""
    if given is None:
        written = tuple(sorted(ev.cache))
    else:
        now = _stamps(case_dir / folder / "cache")
        written = tuple(
            sorted(rel for rel, stamp in now.items() if stamp[0] and given.get(rel) != stamp)
        )
    return ReplayRun(
        kind=kind,
        folder=folder,
        status=ev.status,
        exit_code=ev.exit_code,
        duration_s=ev.duration_s,
        cpu_s=ev.cpu_s,
        outputs=dict(ev.outputs),
        paths=dict(ev.paths),
        cache=dict(ev.cache),
        cache_written=written,
    )


def _place(case_dir: Path, folder: str, wt: str) -> dict[str, str]:
    here = case_dir / folder if folder else case_dir
    return {"out": str(here / "out"), "cache": str(here / "cache"), "worktree": wt}


@dataclass(slots=True)
class Differing:
    """Outputs that differ between two runs of one side beyond the case's tolerances: their
    names, the differences in words, and how far each one's values moved (`spread.reach`)."""

    names: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    reach: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def add(self, name: str, words: str, reach: dict[str, float | None]) -> None:
        self.names.append(name)
        self.said.append(words)
        self.reach[name] = reach


Run = tuple[str, Mapping[str, str], Mapping[str, str]]  # folder, output hashes, paired paths


def differing(case: Case, one: Run, other: Run, case_dir: Path, wt: str) -> Differing:
    """What differs between two runs of one side, by the case's own comparators."""
    (fa, a, pa), (fb, b, pb) = one, other
    found = Differing()
    for name in sorted(a.keys() | b.keys()):
        if a.get(name) == b.get(name):
            continue
        spec = spec_for(name, case.compare)
        if spec is None or name not in a or name not in b:
            how = "bytes differ" if name in a and name in b else "in one run only"
            found.add(name, f"{name}: {how}", {spread.WHOLE: None})
            continue
        files = [
            Path(_place(case_dir, fa, wt)["out"]) / pa.get(name, name),
            Path(_place(case_dir, fb, wt)["out"]) / pb.get(name, name),
        ]
        neutral = Neutral.of(_place(case_dir, fa, wt), _place(case_dir, fb, wt))
        explained = explain(name, files[0], files[1], spec, neutral)
        if not explained.within_tolerance:
            shown = explained.largest[:SHOWN]
            values = "; ".join(f"{d.where}: {d.base} -> {d.cand}" for d in shown)
            words = f"{name}: {explained.summary}" + (f" ({values})" if values else "")
            found.add(name, words, spread.stored(spread.reach(explained)))
    return found


def _listed(names: list[str]) -> str:
    more = f" (+{len(names) - SHOWN} more)" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def _cold_spread(
    case: Case, first: CaseEvidence, runs: tuple[ReplayRun, ...], case_dir: Path, wt: str
) -> Differing:
    """Outputs (and `cache/` files) that differ between the cold runs, how, and how far."""
    found = Differing()
    for r in (x for x in runs if x.kind == "cold"):
        one = ("", first.outputs, first.paths)
        this = differing(case, one, (r.folder, r.outputs, r.paths), case_dir, wt)
        keys = first.cache.keys() | r.cache.keys()
        for p in sorted(p for p in keys if first.cache.get(p) != r.cache.get(p)):
            this.add(f"cache/{p}", f"cache/{p}: bytes differ", {spread.WHOLE: None})
        for name, words in zip(this.names, this.said, strict=True):
            if name not in found.names:
                found.add(name, f"{r.folder}: {words}", this.reach[name])
            else:
                found.reach[name] = spread.widest(found.reach[name], this.reach[name])
    return found


def _not_used(first: CaseEvidence, warm: ReplayRun) -> str:
    """Why the warm run shows the cache was not used, or ""."""
    if not first.cache:
        return "the cold run wrote nothing to its cache, so the warm run had nothing to load"
    if warm.cache_written:
        files = counted(len(warm.cache_written), "cache file")
        return f"the warm run wrote {files} again ({_listed(list(warm.cache_written))})"
    cold, hot, unit = _costs(first, warm)
    if cold >= MIN_COLD_S and hot >= cold:
        wall = (
            f" (wall {warm.duration_s:.2f} s and {first.duration_s:.2f} s)" if unit != "s" else ""
        )
        return (
            f"the warm run took {hot:.2f} {unit}, no less than the cold run's {cold:.2f} {unit}"
            f"{wall}: loading the cache saved nothing"
        )
    return ""


def _costs(first: CaseEvidence, warm: ReplayRun) -> tuple[float, float, str]:
    """(cold, warm, unit) the warm run's speed is judged by: CPU of each run's process tree
    when both were read (wall time under load is the machine's, not the case's), else wall."""
    if first.cpu_s is not None and warm.cpu_s is not None:
        return first.cpu_s, warm.cpu_s, "CPU-s"
    return first.duration_s, warm.duration_s, "s"


def _made(
    case: Case,
    runs: tuple[ReplayRun, ...],
    verdict: ReplayVerdict,
    detail: str,
    *,
    spread_seen: Differing | None = None,
    differences: list[str] | None = None,
) -> Replay:
    seen = spread_seen or Differing()
    return Replay(
        mode=case.replay or "repeat",
        verdict=verdict,
        runs=runs,
        varying=tuple(seen.names),
        detail=f"{case.replay_note}; {detail}" if case.replay_note else detail,
        differences=tuple((differences if differences is not None else seen.said)[: 2 * SHOWN]),
        declared=case.nondeterministic,
        spread=dict(seen.reach),
    )


def judge(
    case: Case, first: CaseEvidence, runs: tuple[ReplayRun, ...], case_dir: Path, wt: str
) -> Replay:
    """The replay verdict of one side's runs of a case, its first run ok. A warm run that
    diverges or does not use its cache fails however noisy the case: the warm run is judged
    on the outputs that did not vary between cold runs."""
    failed = [r for r in runs if r.status is not CaseStatus.OK]
    if failed:
        r = failed[0]
        code = f" (exit {r.exit_code})" if r.exit_code is not None else ""
        why = f"the {r.kind} run in {r.folder} {r.status.said}{code} where the first run was ok"
        return _made(case, runs, ReplayVerdict.REPLAY_FAILED, why)
    colds = 1 + sum(1 for r in runs if r.kind == "cold")
    seen = _cold_spread(case, first, runs, case_dir, wt)
    warm = next((r for r in runs if r.kind == "warm"), None)
    if warm is not None:
        failing = _warm(case, first, warm, seen, (case_dir, wt))
        if failing is not None:
            verdict, why, words = failing
            return _made(case, runs, verdict, why, spread_seen=seen, differences=words)
    if seen.names:
        verb = "differs" if len(seen.names) == 1 else "differ"
        why = f"{_listed(seen.names)} {verb} between the {colds} cold runs"
        return _made(case, runs, ReplayVerdict.NONDETERMINISTIC, why, spread_seen=seen)
    if warm is None:
        why = f"{colds} cold runs gave the same outputs"
        return _made(case, runs, ReplayVerdict.REPRODUCES, why)
    cold, hot, unit = _costs(first, warm)
    share = f", {hot / cold:.2f}x cold" if cold > 0 else ""
    compared = "same outputs" if first.outputs else "no outputs to compare, only the cache"
    cold_cpu, warm_cpu = (
        (f" ({cold:.2f} CPU-s)", f" ({hot:.2f} CPU-s)") if unit != "s" else ("", "")
    )
    why = (
        f"cold {first.duration_s:.2f} s{cold_cpu}, {counted(len(first.cache), 'cache file')} "
        f"written; warm {warm.duration_s:.2f} s{warm_cpu}{share}, none written; {compared}"
    )
    return _made(case, runs, ReplayVerdict.CACHE_REPRODUCES, why)


def _warm(
    case: Case, first: CaseEvidence, warm: ReplayRun, seen: Differing, where: tuple[Path, str]
) -> tuple[ReplayVerdict, str, list[str]] | None:
    """A failing verdict on the warm run, or None: its outputs against the first run's,
    except those that vary between cold runs anyway; then whether it used the cache."""
    one = ("", first.outputs, first.paths)
    found = differing(case, one, (warm.folder, warm.outputs, warm.paths), *where)
    diverged = [n for n in found.names if n not in seen.names]
    if diverged:
        verb = "differs" if len(diverged) == 1 else "differ"
        why = f"the warm run's {_listed(diverged)} {verb} from the cold run's"
        words = [w for n, w in zip(found.names, found.said, strict=True) if n in diverged]
        return ReplayVerdict.CACHE_DIVERGES, why, words
    unused = _not_used(first, warm)
    if unused:
        return ReplayVerdict.CACHE_NOT_USED, unused, []
    return None
