"""`[tool.fidelity.docs]`: defaults for every Markdown file, then per-page overrides.

Validated against ``checkers/schemas/docs.schema.json``; unknown keys are errors naming the
key. Pages match by ``fnmatch`` glob on the root-relative POSIX path (``*`` crosses ``/``);
every matching ``[[tool.fidelity.docs.page]]`` applies in file order, later ones winning.
A cap of 0 turns that rule off; an empty ``forbidden_headings`` turns that rule off.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from checkers import schema
from checkers.errors import ConfigError

__all__ = ["ConfigError", "DocsConfig", "KeyedTable", "PageRules", "from_section", "load"]

DEFAULT_FORBIDDEN = r"(?i)\b\d{4}-\d{2}-\d{2}\b|\battempt\s*#?\s*\d+\b"
DEFAULT_PATHS = ("README.md", "AGENTS.md", "records/*.md")
DEFAULT_RATCHETS = "records/ratchets.json"


@dataclass(frozen=True, slots=True)
class KeyedTable:
    """Tables whose header has column ``key`` (under ``heading``, if given) are keyed."""

    key: str
    heading: str | None = None


@dataclass(frozen=True, slots=True)
class PageRules:
    """The rules for one page; defaults suit any Markdown file."""

    max_row_chars: int = 1000
    max_cell_chars: int = 500
    max_paragraph_chars: int = 1200
    max_prose_paragraphs: int = 0
    forbidden_headings: str = DEFAULT_FORBIDDEN
    canonical_sections: tuple[str, ...] | None = None
    keyed_tables: tuple[KeyedTable, ...] = ()
    link_bases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DocsConfig:
    """The whole section: defaults, page overrides, default paths, ratchet file."""

    defaults: PageRules = PageRules()
    pages: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    paths: tuple[str, ...] = DEFAULT_PATHS
    ratchets: str = DEFAULT_RATCHETS
    source: str = field(default="pyproject.toml", compare=False)

    def rules_for(self, relpath: str) -> PageRules:
        """Defaults with every matching page entry applied in order."""
        rules = self.defaults
        for pattern, overrides in self.pages:
            if fnmatch.fnmatchcase(relpath, pattern):
                rules = dataclasses.replace(rules, **overrides)
        return rules


_RULE_KEYS = frozenset(f.name for f in dataclasses.fields(PageRules))


def _schema() -> dict[str, Any]:
    return schema.load("checkers", "docs")


def _where(error: jsonschema.ValidationError) -> str:
    return "[tool.fidelity.docs]" + "".join(
        f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
    )


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        return f"unknown key {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}"
    if error.validator == "oneOf":
        return 'must be a table {key = "..."} or a list of such tables'
    return str(error.message)


def validate(section: Mapping[str, Any], source: str) -> None:
    """Raise ConfigError listing every schema violation, each with its key path."""
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(section), key=lambda e: list(map(str, e.path)))
    if errors:
        lines = [f"{source}: {_where(e)}: {_message(e)}" for e in errors]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines))


def _rules(raw: Mapping[str, Any], source: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _RULE_KEYS:
            continue
        if key == "keyed_tables":
            items = [value] if isinstance(value, dict) else value
            out[key] = tuple(KeyedTable(i["key"], i.get("heading")) for i in items)
        elif isinstance(value, list):
            out[key] = tuple(value)
        else:
            out[key] = value
    pattern = out.get("forbidden_headings")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{source}: {where}.forbidden_headings: bad regex: {exc}") from exc
    return out


def from_section(section: Mapping[str, Any], source: str = "pyproject.toml") -> DocsConfig:
    """Build a DocsConfig from the parsed ``[tool.fidelity.docs]`` table."""
    validate(section, source)
    where = "[tool.fidelity.docs]"
    defaults = PageRules(**_rules(section, source, where))
    pages = tuple(
        (page["path"], _rules(page, source, f"{where}.page[{i}]"))
        for i, page in enumerate(section.get("page", []))
    )
    return DocsConfig(
        defaults=defaults,
        pages=pages,
        paths=tuple(section.get("paths", DEFAULT_PATHS)),
        ratchets=section.get("ratchets", DEFAULT_RATCHETS),
        source=source,
    )


def load(root: Path) -> DocsConfig:
    """The configuration in ``root/pyproject.toml``, or the defaults when there is none."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return DocsConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    section = data.get("tool", {}).get("fidelity", {}).get("docs", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.fidelity.docs] must be a table")
    return from_section(section, str(path))
