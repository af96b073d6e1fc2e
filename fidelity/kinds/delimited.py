"""Kinds `csv` and `tsv`: one module, the separator its parameter.

Rows are aligned on `key` columns (else by position), `ignore`d columns are never compared,
numbers are judged with `rtol`/`atol`, globally or per column (`csvcmp`). A moved column is
a part of the file under a nondeterministic case's spread, and gets a figure in the HTML
report (`csvseries`). pandas and numpy are imported only once a file differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fidelity import blas
from fidelity.kinds.base import Change, Plain, Series, Spec, largest_changes
from fidelity.kinds.diffs import OutputDiff
from fidelity.kinds.sources import Neutral, Source

_READS = frozenset({"key", "ignore", "rtol", "atol", "columns", "top", "own_paths"})


@dataclass(frozen=True, slots=True)
class Delimited(Plain):
    name: str
    sep: str
    reads: frozenset[str] = _READS
    tolerant: bool = True
    where_is_key: bool = False  # `where` is a row's key and a column: keys are listed
    plots: bool = True

    def explain(
        self, path: str, base: Source, cand: Source, spec: Spec, neutral: Neutral
    ) -> OutputDiff:
        blas.load_numpy()  # one BLAS thread, before the module below imports numpy
        from fidelity.kinds.csvcmp import Dialect, compare_csv  # pandas: only when one differs

        return compare_csv(path, base, cand, spec, neutral, dialect=Dialect(self.name, self.sep))

    def parts(self, found: OutputDiff) -> tuple[str, ...] | None:
        return found.columns

    def part(self, where: str) -> str:
        return where.rsplit(" / ", 1)[-1]  # `key / column`

    def changes(self, found: OutputDiff) -> tuple[list[Change], int]:
        return largest_changes(found, quote=True)  # a cell is bare text: "" and " x" show

    def plotted(self, found: OutputDiff) -> tuple[str, ...]:
        blas.load_numpy()  # one BLAS thread, before the module below imports numpy
        from fidelity.kinds.csvseries import columns

        return columns(found)

    def series(
        self, found: OutputDiff, files: tuple[Path, Path], spec: Spec, limit: int
    ) -> list[Series]:
        blas.load_numpy()  # one BLAS thread, before the module below imports numpy
        from fidelity.kinds import csvseries

        return csvseries.series(found, files, spec, self.sep, limit)


CSV = Delimited("csv", ",")
TSV = Delimited("tsv", "\t")
