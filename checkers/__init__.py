"""Markdown record checkers and commit-trailer checks, importable without the rest of fidelity."""
