"""Every git process fidelity starts, hardened against the user's setup; one module per noun.

- `command`: the runner the others go through (argv, scrubbed environment, timeout, `GitError`)
- `objects`: revisions and the objects they name (commits, blobs, trees, batch reads)
- `worktrees`: a work tree's top, status and HEAD; the worktrees fidelity adds and removes
- `stage`: the index as a commit would record it, scratch index files, commits built from them
- `export`: a tree's files written into a plain folder, and what was changed there since
- `patches`: diffs between commits, patches applied or checked, git's three-way file merge
- `gitdir`: the shared repository directory: refs, config, hooks, aliases, merge state files
- `message`: a commit message with `--trailer` values added as git adds them
- `log`: history queries (ancestry, logs, trailers, patch ids, the commit graph), batched
"""
