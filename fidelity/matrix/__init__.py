"""The case matrix: both sides of a change run under one table, then compared case by case.

Read from the bottom up: `table` (case tables), `evidence` and the comparators (`diffs`,
`csvcmp`, `valuecmp`), `compare`, `findings`, `predict` and `outcome` (the pure verdict);
`runner`, `rundir`, `harness`, `gate` and `rejudge` (the shell that produces and re-reads
evidence); `words`, `render` and `reports` (how a verdict is said).
"""
