"""Declared outputs: which files a case writes, the name each is compared under, and
whether it must, may or must not exist.

A simulator may write `simulator_output/<start time>/request_metrics.csv`: the same file
has another path on each side. An output can therefore say how its matches are named for
pairing: `strip` removes a leading glob (`simulator_output/*/`), `name` gives the one file
a glob matches a fixed name. Comparison specs are keyed by that name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from fidelity.matrix.cases.files import Stamp, Tree, matches, sha256_file, walk


@dataclass(frozen=True, slots=True)
class Output:
    glob: str
    name: str | None = None  # the one match is compared under this name
    strip: str | None = None  # a leading glob removed from each match's path
    optional: bool = False  # may be missing (on both sides: nothing to compare)
    absent: bool = False  # must not exist: a match is a finding

    @staticmethod
    def parse(raw: str | Mapping[str, Any]) -> Output:
        if isinstance(raw, str):
            return Output(raw)
        return Output(
            glob=raw["glob"],
            name=raw.get("name"),
            strip=raw.get("strip"),
            optional=bool(raw.get("optional", False)),
            absent=bool(raw.get("absent", False)),
        )

    def definition(self) -> str | dict[str, Any]:
        """As in the case definition: a plain glob stays a string (older shas hold)."""
        if self == Output(self.glob):
            return self.glob
        keys = {
            "glob": self.glob,
            "name": self.name,
            "strip": self.strip,
            "optional": self.optional or None,
            "absent": self.absent or None,
        }
        return {k: v for k, v in keys.items() if v is not None}

    def paired(self, rel: str) -> str:
        """The name a match is compared under."""
        if self.name is not None:
            return self.name
        if self.strip is not None:
            parts = rel.split("/")
            for n in range(1, len(parts)):
                if matches("/".join(parts[:n]), self.strip.rstrip("/")) and _exact(
                    "/".join(parts[:n]), self.strip
                ):
                    return "/".join(parts[n:])
        return rel

    def names(self) -> tuple[str, ...]:
        """What a comparison spec may be keyed by for this output."""
        return tuple(n for n in (self.glob, self.name) if n)


def _exact(prefix: str, strip: str) -> bool:
    """prefix matches strip segment for segment (not as a folder holding a match)."""
    return len(prefix.split("/")) == len([p for p in strip.split("/") if p])


@dataclass(frozen=True, slots=True)
class Collected:
    """One case's outputs as evidence."""

    hashes: dict[str, str] = field(default_factory=dict)  # paired name -> sha256
    paths: dict[str, str] = field(default_factory=dict)  # paired name -> path, when they differ
    missing: list[str] = field(default_factory=list)  # required globs that matched nothing
    unexpected: list[str] = field(default_factory=list)  # matches of outputs declared absent
    links: dict[str, str] = field(default_factory=dict)  # links among the matches
    problems: list[str] = field(default_factory=list)  # two files under one name, and such


def collect(
    root: Path,
    outputs: Sequence[Output],
    tree: Tree | None = None,
    stamps: dict[Path, Stamp] | None = None,
) -> Collected:
    """Hash what the outputs match under root (no link followed), paired by name; each
    file's stamp into ``stamps`` as it is opened (`sha256_file`)."""
    tree = tree if tree is not None else walk(root)
    found = Collected()
    owner: dict[str, str] = {}
    for output in outputs:
        files = [rel for rel in tree.files if matches(rel, output.glob)]
        found.links.update(
            {rel: target for rel, target in tree.links.items() if matches(rel, output.glob)}
        )
        if output.absent:
            found.unexpected.extend(files)
            continue
        if not files and not output.optional:
            found.missing.append(output.glob)
        if output.name is not None and len(files) > 1:
            found.problems.append(
                f"{output.glob!r} matched {len(files)} files for the one name {output.name!r}: "
                f"{', '.join(files[:3])}"
            )
            continue
        for rel in files:
            name = output.paired(rel)
            if name in owner and owner[name] != rel:
                found.problems.append(f"{owner[name]} and {rel} are both named {name!r}")
                continue
            owner[name] = rel
            found.hashes[name] = sha256_file(tree.files[rel], stamps)
            if name != rel:
                found.paths[name] = rel
    return found


def spec_problem(key: str, outputs: Sequence[Output]) -> str | None:
    """Why a comparison spec's key names no declared output, or None. A key is an output's
    name or glob, a path the glob matches, or a glob over those (`*.csv`)."""
    for output in outputs:
        names = output.names()
        if key in names or matches(key, output.glob) or any(fnmatchcase(n, key) for n in names):
            return None
        if output.strip is not None:
            prefix = output.strip.rstrip("/").replace("**", "x").replace("*", "x")
            if matches(f"{prefix}/{key}", output.glob):
                return None
    declared = ", ".join(repr(n) for o in outputs for n in o.names()) or "none"
    return f"names no output of this case (declared: {declared})"
