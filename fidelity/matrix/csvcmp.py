"""CSV/TSV outputs compared with pandas: rows aligned on key columns, tolerances per column.

Cells are read as text, so nothing is rounded on the way in; only cells whose text differs
are parsed as numbers and judged against the tolerance.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from fidelity.matrix.diffs import (
    DEFAULT_TOP,
    Difference,
    OutputDiff,
    judge,
    largest,
    summary,
    tolerance_for,
)

SHOWN_KEYS = 50


def read(data: bytes, sep: str) -> pd.DataFrame:
    if not data.strip():
        return pd.DataFrame()
    return pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False)


def _labels(frame: pd.DataFrame, key: Sequence[str]) -> list[str]:
    if not key:
        return [f"row {i + 1}" for i in range(len(frame))]
    if len(key) == 1:
        return [str(v) for v in frame[key[0]]]
    return [
        ", ".join(f"{k}={v}" for k, v in zip(key, row, strict=True))
        for row in frame[list(key)].itertuples(index=False)
    ]


def _key_problems(base: pd.DataFrame, cand: pd.DataFrame, key: Sequence[str]) -> list[str]:
    problems = []
    for role, frame in (("baseline", base), ("candidate", cand)):
        absent = [k for k in key if k not in frame.columns]
        if absent:
            problems.append(f"{role} lacks key column {', '.join(absent)}")
        elif key and frame.duplicated(list(key)).any():
            problems.append(f"{role} has duplicate keys")
    return problems


def _cell_diffs(
    base: pd.Series, cand: pd.Series, labels: Sequence[str], column: str, spec: Mapping[str, Any]
) -> list[Difference]:
    tol = tolerance_for(spec, column)
    differs = (base.to_numpy() != cand.to_numpy()).nonzero()[0]
    found = []
    for i in differs:
        diff = judge(f"{labels[i]} / {column}", str(base.iloc[i]), str(cand.iloc[i]), tol)
        if diff is not None:
            found.append(diff)
    return found


def compare_csv(
    path: str, base_bytes: bytes, cand_bytes: bytes, spec: Mapping[str, Any]
) -> OutputDiff:
    """Explain a CSV (kind csv) or TSV (kind tsv) difference under the spec's tolerances."""
    kind = spec.get("kind", "csv")
    base, cand = (
        read(base_bytes, "\t" if kind == "tsv" else ","),
        read(cand_bytes, "\t" if kind == "tsv" else ","),
    )
    key = list(spec.get("key", []))
    ignore = set(spec.get("ignore", [])) - set(key)
    problems = _key_problems(base, cand, key)
    if problems:
        return OutputDiff(path, kind, False, "; ".join(problems))
    cols_b = [c for c in base.columns if c not in ignore and c not in key]
    cols_c = [c for c in cand.columns if c not in ignore and c not in key]
    extra = [f"column {c} added" for c in cols_c if c not in cols_b]
    extra += [f"column {c} dropped" for c in cols_b if c not in cols_c]
    base_labels, cand_labels = _labels(base, key), _labels(cand, key)
    base.index, cand.index = base_labels, cand_labels
    cand_set, base_set = set(cand_labels), set(base_labels)
    added = [k for k in cand_labels if k not in base_set]
    dropped = [k for k in base_labels if k not in cand_set]
    if added:
        extra.append(f"{len(added)} rows added")
    if dropped:
        extra.append(f"{len(dropped)} rows dropped")
    common = [k for k in base_labels if k in cand_set]
    diffs: list[Difference] = []
    for column in (c for c in cols_b if c in cols_c):
        diffs += _cell_diffs(
            base.loc[common, column], cand.loc[common, column], common, column, spec
        )
    out = [d for d in diffs if not d.within]
    within = [d for d in diffs if d.within]
    keys = tuple(dict.fromkeys(d.where.rsplit(" / ", 1)[0] for d in out))
    return OutputDiff(
        path=path,
        kind=kind,
        within_tolerance=not out and not extra,
        summary=summary(out, within, extra),
        columns=tuple(dict.fromkeys(d.where.rsplit(" / ", 1)[1] for d in out)),
        keys=keys[:SHOWN_KEYS],
        keys_total=len(keys),
        rows_added=tuple(added[:SHOWN_KEYS]),
        rows_dropped=tuple(dropped[:SHOWN_KEYS]),
        largest=largest(diffs, int(spec.get("top", DEFAULT_TOP))),
    )
