"""The command line: one module per command family, shared options defined once in `options`.

Modules here parse arguments, call a capability with plain values and render its result;
they hold no logic of their own and import heavy modules only inside their handlers.

- `main`: the entry point: parse, call a command's handler, turn errors into exit codes
- `options`: options shared by several commands, and the one writer of reports
- `console`: the terminal: one rich console per run, plain under `-q`
- `progress`: how far long work got: a bar on a terminal, plain lines in a log
- `plain`: the console of `-q`, apart so that importing the CLI does not import rich
- `report`: renders and writes reports that are a table, a summary line and JSON
- `boxtable`: a report's table drawn as rich draws it off a terminal, without rich
- `annotate`: GitHub annotations for a gate that did not hold, under GitHub Actions only
- `refused`: the reports a judge that could not judge still writes (JUnit, Markdown, HTML)
- `stale_worktrees`: removes the worktrees killed runs left, before a command makes its own
- `matrix`: `fidelity run|compare|verify|cases|merge`
- `html`: `fidelity report RUN_DIR --html FILE`, and the --html page of the gates
- `controls`: `fidelity controls ...` and `fidelity failset record|diff`
- `history`: `fidelity stale|landed|trailers`
- `preflight`: `fidelity preflight` and `fidelity install-hooks`
- `docs`: `fidelity check-docs`
- `records`: `fidelity merge-records`, the git merge driver for keyed record tables
- `ab`: `fidelity ab`
- `demo`: `fidelity demo`
- `gc`: `fidelity gc`: lists, and removes, old run directories and kept set-up worktrees
"""
