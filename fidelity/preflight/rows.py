"""The rows gate: a merge (or squash, cherry-pick, revert) keeps every keyed record row of
its parents, judged by `recordmerge.audit`; and no key is on two rows of a touched record."""

from __future__ import annotations

from typing import Any

from fidelity.errors import UsageError
from fidelity.git import log, objects
from fidelity.preflight.context import Context, Merge, Plan, skip_unchanged, skip_unconfigured
from fidelity.preflight.outcome import GateResult, Status
from fidelity.preflight.records import (
    invalid_records,
    record_paths,
    record_specs,
    touched_records,
    touched_specs,
)
from fidelity.text import counted


def plan_rows(ctx: Context) -> Plan:
    if ctx.tool.get("records") is None:
        return skip_unconfigured("no [[tool.fidelity.records]]")
    if ctx.span is not None:
        return Plan("every row of the range's base or added in it kept, by its commits and merges")
    if ctx.merges:
        labels = ", ".join(m.label for m in ctx.merges[:3])
        more = f" and {len(ctx.merges) - 3} more" if len(ctx.merges) > 3 else ""
        return Plan(f"every row of every parent kept by {labels}{more}")
    paths = record_paths(ctx)
    if paths is None:
        return Plan("[[tool.fidelity.records]] (to be validated)")
    touched = touched_records(ctx, paths)
    if touched:
        return Plan(f"{', '.join(touched)}: no key on two rows")
    return skip_unchanged("no merge to judge and no configured record changed")


def _label(merge: Merge, index: int, sha: str) -> str:
    if merge.labels is not None:
        return merge.labels[index]
    return f"parent {index + 1} ({sha[:12]})"


def _steps_bases(ctx: Context, merge: Merge) -> tuple[tuple[str, ...], ...]:
    """Each parent after the first merged against its bases with those before it, as git
    does (an octopus goes pairwise); a cherry-pick's or revert's base is given."""
    if merge.bases is not None:
        return merge.bases
    parents = merge.parents
    return tuple(
        tuple(log.bases_against(ctx.repo, parents[i], parents[:i])) for i in range(1, len(parents))
    )


def _versions(ctx: Context, merge: Merge, revs: list[str], path: str) -> dict[str, str | None]:
    """The record's text at each rev; where a rev has no file at path, the file git sees
    renamed to it (one side moved the record while the other added rows)."""
    blobs = objects.blobs(ctx.repo, [f"{rev}:{path}" for rev in revs])
    texts = {rev: _text(blob) for rev, blob in zip(revs, blobs, strict=True)}
    for rev in revs:
        if texts[rev] is None and rev != merge.commit:
            old = log.renamed_from(ctx.repo, rev, merge.commit, path, ctx.tree.index)
            if old is not None:
                texts[rev] = _text(objects.blobs(ctx.repo, [f"{rev}:{old}"])[0])
    return texts


def _merge_problems(ctx: Context, merge: Merge, specs: list[Any]) -> list[str]:
    """What the merge did to each configured record's rows, against its bases and parents."""
    from fidelity.recordmerge.audit import Step, Version, audit

    steps_bases = _steps_bases(ctx, merge)
    revs = list(dict.fromkeys([*merge.parents, *(b for bs in steps_bases for b in bs)]))
    if merge.commit:
        revs.append(merge.commit)
    problems = []
    for spec in specs:
        texts = _versions(ctx, merge, revs, spec.path)
        merged = texts[merge.commit] if merge.commit else _text(ctx.tree.read(spec.path))
        if merged is None and all(texts[p] is None for p in merge.parents):
            continue
        first = Version(_label(merge, 0, merge.parents[0]), texts[merge.parents[0]])
        steps = [
            Step(
                Version(_label(merge, i, sha), texts[sha]),
                tuple(Version(f"base {b[:12]}", texts[b]) for b in steps_bases[i - 1]),
            )
            for i, sha in enumerate(merge.parents)
            if i > 0
        ]
        for p in audit(first, steps, merged or "", [spec.key]):
            where = f"{spec.path}:{p.line}" if p.line else spec.path
            problems.append(f"{where}: {merge.label}: {p.message}")
    return problems


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


def _problems(ctx: Context, specs: list[Any]) -> tuple[list[str], list[str]]:
    """Every row lost, rewritten or duplicated, and what to do about each kind."""
    from fidelity.preflight.rangerows import REMEDY, lost_rows
    from fidelity.recordmerge.audit import duplicates

    problems: list[str] = []
    remedies: list[str] = []
    for merge in ctx.merges:
        found = _merge_problems(ctx, merge, specs)
        problems += found
        remedies += [merge.remedy] if found and merge.remedy else []
    if ctx.span is not None:
        found = lost_rows(ctx.repo, ctx.span, specs)
        problems += found
        remedies += [REMEDY] if found else []
    for spec in touched_specs(ctx, specs):
        text = _text(ctx.tree.read(spec.path))
        for p in duplicates(text or "", [spec.key]):
            problems.append(f"{spec.path}:{p.line}: {p.message}")
    return list(dict.fromkeys(problems)), list(dict.fromkeys(remedies))


def check_rows(ctx: Context) -> GateResult:
    try:
        specs = record_specs(ctx)
    except UsageError as exc:
        return invalid_records("rows", exc)
    if (ctx.merges or ctx.span) and log.is_shallow(ctx.repo):
        why = (
            "the clone is shallow: a merge's base and parents, or the range's base, may be missing"
        )
        return GateResult("rows", Status.UNTRUSTED, why)
    problems, remedies = _problems(ctx, specs)
    judged = f"{counted(len(ctx.merges), 'merge')}, " if ctx.merges else ""
    where = f"{judged}{counted(len(specs), 'record')}"
    if problems:
        details = (*problems, *(f"what to do: {r}" for r in remedies))
        return GateResult(
            "rows", Status.FAILED, f"{where}: {counted(len(problems), 'problem')}", details
        )
    if not specs:
        return GateResult("rows", Status.UNTRUSTED, "no record configured to judge")
    held = "every row kept, no key twice" if ctx.merges or ctx.span else "no key on two rows"
    return GateResult("rows", Status.OK, f"{where}: {held}")
