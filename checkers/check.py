"""Every rule over one page, and over a set of pages with their ratchets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from checkers import ratchets
from checkers.config import DocsConfig, PageRules
from checkers.fences import unclosed_fences
from checkers.findings import Finding
from checkers.headings import check_headings
from checkers.keyed import check_keyed
from checkers.links import check_links
from checkers.markdown import parse
from checkers.prose import check_prose
from checkers.refs import check_references
from checkers.rows import check_rows
from checkers.site import Site
from checkers.tables import tables_in


@dataclass(frozen=True, slots=True)
class Page:
    """A file to check: root-relative POSIX path for config, path as displayed."""

    rel: str
    display: str


@dataclass(frozen=True, slots=True)
class Result:
    """Findings after ratchets, the pages checked, and ratchets lowered (if updating)."""

    findings: tuple[Finding, ...]
    pages: tuple[Page, ...]
    lowered: tuple[ratchets.Lowered, ...] = ()


def check_text(text: str, page: Page, rules: PageRules, site: Site) -> list[Finding]:
    """Every rule over one page's text, before ratchets, sorted by position."""
    parsed = parse(text)
    site.remember(page.rel, parsed)
    tables = tables_in(parsed)
    path = page.display
    findings = [
        *unclosed_fences(parsed, path),
        *check_prose(parsed, rules, path),
        *check_rows(tables, rules, path),
        *check_keyed(tables, rules, path),
        *check_headings(parsed, rules, path),
        *check_links(parsed, page.rel, path, rules.link_bases, site.exists, site.anchors_of),
        *check_references(parsed, path),
    ]
    return sorted(findings)


def check_pages(
    root: Path, pages: tuple[Page, ...], config: DocsConfig, update_ratchets: bool = False
) -> Result:
    """Check pages, apply ratchets (lowering them first when asked) and return the result."""
    site = Site(root)
    raw: dict[str, list[Finding]] = {}
    for page in pages:
        text = (root / page.rel).read_text(encoding="utf-8", errors="replace")
        raw[page.rel] = check_text(text, page, config.rules_for(page.rel), site)
    ratchet_path = root / config.ratchets
    current = ratchets.load(ratchet_path)
    lowered: list[ratchets.Lowered] = []
    if update_ratchets:
        measured = {rel: ratchets.measure(found) for rel, found in raw.items()}
        new, lowered = ratchets.lower(current, measured)
        if lowered:
            ratchet_path.write_text(ratchets.dump(new), encoding="utf-8")
        current = new
    findings: list[Finding] = []
    for rel, found in raw.items():
        findings.extend(ratchets.apply(rel, found, current, config.ratchets))
    return Result(tuple(sorted(findings)), pages, tuple(lowered))
