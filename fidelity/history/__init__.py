"""Evidence read from git history: stale record rows, landed claims and commit trailers."""
