"""Gates over Markdown records: the checkers and ratchets (`check-docs`), and stale rows in
the keyed record tables a change touches (`stale`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from checkers.errors import ConfigError, NothingToCheck
from fidelity.errors import UsageError
from fidelity.git import log
from fidelity.preflight.context import Context, Plan, skip_unchanged, skip_unconfigured
from fidelity.preflight.outcome import GateResult, Status
from fidelity.text import counted

MARKDOWN = (".md", ".markdown")
# checkers.config.DEFAULT_RATCHETS, named here so that planning does not import jsonschema
DEFAULT_RATCHETS = "records/ratchets.json"
STALE_THREADS = 4  # rows are judged by git processes; a few at once hide their start-up


# --- docs ---


def _docs(ctx: Context) -> dict[str, Any] | None:
    section = ctx.tool.get("docs")
    return section if isinstance(section, dict) else None


def plan_docs(ctx: Context) -> Plan:
    section = _docs(ctx)
    if section is None:
        return skip_unconfigured("no [tool.fidelity.docs]")
    ratchets = section.get("ratchets", DEFAULT_RATCHETS)
    paths = ctx.changes.paths
    markdown = sorted(p for p in paths if p.lower().endswith(MARKDOWN))
    if ctx.changes.everything or ctx.config_touched() or ctx.changes.touched(str(ratchets)):
        return Plan("every configured page (the docs configuration or ratchets changed)")
    if markdown:
        return Plan(f"{markdown[0]}{f' and {len(markdown) - 1} more' if len(markdown) > 1 else ''}")
    if ctx.changes.deleted:
        return Plan(f"{sorted(ctx.changes.deleted)[0]} deleted: links to it are checked")
    links = sorted(p for p in ctx.changes.changed if ctx.tree.is_link(p))
    if links:
        return Plan(f"{links[0]} is a symbolic link that changed: links through it are checked")
    return skip_unchanged("no Markdown file, docs configuration, ratchet or link changed")


def _docs_options(ctx: Context, root: Path) -> Any:
    """check-docs' own signed cache when the judged content is the work tree itself (pages
    that did not change are answered from it); a scratch copy of the index is checked whole.
    No cache (no key, a folder that cannot be made) only costs time."""
    from checkers.tree import Options
    from fidelity import __version__, cachekey, workdir

    if root != ctx.repo:
        return Options(root=root)
    key, _ = cachekey.load()
    try:
        folder = workdir.cache(ctx.repo, "check-docs") if key is not None else None
    except (OSError, UsageError):
        folder = None
    return Options(root=root, cache_dir=folder, cache_key=key if folder else None, salt=__version__)


def check_docs(ctx: Context) -> GateResult:
    """Every configured page, since links and anchors cross pages: a change to one page (or a
    deleted file) can break another."""
    from checkers.tree import check_tree

    root = ctx.tree.folder()
    try:
        result = check_tree([], root, options=_docs_options(ctx, root))
    except ConfigError as exc:
        return GateResult("docs", Status.INVALID, "invalid [tool.fidelity.docs]", (str(exc),))
    except NothingToCheck as exc:
        return GateResult("docs", Status.UNTRUSTED, str(exc))
    pages = len(result.pages)
    if result.findings:
        summary = f"{counted(len(result.findings), 'finding')} in {counted(pages, 'page')}"
        return GateResult(
            "docs", Status.FAILED, summary, tuple(f.render() for f in result.findings)
        )
    return GateResult("docs", Status.OK, f"{counted(pages, 'page')}, no findings")


# --- stale ---


def record_specs(ctx: Context) -> list[Any]:
    """The configured records as stale specs (validated; UsageError when invalid)."""
    from fidelity.history import stale

    section = ctx.tool.get("records")
    return stale.specs_from_config(section, "pyproject.toml") if section is not None else []


def record_paths(ctx: Context) -> list[str] | None:
    """The configured record paths read leniently (None: the section is not a list of
    entries with paths; the check validates it). Planning the stale and rows gates does not
    pay for validating the section."""
    section = ctx.tool.get("records")
    entries = section if isinstance(section, list) else []
    raw = [e.get("path") for e in entries if isinstance(e, dict)]
    paths = [p for p in raw if isinstance(p, str)]
    return paths if paths and len(paths) == len(entries) else None


def touched_records(ctx: Context, paths: list[str]) -> list[str]:
    """The records the change touches: all of them when the configuration changed."""
    return paths if ctx.config_touched() else [p for p in paths if ctx.changes.touched(p)]


def invalid_records(gate: str, exc: UsageError) -> GateResult:
    return GateResult(gate, Status.INVALID, "invalid [[tool.fidelity.records]]", (str(exc),))


def touched_specs(ctx: Context, configured: list[Any]) -> list[Any]:
    """The record specs whose records the change touches (all: the configuration changed)."""
    if ctx.config_touched():
        return configured
    return [s for s in configured if ctx.changes.touched(s.path)]


def plan_stale(ctx: Context) -> Plan:
    if ctx.tool.get("records") is None:
        return skip_unconfigured("no [[tool.fidelity.records]]")
    paths = record_paths(ctx)
    if paths is None:
        return Plan("[[tool.fidelity.records]] (to be validated)")
    touched = touched_records(ctx, paths)
    if touched:
        return Plan(", ".join(touched))
    return skip_unchanged("no configured record changed")


def _check_rows(ctx: Context, rows: list[tuple[Any, Any]]) -> list[Any]:
    """Each row's check; rows naming one commit with the same watched paths and limit share
    one answer (four git processes each), asked a few at a time."""
    from fidelity.history import stale

    parent = ctx.parent or ""
    distinct = {(r.commit, r.watch, s.stale_after): r for r, s in reversed(rows)}

    def one(item: tuple[tuple[str, tuple[str, ...], int], Any]) -> Any:
        return stale.check_row(ctx.repo, parent, item[1], item[0][2])

    with ThreadPoolExecutor(STALE_THREADS) as pool:
        answers = dict(zip(distinct, pool.map(one, distinct.items()), strict=True))
    return [replace(answers[(r.commit, r.watch, s.stale_after)], row=r) for r, s in rows]


def _unwatched(ctx: Context, rows: list[tuple[Any, Any]]) -> GateResult | None:
    """The gate's answer when a row watches a path no commit touched (once for all rows);
    a path the change itself adds is none. With no commit yet, every path is new."""
    from fidelity.history import stale

    if ctx.parent is None:
        return None
    try:
        stale.refuse_unwatched(ctx.repo, ctx.parent, [r for r, _ in rows], ctx.changes.paths)
    except UsageError as exc:
        return invalid_records("stale", exc)
    return None


def _read_rows(ctx: Context, specs: list[Any]) -> tuple[list[tuple[Any, Any]], list[str]]:
    """(row, spec) of every touched record as the judged content holds it, and problems."""
    from fidelity.history import stale

    rows, problems = [], []
    for spec in specs:
        data = ctx.tree.read(spec.path)
        if data is None:
            problems.append(f"{spec.path}: configured record is not in {ctx.tree.label}")
            continue
        try:
            rows += [(r, spec) for r in stale.read_rows(data.decode("utf-8", "replace"), spec)]
        except UsageError as exc:
            problems.append(str(exc))
    return rows, problems


def check_stale(ctx: Context) -> GateResult:
    try:
        specs = touched_specs(ctx, record_specs(ctx))
    except UsageError as exc:
        return invalid_records("stale", exc)
    if log.is_shallow(ctx.repo):
        why = "the clone is shallow: commits since a row's measurement would be undercounted"
        return GateResult("stale", Status.UNTRUSTED, why)
    rows, problems = _read_rows(ctx, specs)
    if (unwatched := _unwatched(ctx, rows)) is not None:
        return unwatched
    checks = _check_rows(ctx, rows)
    for c in checks:
        if not c.ok:
            problems.append(
                f"{c.row.path}:{c.row.line}: row {c.row.key!r} {c.status}: {c.detail()}"
            )
    where = ", ".join(s.path for s in specs)
    if problems:
        return GateResult(
            "stale", Status.FAILED, f"{where}: {counted(len(problems), 'problem')}", tuple(problems)
        )
    if not checks:
        why = f"{where}: no rows to check; an empty record proves nothing is fresh"
        return GateResult("stale", Status.UNTRUSTED, why)
    against = (ctx.parent or "")[:12] or "no commit"
    return GateResult(
        "stale", Status.OK, f"{where}: {counted(len(checks), 'row')} fresh against {against}"
    )
