"""Keyed record tables merged by key: the `fidelity merge-records` git merge driver.

- `keyed`: the pure three-way merge of keyed Markdown tables by key
- `driver`: the git merge driver itself (`fidelity merge-records %O %A %B %P`)
- `audit`: did a merge, made by anyone, keep every keyed record row (pure)
- `lost`: did a range of commits keep every keyed record row (pure)
"""
