"""The case matrix: both sides of a change run under one table, then compared case by case.

Three rooms, each importing only the ones below it (the `matrix-rooms` import contract):
the commands at the top of this folder, then `run`, then `cases`, then `verdict`.

- `verdict`: two sides' evidence judged into one outcome and its words; starts no case
- `cases`: the case table and what a case declares: outputs, specs, the files it left
- `run`: the run machinery: request, plan, worktrees, replay, the resumable run directory
- `gate`: `fidelity run`: both sides under one harness table, compared, written
- `restart`: `--resume-if-exists`: a rescheduled job finds its own run directory and goes on
- `rejudge`: `fidelity compare` and `fidelity verify`: a stored run judged again
- `merge`: `fidelity merge`: shards of one run, combined and judged as one
- `reports`: reports for CI: Markdown (PR comment, step summary), JUnit, JSON
- `housekeeping`: `fidelity gc`: old runs and kept set-up worktrees, listed and removed
- `removal`: removing a folder fidelity made, and measuring it, never through a link
"""
