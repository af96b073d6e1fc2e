"""Every rule over one page, and over a set of pages with their ratchets."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checkers import baseline, ratchets
from checkers.cache import Cache, findings_of
from checkers.config import DocsConfig, PageRules
from checkers.findings import Code, Finding
from checkers.linkcheck import Later, Unreadable, resolve_later, with_hint
from checkers.parsed import ParserFailed, TooDense
from checkers.site import Site, Source, not_parsed

if TYPE_CHECKING:
    from checkers.directives import Directive
    from checkers.parsed import Parsed


@dataclass(frozen=True, slots=True)
class Page:
    """A file to check: root-relative POSIX path for config, path as displayed."""

    rel: str
    display: str


@dataclass(frozen=True, slots=True)
class Result:
    """Findings the baseline does not hold, the pages checked, and what the baseline says:
    entries fixed (removable), removed, converted from counts or recorded (when asked), the
    findings held per page and code; and notes about the run that are not findings (why the
    cache was ignored). ``lowered`` is kept for callers of the count ratchets: it is empty.
    ``not_shown`` counts, per page and code, the findings past a page's first ``SHOWN``: they
    fail the run like the others, but are not listed (each is a line, a JSON object and a
    SARIF result: 50,000 broken links on a page took 140 MB to report)."""

    findings: tuple[Finding, ...]
    pages: tuple[Page, ...]
    lowered: tuple[ratchets.Lowered, ...] = ()
    recorded: tuple[ratchets.Lowered, ...] = ()
    notes: tuple[str, ...] = ()
    fixed: tuple[baseline.Fixed, ...] = ()
    removed: tuple[baseline.Fixed, ...] = ()
    converted: tuple[ratchets.Lowered, ...] = ()
    held: dict[str, dict[str, int]] = field(default_factory=dict)
    baseline_file: str = ""
    not_shown: dict[str, dict[str, int]] = field(default_factory=dict)


SHOWN = 1_000  # new findings listed per page; the rest are counted in Result.not_shown


def _shown(found: list[Finding]) -> tuple[list[Finding], dict[str, int]]:
    """A page's first SHOWN findings (they are sorted), and how many of each code are not."""
    more: dict[str, int] = {}
    for finding in found[SHOWN:]:
        more[str(finding.code)] = more.get(str(finding.code), 0) + 1
    return found[:SHOWN], more


@dataclass(slots=True)
class Checked:
    """One page's findings so far, and what waits for pages parsed after it."""

    page: Page
    rules: PageRules
    findings: list[Finding]
    later: list[Later] = field(default_factory=list)
    directives: tuple[Directive, ...] = ()
    digest: str = ""
    deps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def keep(self, findings: list[Finding]) -> list[Finding]:
        """What ``select``/``ignore`` and the page's directives let through."""
        from checkers.directives import silenced

        return [
            f for f in findings if self.rules.reports(f.code) and not silenced(f, self.directives)
        ]


def check_parsed(text: str, page: Page, rules: PageRules, site: Site) -> Checked:
    """Every rule over one page's text, before ratchets; fragments into pages not parsed
    yet are left in ``later``."""
    from checkers.markdown import parse  # here: a run answered from the cache never needs it

    try:
        parsed = parse(text, site.token_budget)
    except (TooDense, ParserFailed) as exc:
        why = site.too_dense() if isinstance(exc, TooDense) else not_parsed(exc)
        site.remember(page.rel, Unreadable(why))
        site.pending.discard(page.rel)
        finding = _not_parsed(exc, page, site)
        return Checked(page, rules, [finding] if rules.reports(finding.code) else [])
    site.remember(page.rel, parsed)
    site.pending.discard(page.rel)
    return _every_rule(parsed, page, rules, site)


def _not_parsed(exc: Exception, page: Page, site: Site) -> Finding:
    if isinstance(exc, TooDense):
        message = f"page {site.too_dense()}; not checked; split it, or raise max_page_bytes"
        return Finding(page.display, 1, 1, Code.TOO_DENSE, message)
    import markdown_it

    message = (
        f"markdown-it-py {markdown_it.__version__} failed on this page ({exc}); not checked: "
        "report the page to markdown-it-py, or reword the lines it fails on"
    )
    return Finding(page.display, 1, 1, Code.PARSER_FAILED, message)


def _every_rule(parsed: Parsed, page: Page, rules: PageRules, site: Site) -> Checked:
    """The rules over a parsed page, imported here: a run answered from the cache needs
    none of them (nor the parser), and starts without them."""
    from checkers.depth import check_depth
    from checkers.directives import directives
    from checkers.fences import unclosed_fences
    from checkers.headings import check_headings
    from checkers.keyed import check_keyed
    from checkers.linkcheck import check_links
    from checkers.prose import check_prose
    from checkers.refs import check_references
    from checkers.rows import check_rows
    from checkers.tables import tables_in

    tables = tables_in(parsed)
    path = page.display
    found, bad = directives(parsed, path)
    linked, later = check_links(parsed, page.rel, path, rules, site)
    findings = [
        *unclosed_fences(parsed, path),
        *check_prose(parsed, rules, path),
        *check_rows(tables, rules, path),
        *check_keyed(tables, rules, path),
        *check_headings(parsed, rules, path),
        *linked,
        *check_references(parsed, path),
        *check_depth(parsed, path),
    ]
    checked = Checked(page, rules, [], later, found)
    checked.findings = checked.keep(findings) + [f for f in bad if rules.reports(f.code)]
    return checked


def check_text(text: str, page: Page, rules: PageRules, site: Site) -> list[Finding]:
    """Every rule over one page's text, before ratchets, sorted by position, hints said."""
    checked = check_parsed(text, page, rules, site)
    checked.findings += checked.keep(resolve_later(checked.later, page.display, rules, site))
    return sorted(with_hint(f, site) for f in checked.findings)


def source_findings(source: Source, page: Page, rules: PageRules) -> list[Finding]:
    """FD701-FD703: a page that is not UTF-8, too large, or cannot be read."""
    path = page.display
    if source.text is None:
        code = Code.TOO_LARGE if "max_page_bytes" in source.problem else Code.UNREADABLE
        hint = (
            "; raise max_page_bytes or add it to exclude"
            if code is Code.TOO_LARGE
            else "; fix or exclude it"
        )
        found = [Finding(path, 1, 1, code, f"page {source.problem}; not checked{hint}")]
    elif source.bad_utf8 is not None:
        line, col = source.bad_utf8
        found = [
            Finding(
                path,
                line,
                col,
                Code.NOT_UTF8,
                "page is not valid UTF-8 (checked with U+FFFD in place of the bad bytes); "
                "GitHub may show it garbled: save it as UTF-8",
            )
        ]
    else:
        found = []
    return [f for f in found if rules.reports(f.code)]


def check_page(page: Page, rules: PageRules, site: Site) -> Checked:
    """Read one page through the site (bounded, inside the root) and check it, or take its
    result from the site's cache when nothing it depends on changed."""
    cache = site.cache
    if cache is not None:
        content = site.digest_of(page.rel)
        entry = cache.page(page.rel, content) if content else None
        if entry is not None:
            site.remember(page.rel, frozenset(entry["anchors"]))
            site.pending.discard(page.rel)
            if site.unchanged(entry["deps"]):
                cache.hits += 1
                return Checked(page, rules, findings_of(entry, page.display))
    source = site.read(page.rel)
    head = source_findings(source, page, rules)
    if source.text is None:
        site.pending.discard(page.rel)
        return Checked(page, rules, head)
    if cache is not None:
        site.watch()
    try:
        checked = check_parsed(source.text, page, rules, site)
    finally:
        deps = site.watched() if cache is not None else {}
    checked.findings += head
    checked.digest, checked.deps = source.digest, deps
    return checked


def finish(checked: Checked, site: Site) -> list[Finding]:
    """Resolve what waited for later pages, keep the result in the cache, sort."""
    if checked.later or checked.digest:
        if site.cache is not None:
            site.watch()
        late = resolve_later(checked.later, checked.page.display, checked.rules, site)
        checked.findings += checked.keep(late)
        if site.cache is not None and checked.digest:
            for kind, answers in site.watched().items():
                checked.deps.setdefault(kind, {}).update(answers)
            anchors = site.anchors_of(checked.page.rel, defer=False)
            if isinstance(anchors, frozenset):  # a page not parsed is checked again
                site.cache.put_page(
                    checked.page.rel, checked.digest, checked.findings, anchors, checked.deps
                )
    return sorted(checked.findings)


def page_gone(root: Path, page: str) -> bool:
    """Whether a baseline's page no longer exists under the root (renamed or deleted:
    nothing at its path, not even a broken link). A name no page can have (absolute, or
    with empty, ``.`` or ``..`` parts) is gone too: no finding can ever match it."""
    parts = page.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return True
    return not os.path.lexists(root.joinpath(*parts))


def apply_ratchets(
    root: Path,
    raw: dict[str, list[Finding]],
    pages: tuple[Page, ...],
    config: DocsConfig,
    mode: str = "check",
) -> Result:
    """Judge the findings against the baseline; ``mode`` "update" removes fixed entries and
    converts counts, "record" also lists today's findings where the baseline has none."""
    path = ratchets.located(root, config.ratchets, config.source)
    current = ratchets.load(path)
    gone = [page for page in current if page not in raw and page_gone(root, page)]
    changed = baseline.Updated()
    if mode in ("update", "record"):
        new, changed = baseline.update(current, raw, record=mode == "record", gone=gone)
        if new != current:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = ratchets.dump(new).encode("utf-8")  # before the file is opened
            spare = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            spare.write_bytes(text)
            os.replace(spare, path)  # whole, or as it was
        current = new
    findings: list[Finding] = []
    fixed = [
        f for page in gone if page in current for f in baseline.gone_entries(page, current[page])
    ]
    held: dict[str, dict[str, int]] = {}
    not_shown: dict[str, dict[str, int]] = {}
    for rel, found in raw.items():
        judged = baseline.judge(rel, found, current.get(rel, {}), config.ratchets, SHOWN)
        shown, more = _shown(judged.findings)  # sorted
        findings += shown
        if more:
            not_shown[shown[0].path] = more
        fixed += judged.fixed
        if judged.held:
            held[rel] = judged.held
    return Result(
        tuple(sorted(findings)),
        pages,
        recorded=tuple(changed.recorded),
        fixed=tuple(sorted(fixed)),
        removed=tuple(changed.removed),
        converted=tuple(changed.converted),
        held=held,
        baseline_file=config.ratchets,
        not_shown=not_shown,
    )


def check_pages(
    root: Path,
    pages: tuple[Page, ...],
    config: DocsConfig,
    *,
    update_ratchets: bool = False,
    cache: Cache | None = None,
    ratchet_mode: str | None = None,
) -> Result:
    """Check pages, apply ratchets (lowering or recording them when asked), keep the cache."""
    site = Site(root, config.max_page_bytes, cache)
    site.pending = {page.rel for page in pages}
    checked = [check_page(page, config.rules_for(page.rel), site) for page in pages]
    raw = {c.page.rel: finish(c, site) for c in checked}
    if cache is not None:
        cache.save()
    mode = ratchet_mode or ("update" if update_ratchets else "check")
    result = apply_ratchets(root, raw, pages, config, mode)
    shown = tuple(sorted(with_hint(f, site) for f in result.findings))  # only those shown
    notes = tuple(cache.notes) if cache is not None else ()
    return replace(result, findings=shown, notes=notes)
