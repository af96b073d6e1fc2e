"""The run machinery: what one `fidelity run` is asked, where it runs, and what it kept.

Each side runs in its own worktree; evidence is written as it happens to a run directory that
can be resumed, merged and re-read as untrusted input. Imports the case table and the
verdict, never the commands above it.

- `shards`: a deterministic share of the cases for one CI job, balanced by past durations
- `request`: what one `fidelity run` is asked, one typed value from the CLI (plan.json's part)
- `subset`: the cases a run runs: a selection or a shard of the table, partial or whole
- `untrusted`: a run directory's JSON files checked as untrusted input before they are read
- `harness_tree`: the harness revision's files, checked out once per run for `{harness}`
- `harness`: where the case table and the prediction of a run are read from
- `importpath`: the side's worktree first on PYTHONPATH for a case that names `{harness}`
- `repo_state`: what a run must leave as it found it in the user's repository, and changes
- `sidechanges`: what a side's cases changed in their own worktree (HEAD, index, files)
- `setups`: a side's set-up worktree, kept and reused while its commit and setup match
- `importguard`: where each checked module resolves, with the side's own interpreter
- `replay`: a case run again on its own side (cold then warm, or cold again), judged
- `workers`: work items run by a fixed number of threads, sized by `--jobs`, never the machine
- `runner`: runs one side in its own worktree: setup, import guard, every case
- `recheck`: a run directory's evidence files hashed again against run.json
- `stamps`: under `run`, each case's evidence files stamped as taken, looked at at the end
- `readonce`: under `compare`, each output read once: its comparator judges the bytes hashed
- `plan`: a run plan: what one `fidelity run` is, fixed before any case runs (plan.json)
- `ledger`: what a run has done so far, kept as it happens, so a run can be resumed
- `rundir`: the run directory: run.json beside per-side, per-case evidence
"""
