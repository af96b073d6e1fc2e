"""The case matrix: both sides of a change run under one table, then compared case by case.

Read from the bottom up: the pure core first, then the shell that produces and re-reads
evidence, then how a verdict is said. Outputs are compared by value by the comparator
kinds of `fidelity.kinds`, which the verdict asks and never names.

- `table`: case tables: TOML matrices validated against the shipped schema, frozen values
- `outputs`: declared outputs: which files a case writes and the name each is compared under
- `specs`: comparison specs: table-wide defaults resolved per case, blocks that misfire
- `evidence`: what one side of a run produced, as frozen values that round-trip run.json
- `spread`: a nondeterministic case's spread, and whether a difference stays within it
- `compare`: the comparison: pure functions from two sides' evidence to one verdict per case
- `widening`: has the harness loosened a comparison since the baseline's own table
- `findings`: provenance findings: every reason the comparison could not be trusted
- `accept`: findings a table accepts and a prediction expects: shown and counted, never silent
- `ontime`: whether a prediction was committed before the change it predicts (`prediction-late`)
- `predict`: predictions: the move set stated before measuring, so the result can falsify it
- `outcome`: a matrix verdict as a value, and the one rule that makes it an exit code
- `subset`: the cases a run runs: a selection or a shard of the table, partial or whole
- `shards`: a deterministic share of the cases for one CI job, balanced by past durations
- `request`: what one `fidelity run` is asked, one typed value from the CLI (plan.json's part)
- `harness`: where the case table and the prediction of a run are read from
- `harness_tree`: the harness revision's files, checked out once per run for `{harness}`
- `files`: the files a case left in its output and cache folders, links never followed
- `importguard`: where each checked module resolves, with the side's own interpreter
- `setups`: a side's set-up worktree, kept and reused while its commit and setup match
- `repo_state`: what a run must leave as it found it in the user's repository, and changes
- `replay`: a case run again on its own side (cold then warm, or cold again), judged
- `sidechanges`: what a side's cases changed in their own worktree (HEAD, index, files)
- `importpath`: the side's worktree first on PYTHONPATH for a case that names `{harness}`
- `runner`: runs one side in its own worktree: setup, import guard, every case
- `restart`: `--resume-if-exists`: a rescheduled job finds its own run directory and goes on
- `ledger`: what a run has done so far, kept as it happens, so a run can be resumed
- `untrusted`: a run directory's JSON files checked as untrusted input before they are read
- `rundir`: the run directory: run.json beside per-side, per-case evidence
- `plan`: a run plan: what one `fidelity run` is, fixed before any case runs (plan.json)
- `gate`: `fidelity run`: both sides under one harness table, compared, written
- `recheck`: a run directory's evidence files hashed again against run.json
- `rejudge`: `fidelity compare` and `fidelity verify`: a stored run judged again
- `merge`: `fidelity merge`: shards of one run, combined and judged as one
- `explain`: moved outputs explained from the files kept in the run directory
- `words`: the words of a verdict, shared by the terminal and the Markdown report
- `render`: terminal rendering of a matrix outcome through an injected rich Console
- `reports`: reports for CI: Markdown (PR comment, step summary), JUnit, JSON
- `housekeeping`: `fidelity gc`: old runs and kept set-up worktrees, listed and removed
- `removal`: removing a folder fidelity made, and measuring it, never through a link
"""
