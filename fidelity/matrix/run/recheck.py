"""A run directory's evidence files hashed again against what run.json recorded for them.

A run directory travels (a CI artifact, a copy) and its files can be edited, deleted or
added to after the run; run.json keeps the sha256 of every output and cache file. Each
recorded file must still hash as recorded, and no file may have appeared where it would
have been evidence: under out/ matching a declared output, or anywhere under cache/. The
one check under `compare`, `verify`, `merge` (each shard, before combining) and `--resume`.
Logs are not hashed when a case runs, so they cannot be checked here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from fidelity.matrix.cases.files import Tree, matches, sha256_file, walk
from fidelity.matrix.cases.outputs import Output
from fidelity.matrix.verdict.evidence import CaseEvidence, ReplayRun, SideEvidence
from fidelity.matrix.verdict.findings import Code, Finding

SHOWN = 5
Digest = Callable[[Path], str]  # a file's sha256: read now, or taken from where it was read


def declared_outputs(raw: Mapping[str, Any]) -> dict[str, tuple[Output, ...]]:
    """case id -> its declared outputs, from run.json's case definitions."""
    return {
        c["id"]: tuple(Output.parse(o) for o in c.get("definition", {}).get("outputs", ()))
        for c in raw["matrix"]["cases"]
    }


def _against(
    kind: str, recorded: Mapping[str, str], tree: Tree, digest: Digest = sha256_file
) -> Iterator[str]:
    for rel, sha in sorted(recorded.items()):
        if rel in tree.links:
            yield f"{kind}/{rel} replaced by a link"
        elif rel not in tree.files:
            yield f"{kind}/{rel} missing"
        elif digest(tree.files[rel]) != sha:
            yield f"{kind}/{rel} changed"


def drift(
    case_dir: Path,
    ev: CaseEvidence,
    outputs: tuple[Output, ...] | None,
    digest: Digest = sha256_file,
) -> list[str]:
    """What differs between a case's files and its evidence: `out/x changed`, `cache/y
    missing`, `out/z added`. With outputs None, files added under out/ are not looked for.
    `digest` hashes an output (`ReadOnce.sha256`: the bytes a comparator judged)."""
    out, cache = walk(case_dir / "out"), walk(case_dir / "cache")
    recorded_out = {ev.path_of(name): sha for name, sha in ev.outputs.items()}
    found = [*_against("out", recorded_out, out, digest), *_against("cache", ev.cache, cache)]
    if outputs is not None and not ev.output_problems:  # such a case left files unrecorded
        known = {*recorded_out, *ev.unexpected}
        found += [
            f"out/{rel} added"
            for rel in out.files
            if rel not in known and any(matches(rel, o.glob) for o in outputs)
        ]
    found += [f"cache/{rel} added" for rel in cache.files if rel not in ev.cache]
    for run in ev.replay.runs if ev.replay else ():  # a replay's runs are evidence too
        found += _replayed(case_dir / run.folder, run)
    return found


def _replayed(here: Path, run: ReplayRun) -> list[str]:
    """`drift` for one of a case's replay runs, kept in its own folder: its recorded files,
    and no file added to its cache (a file added under its out/ is not looked for: a
    replay run's unpaired and absent-declared outputs are not recorded)."""
    cache = walk(here / "cache")
    recorded = {run.path_of(name): sha for name, sha in run.outputs.items()}
    found = [*_against(f"{run.folder}/out", recorded, walk(here / "out"))]
    found += _against(f"{run.folder}/cache", run.cache, cache)
    found += [f"{run.folder}/cache/{rel} added" for rel in cache.files if rel not in run.cache]
    return found


def altered(
    run_dir: Path,
    side: SideEvidence,
    outputs: Mapping[str, tuple[Output, ...]],
    where: str = "",
    digest: Digest = sha256_file,
) -> list[Finding]:
    """An evidence-altered finding per case whose files differ from run.json; `where` names
    the shard a merge read them from."""
    found = []
    for case_id, ev in side.cases.items():
        case_dir = run_dir / side.role / "cases" / case_id
        problems = drift(case_dir, ev, outputs.get(case_id), digest)
        if problems:
            found.append(_finding(problems, where, side.role, case_id))
    return found


def _finding(problems: list[str], where: str, role: str, case_id: str) -> Finding:
    more = f" (+{len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
    why = (
        f"{where}{', '.join(problems[:SHOWN])}{more}: the files are not what run.json "
        "recorded when the case ran, so its evidence cannot be trusted; run the case again"
    )
    return Finding(Code.EVIDENCE_ALTERED, why, role, case_id)


def rewritten(
    touched: Iterable[Path], sides: Iterable[SideEvidence], outputs: Mapping[str, Any]
) -> list[Finding]:
    """Under `run`, the cases whose files were stamped otherwise at the run's end than when
    their evidence was taken (`stamps`), hashed again: another case wrote into them."""
    by_role = {side.role: side for side in sides}
    found = []
    for case_dir in touched:
        side = by_role.get(case_dir.parent.parent.name)
        ev = side.cases.get(case_dir.name) if side else None
        if side is not None and ev is not None:
            problems = drift(case_dir, ev, outputs.get(case_dir.name))
            found += [_finding(problems, "", side.role, ev.case_id)] if problems else []
    return found
