"""The words of a verdict, as plain strings shared by the terminal and the Markdown report."""

from __future__ import annotations

from pathlib import Path

from fidelity.kinds import registry
from fidelity.kinds.diffs import OutputDiff, clip_pair
from fidelity.matrix.verdict.compare import FAILURES, CaseResult, Comparison, Summary
from fidelity.matrix.verdict.findings import Code, Finding
from fidelity.matrix.verdict.outcome import WORKTREE, Outcome, Selection
from fidelity.matrix.verdict.predict import Held
from fidelity.text import counted

SHOWN = 3
SHOWN_VALUE = 60  # characters of one old or new value in a line


def _rev(rev: str, sha: str) -> str:
    return sha[:10] if sha.startswith(rev) else f"{sha[:10]} ({rev})"


def headline(outcome: Outcome) -> str:
    h, b, c = outcome.harness, outcome.baseline, outcome.candidate
    harness = "checkout" if h.rev == WORKTREE else h.rev
    line = (
        f"baseline {_rev(b.rev, b.sha)} vs candidate {_rev(c.rev, c.sha)}; "
        f"table {h.table_path} from {_rev(harness, h.sha)}"
    )
    if h.tree:  # runs recorded before the harness's tree was, do not know it
        line += f", tree {h.tree[:10]}"
        if h.reads:
            held = f" ({', '.join(h.paths)})" if h.paths else ""
            line += f"; cases read its files{held} as {{harness}}"
    return line


def same_commit(outcome: Outcome) -> list[str]:
    """The note a run of one commit against itself must carry: it can only test whether the
    cases are deterministic, never a change; [] for two commits."""
    sha = outcome.baseline.sha
    if not sha or sha != outcome.candidate.sha:
        return []
    return [
        f"baseline and candidate are the same commit {sha[:10]}: this compares a commit with "
        "itself, so it shows whether the cases are deterministic, not what a change did"
    ]


def finding_line(f: Finding) -> str:
    where = " ".join(x for x in (f.side and f"[{f.side}]", f.case_id and f"case {f.case_id}") if x)
    return f"{f.code}{' ' + where if where else ''}: {f.message}"


def _some(items: tuple[str, ...], total: int = 0, limit: int = SHOWN) -> str:
    total = max(total, len(items))
    more = f" (+{total - limit} more)" if total > limit else ""
    return ", ".join(items[:limit]) + more


def changes(e: OutputDiff, limit: int = SHOWN) -> str:
    """The first `limit` changes of one output as `where: old -> new` (as its kind shows
    them), long values cut around their difference, then how many more; "" when there are
    none to show."""
    pairs, total = registry.of(e.kind).changes(e)
    shown = []
    for where, old, new in pairs[:limit]:
        old, new = clip_pair(old, new, SHOWN_VALUE)
        shown.append(f"{where}: {old} -> {new}")
    more = max(total, len(pairs)) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 and shown else "")


def explanation(e: OutputDiff) -> str:
    """One line: what differs in one output, where, and its first changes as old -> new."""
    parts = [f"{e.path}: {e.summary}"]
    if e.columns:
        parts.append(f"columns {_some(e.columns)}")
    shown = changes(e)
    if e.keys and not (registry.of(e.kind).where_is_key and shown):  # a change names its key
        parts.append(f"keys {_some(e.keys, e.keys_total)}")
    if shown:
        parts.append(shown)
    return "; ".join(parts)


def case_detail(r: CaseResult, run_dir: Path | None = None) -> str:
    """One line for one case; a failure names the logs to read when the run dir is known."""
    if r.verdict in FAILURES and run_dir is not None:
        roles = [role for role in ("baseline", "candidate") if role in r.detail]
        logs = ", ".join(str(run_dir / role / "cases" / r.case_id / "stderr.log") for role in roles)
        return f"{r.detail} (logs: {logs})" if logs else r.detail
    if r.explained:  # and what moved without a comparator to explain it: never hidden
        said = [explanation(e) for e in r.explained]
        known = {e.path for e in r.explained}
        o, c = r.outputs, r.cache
        rest = [p for p in (*o.changed, *o.added, *o.missing) if p not in known]
        rest += [f"cache/{p}" for p in (*c.changed, *c.added, *c.missing)]
        return " | ".join(said + ([f"also differ: {_some(tuple(rest))}"] if rest else []))
    detail = r.detail
    if r.outputs:
        detail += ": " + _some((*r.outputs.changed, *r.outputs.added, *r.outputs.missing))
    return detail


def summary_lines(comparison: Comparison, selection: Selection | None = None) -> list[str]:
    """The denominator first (a partial run's: "selected 2 of 3 declared"), then every class
    that is not empty; fits 80 columns."""
    s = comparison.summary
    denominator = f"declared {s.declared}"
    if selection is not None:
        denominator = f"selected {len(selection.selected)} of {selection.declared} declared"
    classes = [
        ("identical", s.identical, True),
        ("within tolerance", s.within_tolerance, False),
        ("within spread", s.within_spread, False),
        ("moved", s.moved, True),
        ("failed", s.failures, False),
        ("missing evidence", s.missing_evidence, False),
        ("definition differs", s.definition_differs, False),
        ("not compared", s.not_compared, False),
    ]
    if s.cache_files_baseline == s.cache_files_candidate:
        cache = f"{s.cache_files_baseline} cache files on each side"
    else:
        cache = (
            f"cache files: {s.cache_files_baseline} baseline, {s.cache_files_candidate} candidate"
        )
    return [
        f"{denominator} · executed {s.executed_baseline} baseline, "
        f"{s.executed_candidate} candidate · compared {s.compared}",
        " · ".join(f"{name} {n}" for name, n, always in classes if n or always),
        f"{cache}; {s.cache_files_differ} differ",
    ]


def prediction_lines(outcome: Outcome) -> list[str]:
    p, j = outcome.prediction, outcome.judged
    if p is None or j is None:
        return []
    lines = [
        f"prediction {p.path} (sha256 {p.sha256[:12]}): {p.why}",
        f"predicted {len(j.predicted)} · moved {len(j.moved)} · confirmed {len(j.confirmed)} · "
        f"unexpected {len(j.unexpected)} · missed {len(j.missed)} · failed {len(j.failed)}",
    ]
    if p.fixed or p.broken or p.failing or p.findings:
        failing = f" · failing {len(p.failing)}" if p.failing else ""
        lines.append(
            f"predicted fixed {len(p.fixed)} · broken {len(p.broken)}{failing} · expected "
            f"findings {len(p.findings)}, of which occurred {len(j.expected)}"
        )
    plain = not (p.fixed or p.broken or p.failing or p.replay)
    said = "did not move" if plain else "did not do as predicted"
    chosen = outcome.selection.selected if outcome.selection else None
    unrun = [c for c in j.missed if chosen is not None and c not in chosen]
    named = [
        ("unexpected (moved, not predicted)", j.unexpected),
        (f"missed (predicted, {said})", [c for c in j.missed if c not in unrun]),
        ("not run (predicted, left out of this partial run)", unrun),
        ("failed", j.failed),
        ("expected findings that did not occur", j.unmet),
    ]
    for label, ids in named:
        if ids:
            lines.append(f"{label}: {', '.join(ids)}")
    return lines


def verdict(outcome: Outcome) -> str:
    """The verdict in one line; a partial run's starts with PARTIAL and "N of M declared
    cases", whatever it says after, so that no report of one can pass for the full gate."""
    said, selection = _verdict(outcome), outcome.selection
    if selection is None:
        return said
    if said.startswith("SHARD "):  # says its N of M itself
        return f"PARTIAL {said}"
    shard = f", shard {selection.shard[0]}/{selection.shard[1]}" if selection.shard else ""
    return f"PARTIAL ({selection.scope}{shard}) {said}"


def _verdict(outcome: Outcome) -> str:
    s, j = outcome.comparison.summary, outcome.judged
    code = outcome.exit_code
    selection = outcome.selection
    shard = selection.shard if selection else None
    if shard is not None and code != 3 and (j is None and outcome.prediction or not s.declared):
        k, n = shard
        return (
            f"SHARD {k}/{n}: evidence kept for {s.declared} of "
            f"{selection.declared if selection else s.declared} declared cases; "
            "merge the shards (fidelity merge) to judge the run (exit 0)"
        )
    if code == 3:
        return (
            f"UNTRUSTED: {counted(len(outcome.findings), 'provenance finding')}; {s.compared} of "
            f"{s.declared} compared (exit 3)"
        )
    accepted = _accepted_note(outcome)
    if j is not None and j.verdict is Held.HELD:
        p = outcome.prediction
        if p is not None and (p.fixed or p.broken or p.failing or p.findings):
            failing = f", {len(p.failing)} failing as before" if p.failing else ""
            return (
                f"HELD: every case did as predicted ({len(j.moved)} moved, {len(p.fixed)} "
                f"fixed, {len(p.broken)} broken{failing}, {len(j.expected)} expected findings)"
                f"{accepted} (exit 0)"
            )
        moved = counted(len(j.moved), "case")
        return f"HELD: the moved set equals the prediction ({moved}){accepted} (exit 0)"
    if j is not None:
        unmet = f", {len(j.unmet)} expected findings did not occur" if j.unmet else ""
        return (
            f"FALSIFIED: {len(j.unexpected)} unexpected, {len(j.missed)} missed, "
            f"{len(j.failed)} failed{unmet} (exit 1)"
        )
    scope, partial = _scope(outcome), accepted
    held = s.identical + s.within_tolerance + s.within_spread
    known = _known(outcome)
    if code == 0 and held < s.declared:
        return (
            f"HOLDS: {held} of {scope} identical or within tolerance or spread; the other "
            f"{_others(s.declared - held, known)}{partial} (exit 0)"
        )
    if code == 0:
        return _holds(s, scope, partial)
    if not (s.moved or s.failures) and s.replay_failures:
        return (
            f"REPLAY FAILED: {s.replay_failures} of {s.declared} cases diverged, did not use "
            f"their cache or failed when run again on a side{partial} (exit 1)"
        )
    replays = f", {counted(s.replay_failures, 'replay')} failed" if s.replay_failures else ""
    failed = f"{s.failures} failed" + (f" ({known} known, as the table accepts)" if known else "")
    return f"MOVED: {s.moved} moved, {failed}{replays} of {s.declared}{partial} (exit 1)"


def _known(outcome: Outcome) -> int:
    """How many cases the table accepts as failing the same way on both sides."""
    return sum(1 for f, _ in outcome.accepted if f.code is Code.BOTH_FAILED)


def _others(n: int, known: int) -> str:
    """What the cases that hold without being identical or within bounds are."""
    said = []
    if known:
        verb = "fails" if known == 1 else "fail"
        said.append(f"{known} {verb} the same way on both sides, as the table accepts")
    if n - known:
        verb = "carries" if n - known == 1 else "carry"
        said.append(f"{n - known} {verb} findings the table accepts")
    return " and ".join(said)


def _holds(s: Summary, scope: str, partial: str) -> str:
    """The words of a gate that holds with every case compared ("all 3 declared cases",
    "the 1 selected case")."""
    every = f"the {scope}" if s.declared == 1 else f"all {scope}"
    if s.within_spread:
        return (
            f"HOLDS: {every} identical, within tolerance or within the spread of their "
            f"own runs ({s.identical} identical, {s.within_tolerance} within tolerance, "
            f"{s.within_spread} within spread){partial} (exit 0)"
        )
    if not s.within_tolerance:
        return f"HOLDS: {every} identical{partial} (exit 0)"
    if not s.identical:
        return f"HOLDS: {every} within tolerance, none identical{partial} (exit 0)"
    return (
        f"HOLDS: {every} identical or within tolerance ({s.identical} identical, "
        f"{s.within_tolerance} within tolerance){partial} (exit 0)"
    )


def replay_lines(outcome: Outcome, *, only_bad: bool = False) -> list[str]:
    """Each replayed case: each side's replay verdict with its runs' times and cache files,
    then for a verdict that fails the gate (or a spread) the values that differ."""
    lines, count, bad = [], 0, 0
    for r in outcome.comparison.cases:
        for role, side in (("baseline", outcome.baseline), ("candidate", outcome.candidate)):
            ev = side.cases.get(r.case_id)
            if ev is None or ev.replay is None:
                continue
            count += 1
            bad += ev.replay.verdict.bad
            if only_bad and not ev.replay.verdict.bad:
                continue
            mark = "!" if ev.replay.verdict.bad else "="
            lines.append(f"  {mark} {r.case_id} {role}: {ev.replay.verdict} ({ev.replay.detail})")
            if ev.replay.verdict.bad or ev.replay.varying:
                lines += [f"      {d}" for d in ev.replay.differences]
    if not count:
        return []
    head = f"replays ({counted(count, 'case-side')} run again on their own side, {bad} failed):"
    return [head, *lines]


def _accepted_note(outcome: Outcome) -> str:
    n = len(outcome.accepted)
    return f"; {counted(n, 'finding')} accepted by the table, listed above" if n else ""


def allowed_lines(outcome: Outcome) -> list[str]:
    """The findings the table accepted and the prediction expected: shown, never silent."""
    lines = []
    for title, pairs, verb in (
        ("Accepted findings", outcome.accepted, "accepted"),
        ("Findings the prediction expected", outcome.expected, "expected"),
    ):
        if pairs:
            lines.append(f"{title} ({len(pairs)}): shown, not counted against the verdict")
            for f, a in pairs:
                until = f", until {a.until}" if a.until else ""
                lines.append(f"  ~ {finding_line(f)} ({verb}: {a.why}{until})")
    return lines


def _scope(outcome: Outcome) -> str:
    """What the verdict is about: "3 declared cases", or a partial run's "2 selected cases"."""
    n = outcome.comparison.summary.declared
    kind = "declared" if outcome.selection is None else "selected"
    return f"{n} {kind} case" if n == 1 else f"{n} {kind} cases"


def selection_line(outcome: Outcome) -> list[str]:
    selection = outcome.selection
    if selection is None:
        return []
    chosen = ", ".join(selection.selectors)
    meant = "; meant so (--partial)" if selection.meant else ""
    return [
        f"a partial run: {selection.scope} selected by {chosen}; the full gate runs them all{meant}"
    ]


def setup_lines(outcome: Outcome) -> list[str]:
    """Per side whose set-up worktree was kept (`reuse_setup`): reused or set up, and where
    it stays; then how to list and remove kept set-ups."""
    lines = [
        f"{side.role}: "
        + (
            "setup reused from the kept worktree"
            if side.reused
            else "set up in a worktree kept for the next run"
        )
        + f" {side.kept}"
        for side in (outcome.baseline, outcome.candidate)
        if side.kept
    ]
    if lines:
        lines.append("kept set-up worktrees stay until removed: `fidelity gc` lists them")
    return lines
