"""`[tool.fidelity.docs]`: defaults for every Markdown file, then per-page overrides.

Read from ``pyproject.toml``, or from a file of its own (``--config FILE``: the same keys at
its top level). Validated against ``checkers/schemas/docs.schema.json``; unknown keys are
errors naming the key. Pages match by ``fnmatch`` glob on the root-relative POSIX path
(``*`` crosses ``/``); every matching ``[[tool.fidelity.docs.page]]`` applies in file order,
later ones winning. A cap of 0 turns that rule off; an empty ``forbidden_headings`` turns
that rule off.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checkers import schema
from checkers.blake import hex_digest

if TYPE_CHECKING:  # imported only to explain a configuration that is not valid
    import jsonschema
from checkers.errors import ConfigError

__all__ = ["ConfigError", "DocsConfig", "KeyedTable", "PageRules", "from_section", "load"]

DEFAULT_FORBIDDEN = r"(?i)\b\d{4}-\d{2}-\d{2}\b|\battempt\s*#?\s*\d+\b"
DEFAULT_PATHS = ("README.md", "AGENTS.md", "records/*.md")
DEFAULT_RATCHETS = "records/ratchets.json"
DEFAULT_EXCLUDE = ("**/node_modules/**",)
DEFAULT_MAX_PAGE_BYTES = 4_000_000
SECTION = "[tool.fidelity.docs]"


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
    link_rewrites: tuple[tuple[str, str], ...] = ()
    anchor_case: str = "any"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def reports(self, code: str) -> bool:
        """Whether ``select``/``ignore`` (code prefixes) let findings of ``code`` through."""
        if self.select and not code.startswith(self.select):
            return False
        return not code.startswith(self.ignore) if self.ignore else True


@dataclass(frozen=True, slots=True)
class DocsConfig:
    """The whole section: defaults, page overrides, what to check, and resource bounds."""

    defaults: PageRules = PageRules()
    pages: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    paths: tuple[str, ...] = DEFAULT_PATHS
    ratchets: str = DEFAULT_RATCHETS
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    gitignore: bool = True
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES
    source: str = field(default="pyproject.toml", compare=False)
    fingerprint: str = field(default="", compare=False)

    def excluded(self, relpath: str) -> bool:
        """Whether an ``exclude`` glob matches the root-relative path."""
        return any(_glob_match(relpath, pattern) for pattern in self.exclude)

    def rules_for(self, relpath: str) -> PageRules:
        """Defaults with every matching page entry applied in order."""
        rules = self.defaults
        for pattern, overrides in self.pages:
            if fnmatch.fnmatchcase(relpath, pattern):
                rules = dataclasses.replace(rules, **overrides)
        return rules


_RULE_KEYS = frozenset(f.name for f in dataclasses.fields(PageRules))


def _glob_match(relpath: str, pattern: str) -> bool:
    """fnmatch, where a leading ``**/`` also matches at the root and ``/**`` a whole folder."""
    if fnmatch.fnmatchcase(relpath, pattern):
        return True
    if pattern.startswith("**/") and _glob_match(relpath, pattern[3:]):
        return True
    return pattern.endswith("/**") and fnmatch.fnmatchcase(relpath, pattern[:-3])


def _schema() -> dict[str, Any]:
    return schema.load("checkers", "docs")


def _where(error: jsonschema.ValidationError, section: str) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return section + path if section else path.lstrip(".")


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        return f"unknown key {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}"
    if error.validator == "oneOf":
        return 'must be a table {key = "..."} or a list of such tables'
    if error.schema is _schema()["$defs"]["relative"]:
        what = "is empty" if error.instance == "" else "is not inside the repository"
        return (
            f"{error.instance!r} {what}; name it relative to the root, "
            "without a leading / or a .. part (docs/*.md, not /abs/docs/*.md or ../other/*.md)"
        )
    return str(error.message)


def validate(section: Mapping[str, Any], source: str, where: str = SECTION) -> None:
    """Raise ConfigError listing every schema violation, each with its key path."""
    if schema.valid("checkers", "docs", section):
        return
    validator = schema.ecma_class(_schema())(_schema())
    errors = sorted(validator.iter_errors(section), key=lambda e: list(map(str, e.path)))
    if errors:
        located = ((_where(e, where), _message(e)) for e in errors)
        lines = [
            f"{source}: {at}: {message}" if at else f"{source}: {message}"
            for at, message in located
        ]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines))


def _regex(pattern: str, source: str, where: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{source}: {where}: bad regex {pattern!r}: {exc}") from exc


def _rules(raw: Mapping[str, Any], source: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _RULE_KEYS:
            continue
        if key == "keyed_tables":
            items = [value] if isinstance(value, dict) else value
            out[key] = tuple(KeyedTable(i["key"], i.get("heading")) for i in items)
        elif key == "link_rewrites":
            out[key] = tuple((r["pattern"], r["replace"]) for r in value)
            for i, (pattern, _) in enumerate(out[key]):
                _regex(pattern, source, f"{where}.link_rewrites[{i}].pattern")
        elif isinstance(value, list):
            out[key] = tuple(value)
        else:
            out[key] = value
    if out.get("forbidden_headings"):
        _regex(out["forbidden_headings"], source, f"{where}.forbidden_headings")
    return out


def _fingerprint(section: Mapping[str, Any]) -> str:
    text = json.dumps(section, sort_keys=True, default=str)
    return hex_digest(text.encode(), 32)


def from_section(
    section: Mapping[str, Any], source: str = "pyproject.toml", where: str = SECTION
) -> DocsConfig:
    """Build a DocsConfig from the parsed ``[tool.fidelity.docs]`` table."""
    validate(section, source, where)
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
        exclude=DEFAULT_EXCLUDE + tuple(section.get("exclude", ())),
        gitignore=section.get("gitignore", True),
        max_page_bytes=section.get("max_page_bytes", DEFAULT_MAX_PAGE_BYTES),
        source=source,
        fingerprint=_fingerprint(section),
    )


def _toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: a tree without pyproject.toml never reads TOML

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {exc.strerror}") from exc


def load(root: Path, config_file: Path | None = None) -> DocsConfig:
    """``config_file`` (the section's keys at its top level), else ``root/pyproject.toml``'s
    ``[tool.fidelity.docs]``, else the defaults."""
    if config_file is not None:
        return from_section(_toml(config_file), str(config_file), where="")
    path = root / "pyproject.toml"
    if not path.is_file():
        return DocsConfig(fingerprint=_fingerprint({}))
    section = _toml(path).get("tool", {}).get("fidelity", {}).get("docs", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.fidelity.docs] must be a table")
    return from_section(section, str(path))
