"""Mutation controls, negative controls and the failing-set baseline: can the tests fail?

`table`, `junit`, `verdict` and `failset` are the pure core; `edit`, `runner`, `gate` and
`negative` run test commands in their own worktrees; `render` says the verdicts.
"""
