"""The git merge driver: `fidelity merge-records %O %A %B %P`, configured by `git_line`.

git hands the driver three temporary files (the merge base, ours, theirs) and the path the
result is for; the result goes into ours (%A), and the exit code says clean (0) or
conflicted (non-zero). The key column comes from the record's `[[tool.fidelity.records]]`
entry (or --key); a path with no entry, or a file that is not UTF-8, is merged by git's own
merge alone. Whatever happens, %A ends up holding a merge (git's, at worst) and nothing is
lost silently: a driver that cannot do its job reports a conflict.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fidelity import config, schema
from fidelity.errors import UsageError
from fidelity.git import patches
from fidelity.recordmerge.keyed import Markers, merge


def git_line(python: str) -> str:
    """The `merge.fidelity-records.driver` value: this driver run by `python`, or, when that
    interpreter or its fidelity is gone, git's own merge of the file, which leaves conflict
    markers where the sides differ (a driver that cannot start must never leave "ours"
    unmarked: one `git add` would then drop the other side's rows). git substitutes %O, %A,
    %B, %P and %L (the conflict-marker-size attribute) and runs the line with sh."""
    py = shlex.quote(python)
    return (
        f"if {py} -c 'import fidelity' 2>/dev/null; "
        f"then exec {py} -m fidelity merge-records %O %A %B %P --marker-size %L; fi; "
        f'echo fidelity-records: {py} "cannot run fidelity; git\'s own merge used for" %P '
        "\"(rerun 'fidelity install-hooks')\" >&2; "
        "git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B"
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    conflicts: int
    notes: tuple[str, ...] = ()


def record_keys(repo: Path, path: str | None) -> list[str]:
    """The key columns for path: its [[tool.fidelity.records]] entry's, or (no path) every
    entry's; [] when the path is no configured record."""
    section = config.load(repo).get("records", [])
    problems = [f"{schema.json_path(p)}: {m}" for p, m in schema.errors("records", section)]
    if problems:
        raise UsageError(
            f"{repo / 'pyproject.toml'}: invalid [[tool.fidelity.records]]: " + "; ".join(problems)
        )
    entries = [(PurePosixPath(e["path"]).as_posix(), e.get("key", "row")) for e in section]
    if path is None:
        return list(dict.fromkeys(key for _, key in entries))
    wanted = PurePosixPath(path).as_posix()
    return [key for name, key in entries if name == wanted]


def _git_merge(
    repo: Path, labels: Sequence[str], marker: int, texts: Sequence[bytes]
) -> tuple[bytes, int]:
    with tempfile.TemporaryDirectory(prefix="fidelity-merge-") as tmp:
        files = []
        for name, data in zip(("base", "ours", "theirs"), texts, strict=True):
            files.append(Path(tmp, name))
            files[-1].write_bytes(data)
        base, ours, theirs = files
        return patches.merge_file(repo, ours, base, theirs, labels, marker_size=marker)


def run(
    base: Path,
    ours: Path,
    theirs: Path,
    *,
    path: str | None,
    key: str | None,
    marker: int,
    repo: Path,
) -> Outcome:
    """Merge the three files into `ours`; the number of conflicts and what they are."""
    try:
        data = [p.read_bytes() for p in (base, ours, theirs)]
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror}") from None
    name = path or "the record"
    labels = (f"ours ({name})", f"base ({name})", f"theirs ({name})")
    try:
        keys = [key] if key else record_keys(repo, path)
        texts = [d.decode("utf-8") for d in data]
    except (UsageError, UnicodeDecodeError) as exc:
        result, conflicts = _git_merge(repo, labels, marker, data)
        ours.write_bytes(result)
        return Outcome(max(conflicts, 1), (f"not merged by key ({exc}); git's merge kept",))

    def text_merge(b: str, o: str, t: str) -> tuple[str, int]:
        raw, n = _git_merge(repo, labels, marker, [x.encode("utf-8") for x in (b, o, t)])
        return raw.decode("utf-8"), n

    markers = Markers(labels[0], labels[2], marker)
    merged = merge(texts[0], texts[1], texts[2], keys, text_merge, markers=markers)
    ours.write_bytes(merged.text.encode("utf-8"))
    return Outcome(merged.conflicts, merged.notes)
