"""The baseline file: tolerated findings per page and code, as fingerprints or as counts.

``records/ratchets.json`` maps a root-relative page to ``{code: entry}``. An entry is the
list of subjects of the tolerated findings (``{"README.md": {"FD401": ["link gone.md"]}}``;
``checkers.baseline`` matches findings to them), or, in a file written before fingerprints,
a count (``{"records/archive.md": {"FD103": 4}}``). A count keeps working as it always has
until the next ``--update-baseline`` or ``--record-baseline`` converts it: the page may
carry up to that many findings of the code; above it they all fail, with FD601; below it
the count is slack (FD602). A count is never raised.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from checkers.config import ConfigError
from checkers.findings import Code, Finding

Entry = int | list[str]
Ratchets = Mapping[str, Mapping[str, int | Sequence[str]]]
RATCHETABLE = frozenset(c.value for c in Code if not c.value.startswith("FD6"))


@dataclass(frozen=True, slots=True)
class Lowered:
    """One entry changed: a count lowered or converted, or subjects recorded."""

    page: str
    code: str
    old: int
    new: int


def _entry(value: object, page: str, code: str, source: str) -> Entry:
    if isinstance(value, list):
        if not all(isinstance(subject, str) for subject in value):
            raise ConfigError(f"{source}: {page!r}: {code} must list subjects (strings)")
        return list(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{source}: {page!r}: {code} must be a list of subjects or a count >= 0")
    return value


FIX = "fix it, or delete it and rebuild it with `fidelity check-docs --record-baseline`"


def parse(text: str, source: str) -> dict[str, dict[str, Entry]]:
    """Validate a baseline file's text; ConfigError names the bad page, code or entry."""
    try:
        data = json.loads(text)
    except RecursionError:  # the file is three levels deep; json recurses per level
        raise ConfigError(
            f"{source}: nested deeper than Python's JSON reader follows; a baseline maps "
            f"pages to {{code: entry}}, three levels deep: {FIX}"
        ) from None
    except json.JSONDecodeError as exc:
        at = f"{source}:{exc.lineno}:{exc.colno}"
        raise ConfigError(f"{at}: invalid JSON: {exc.msg}; {FIX}") from None
    except ValueError:  # an integer of more than 4,300 digits
        raise ConfigError(f"{source}: a number of more than 4,300 digits; {FIX}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be an object mapping pages to {{code: entry}}")
    out: dict[str, dict[str, Entry]] = {}
    for page, entries in data.items():
        if not isinstance(entries, dict):
            raise ConfigError(f"{source}: {page!r} must map finding codes to entries")
        for code in entries:
            if code not in RATCHETABLE:
                allowed = ", ".join(sorted(RATCHETABLE))
                raise ConfigError(f"{source}: {page!r}: unknown code {code!r}; allowed: {allowed}")
        out[page] = {code: _entry(v, page, code, source) for code, v in entries.items()}
    return out


def located(root: Path, rel: str, source: str) -> Path:
    """The baseline file ``rel`` under root; ConfigError when it resolves outside (a
    symbolic link, or a link among its folders): it is read and may be rewritten."""
    path = root / rel
    real, inside = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, inside]) != inside:
        raise ConfigError(
            f"{source}: [tool.fidelity.docs].ratchets: {rel} resolves to {real}, outside the "
            "repository; the baseline must be a file of the repository"
        )
    return path


def load(path: Path) -> dict[str, dict[str, Entry]]:
    """The baseline in ``path``, or none when the file does not exist."""
    if not path.is_file():
        return {}
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror}); {FIX}") from None
    return parse(_text(raw, str(path)), str(path))


def _text(raw: bytes, source: str) -> str:
    """The file as UTF-8; ConfigError at the first byte that is not (a UTF-16 file, as
    some editors on Windows save JSON, is said so)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        what = "UTF-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "not UTF-8"
        raise ConfigError(
            f"{source}:{line}:{col}: the file is {what} (byte 0x{raw[exc.start]:02x}); save it "
            f"as UTF-8, or {FIX}"
        ) from None


def dump(ratchets: Ratchets) -> str:
    """Stable text: sorted keys and subjects, two-space indent, final newline; empty
    entries and pages dropped."""
    clean = {}
    for page, entries in sorted(ratchets.items()):
        kept = {
            code: entry if isinstance(entry, int) else sorted(entry)
            for code, entry in sorted(entries.items())
            if entry
        }
        if kept:
            clean[page] = kept
    text = json.dumps(clean, indent=2, ensure_ascii=False) + "\n"
    # a page whose name is not UTF-8 holds lone surrogates: JSON's escape reads back as them
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def measure(findings: Iterable[Finding]) -> Counter[str]:
    return Counter(str(f.code) for f in findings)


def apply_counts(
    page: str, findings: list[Finding], counts: Mapping[str, int], ratchet_file: str
) -> list[Finding]:
    """Findings of codes with a count entry: tolerated, exceeded (all of them and FD601)
    or slack (FD602)."""
    measured = measure(findings)
    out = [f for f in findings if measured[str(f.code)] > counts[str(f.code)]]
    for code, limit in sorted(counts.items()):
        found = measured[code]
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
                    "`fidelity check-docs --update-baseline` to record them as fingerprints",
                )
            )
    return out
