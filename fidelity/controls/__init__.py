"""Mutation controls, negative controls and the failing-set baseline: can the tests fail?

`table`, `junit`, `failkinds`, `verdict` and `failset` are the pure core; `edit`, `runner`,
`gate` and `negative` run test commands in their own worktrees; `render` says the verdicts.

- `table`: control tables (TOML), validated against the shipped schema
- `anchors`: table mistakes found before anything runs (anchors, expected test ids)
- `junit`: JUnit XML read into test outcomes, several files merged into one run
- `failkinds`: how a test failed: an assertion, an exception, or a crash (`caught-by-error`)
- `verdict`: the pure core: what a test run of a tree says, and each control's verdict
- `selection`: which tests a control's edit can change (coverage-selected controls)
- `treenames`: the top-level packages and modules of a tree, for the import guard
- `diffsel`: `--in-diff BASE`: the controls a change since BASE can affect
- `edit`: a control's edits applied to its own worktree
- `inplace`: an edit that deletes lines of Python keeps later lines where they were
- `constants`: an edit that only gives a module-level name a new value: the functions that read it
- `linediff`: the statements of a function whose instructions an edit changes
- `runner`: how a control's test command is run: argv, environment, why a run said nothing
- `warm`: the client of a warm pytest, one per lane, forked per control
- `lane`: one worktree per worker, reused control after control, with its forked pytests
- `lanes`: the pool of lanes, one per worker, and the clean-up on Ctrl-C
- `unmodified`: the unmodified tree under each command: traced for selection, or its trace reused
- `reuse`: a passing traced run kept by tree, command and environment, for a later run
- `planning`: how each control is to run: its tests, its limit, its log, swapped or not
- `noop`: the no-op control: its command, its tests, its parts side by side, one per lane
- `gate`: `fidelity controls run`: table checks, the unmodified tree, every control, no-op
- `negative`: `fidelity controls negative`: a fix's tests must fail on the code they fix
- `authoring`: `suggest` and `validate`: controls that write themselves
- `fixtests`: the pure half of `from-fix`: hunks, the fix's tests, the expectation a run supports
- `hunkdeps`: which hunks of a fix stand or fall together, by the names they bind and use
- `fromfix`: `fidelity controls from-fix`: each hunk of a fix reverted, run, proposed, run again
- `failset`: the failing-set gate: the set of failing tests against a recorded baseline
- `render`: controls reports through an injected Console, and as JSON, Markdown, JUnit
"""
