"""Preflight: every gate that applies to a change, judged on what a commit would record.

It sits above the capabilities (it runs their validators and checkers on the staged
content) and below the command line: `fidelity preflight`, the agent hook and the git
hooks that `fidelity install-hooks` writes.

- `run`: plans and runs every gate over the judged content; the one entry CLI and hooks call
- `context`: what every gate is handed, and how a gate is declared
- `gates`: every gate as one row: its name, what it judges, when it applies, its check
- `settings`: `[tool.fidelity.preflight]`, validated by the shipped schema
- `tree`: the content being judged, and how it differs from the commit it would sit on
- `hookmode`: what a hook of the pre-commit framework is asked to judge
- `tables`: gates over TOML and JSON tables (cases, controls, predictions, failsets)
- `records`: gates over Markdown records: check-docs and ratchets, stale rows
- `rows`: the rows gate: a merge keeps every keyed record row, no key on two rows
- `message`: the trailers gate: the commit message being written
- `outcome`: what each gate found, and the verdict over all of them (pure)
- `render`: a report as plain lines, one per gate, then the closing count
- `hooks`: `fidelity install-hooks`: git hooks, the records merge driver, the agent's hook
- `agent`: the coding-agent hook: a pre-tool-use event in, allow (0) or block (2) out
- `agentsettings`: the coding agent's settings entry that runs the agent hook
- `merges`: the merges the rows gate judges: in a range, at HEAD, and one git is making
- `pushed`: what pre-push is asked to judge: each ref it updates, as a range
- `rangerows`: the rows gate over a range: every row its base holds or a commit adds stays
- `rewritten`: post-rewrite after a rebase: rows a rewritten commit lost, warned
- `recorded`: what a commit in an agent's line would record (index, work tree, message)
- `shell`: which commits a shell command line could create, where, with what message (pure)
- `shellwalk`: the tree-sitter walk over a command line: order, variables, stdin, nesting (pure)
- `shellgit`: one git invocation in a command line: where, commits or stages, aliases (pure)
- `shellwords`: the value of a shell word as bash would pass it (pure)
- `gitcli`: git's command line read for the agent hook: subcommand, cwd, commit (pure)
"""
