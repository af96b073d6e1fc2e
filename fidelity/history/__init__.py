"""Evidence read from git history: stale record rows, landed claims and commit trailers.

- `landing`: what "landed" means, once: a commit's work is on the ref (ancestor or patch)
- `stale`: `fidelity stale`: is each keyed record row still current on the reference branch
- `landed`: `fidelity landed`: did the commits and symbols a piece of work builds on land
- `trailers`: `fidelity trailers`: commit trailers read from git, judged by checkers.trailers
"""
