"""Keyed record tables merged by key: the `fidelity merge-records` git merge driver."""
