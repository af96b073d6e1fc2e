"""Ratchets: per-page counts of tolerated findings that may only go down.

``records/ratchets.json`` maps a root-relative page to ``{code: count}``, e.g.
``{"records/archive.md": {"FD103": 4}}``: the page may carry up to four over-long
paragraphs, legacy debt that is disclosed rather than hidden. Within the ratchet those
findings are tolerated; above it they all fail, with FD601. Below it the ratchet is slack
(FD602): ``--update-ratchets`` lowers it to the measurement and never raises it or adds a
page, so no slack is banked when a page improves. ``--record-ratchets`` adopts check-docs on
a repository with findings: it also adds today's count for every page and code that has no
ratchet yet, and still never raises one. Raising one is a deliberate hand edit.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from checkers.config import ConfigError
from checkers.findings import Code, Finding

Ratchets = Mapping[str, Mapping[str, int]]
_RATCHETABLE = frozenset(c.value for c in Code if not c.value.startswith("FD6"))


@dataclass(frozen=True, slots=True)
class Lowered:
    """One ratchet moved down by ``--update-ratchets``."""

    page: str
    code: str
    old: int
    new: int


def parse(text: str, source: str) -> dict[str, dict[str, int]]:
    """Validate a ratchet file's text; ConfigError names the bad page, code or count."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: invalid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be an object mapping pages to {{code: count}}")
    out: dict[str, dict[str, int]] = {}
    for page, counts in data.items():
        if not isinstance(counts, dict):
            raise ConfigError(f"{source}: {page!r} must map finding codes to counts")
        for code, count in counts.items():
            if code not in _RATCHETABLE:
                allowed = ", ".join(sorted(_RATCHETABLE))
                raise ConfigError(f"{source}: {page!r}: unknown code {code!r}; allowed: {allowed}")
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ConfigError(f"{source}: {page!r}: {code} must be a count >= 0")
        out[page] = dict(counts)
    return out


def load(path: Path) -> dict[str, dict[str, int]]:
    """The ratchets in ``path``, or none when the file does not exist."""
    if not path.is_file():
        return {}
    return parse(path.read_text(encoding="utf-8"), str(path))


def dump(ratchets: Ratchets) -> str:
    """Stable text: sorted keys, two-space indent, final newline."""
    clean = {page: dict(sorted(c.items())) for page, c in sorted(ratchets.items()) if c}
    return json.dumps(clean, indent=2) + "\n"


def measure(findings: Iterable[Finding]) -> Counter[str]:
    return Counter(str(f.code) for f in findings)


def lower(
    ratchets: Ratchets, measured: Mapping[str, Counter[str]]
) -> tuple[dict[str, dict[str, int]], list[Lowered]]:
    """Ratchets lowered to the measurement of every checked page; never raised, never added."""
    out = {page: dict(counts) for page, counts in ratchets.items()}
    moved = []
    for page, counts in measured.items():
        for code, limit in ratchets.get(page, {}).items():
            if counts[code] < limit:
                out[page][code] = counts[code]
                moved.append(Lowered(page, code, limit, counts[code]))
        if page in out:
            out[page] = {code: n for code, n in out[page].items() if n}
    return {page: c for page, c in out.items() if c}, moved


def record(
    ratchets: Ratchets, measured: Mapping[str, Counter[str]]
) -> tuple[dict[str, dict[str, int]], list[Lowered]]:
    """Ratchets with today's count added for every page and code that has none (adoption);
    an existing ratchet is never raised, so a page over its ratchet stays red."""
    out = {page: dict(counts) for page, counts in ratchets.items()}
    added = []
    for page, counts in sorted(measured.items()):
        for code, n in sorted(counts.items()):
            if n and code in _RATCHETABLE and code not in out.get(page, {}):
                out.setdefault(page, {})[code] = n
                added.append(Lowered(page, code, 0, n))
    return out, added


def apply(
    page: str, findings: list[Finding], ratchets: Ratchets, ratchet_file: str
) -> list[Finding]:
    """The page's findings with its ratchets applied: tolerated, exceeded or slack."""
    limits = ratchets.get(page, {})
    counts = measure(findings)
    out = [
        f
        for f in findings
        if str(f.code) not in limits or counts[str(f.code)] > limits[str(f.code)]
    ]
    for code, limit in sorted(limits.items()):
        found = counts[code]
        if found > limit:
            first = min(f for f in findings if f.code == code)
            out.append(
                Finding(
                    first.path,
                    first.line,
                    first.col,
                    Code.RATCHET_EXCEEDED,
                    f"{found} {code} findings exceed the ratchet of {limit} in {ratchet_file}; "
                    f"fix {found - limit} (ratchets only go down)",
                )
            )
        elif found < limit:
            out.append(
                Finding(
                    ratchet_file,
                    1,
                    1,
                    Code.RATCHET_SLACK,
                    f"{page} has {found} {code} findings, below its ratchet of {limit}; run "
                    "`fidelity check-docs --update-ratchets` to lower it",
                )
            )
    return out
