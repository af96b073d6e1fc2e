"""A generated git history for the history benchmarks, built with one `git fast-import`.

Deterministic for a seed: a main line with direct commits, feature branches merged with a
merge commit, squash-merged, cherry-picked or left unmerged, reverts, and messages with
real trailer shapes (sign-offs, Gerrit Change-Ids, Dependabot's `---` block). Each commit
replaces a line or two in one to three of 300 small files. Used by scripts/bench_history.py;
not part of the package.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

FILES = (
    [f"src/mod{i:03d}.py" for i in range(150)]
    + [f"docs/page{i:03d}.md" for i in range(75)]
    + [f"tests/test_{i:03d}.py" for i in range(75)]
)
LINES = 24


@dataclass
class Facts:
    """What the benchmarks need to know about the generated history (shas filled in last)."""

    main: list[str] = field(default_factory=list)  # main-line commits, oldest first
    unmerged: list[str] = field(default_factory=list)  # tips of branches never merged
    squashed: list[str] = field(default_factory=list)  # tips of branches squash-merged
    picked: list[str] = field(default_factory=list)  # branch commits cherry-picked onto main
    reverted: list[str] = field(default_factory=list)  # main commits reverted later
    merges: int = 0
    commits: int = 0


class _Stream:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.mark = 0
        self.time = 1_600_000_000

    def data(self, text: str) -> None:
        raw = text.encode()
        self.chunks.append(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(
        self,
        message: str,
        changes: dict[str, list[str]],
        parents: list[int],
        ref: str = "refs/heads/main",
        who: int = 0,
    ) -> int:
        self.mark += 1
        self.time += 60
        ident = f"Dev {who} <dev{who}@example.invalid> {self.time} +0000"
        self.chunks.append(
            f"commit {ref}\nmark :{self.mark}\nauthor {ident}\ncommitter {ident}\n".encode()
        )
        self.data(message)
        if parents:
            self.chunks.append(f"from :{parents[0]}\n".encode())
        for extra in parents[1:]:
            self.chunks.append(f"merge :{extra}\n".encode())
        for path, lines in sorted(changes.items()):
            self.chunks.append(f"M 100644 inline {path}\n".encode())
            self.data("".join(line + "\n" for line in lines))
        return self.mark


def _message(rng: random.Random, subject: str, n: int) -> str:
    body = f"{subject}\n\nWhy change {n}: keep the figures honest.\n"
    roll = rng.random()
    if roll < 0.05:
        return (
            f"{subject}\n\nBumps dep{n} from 1.0 to 1.1.\n\n---\nupdated-dependencies:\n"
            f"- dependency-name: dep{n}\n...\n\nSigned-off-by: dependabot[bot] "
            "<support@github.com>\n"
        )
    trailers = [f"Signed-off-by: Dev {n % 7} <dev{n % 7}@example.invalid>"]
    if roll < 0.2:
        trailers.append(f"Change-Id: I{n:040x}")
    if roll > 0.9:
        return body  # no trailer at all
    return body + "\n" + "\n".join(trailers) + "\n"


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.s = _Stream()
        self.state = {p: [f"{p}:{i} = 0" for i in range(LINES)] for p in FILES}
        self.touched: dict[str, int] = {}  # path -> main commit count when last changed
        self.count = 0  # main commits so far
        self.n = 0
        self.facts_marks: dict[str, list[int]] = {
            k: [] for k in ("main", "unmerged", "squashed", "picked", "reverted")
        }
        self.merges = 0
        self.head = 0
        self.last_change: dict[int, tuple[dict[str, list[str]], dict[str, list[str]]]] = {}

    def edit(self, state: dict[str, list[str]], paths: list[str]) -> dict[str, list[str]]:
        changes = {}
        for path in paths:
            lines = list(state[path])
            self.n += 1
            lines[self.rng.randrange(LINES)] = f"{path}:{self.n} = {self.rng.randrange(10**6)}"
            changes[path] = lines
        return changes

    def main_commit(self, changes: dict[str, list[str]], subject: str, parents: list[int]) -> int:
        before = {p: self.state[p] for p in changes}
        self.head = self.s.commit(_message(self.rng, subject, self.n), changes, parents, who=1)
        self.state.update(changes)
        self.count += 1
        for p in changes:
            self.touched[p] = self.count
        self.facts_marks["main"].append(self.head)
        self.last_change[self.head] = (before, changes)
        return self.head

    def quiet_files(self, k: int, exclude: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        pool = [p for p in FILES if p not in exclude]
        return self.rng.sample(pool, k)

    def direct(self) -> None:
        paths = self.quiet_files(self.rng.randint(1, 3))
        self.main_commit(
            self.edit(self.state, paths), f"change {self.n}", [self.head] if self.head else []
        )

    def branch(self, fate: str) -> None:
        base, base_state = self.head, dict(self.state)
        own = set(self.rng.sample(FILES, 4))
        state = dict(base_state)
        tip = base
        branch_commits = []
        for _ in range(self.rng.randint(1, 4)):
            changes = self.edit(state, self.rng.sample(sorted(own), self.rng.randint(1, 2)))
            ref = f"refs/heads/feature/{self.s.mark + 1}"
            tip = self.s.commit(
                _message(self.rng, f"feature step {self.n}", self.n), changes, [tip], ref, who=2
            )
            state.update(changes)
            branch_commits.append((tip, changes))
        for _ in range(self.rng.randint(0, 3)):  # main moves on meanwhile, elsewhere
            paths = self.quiet_files(1, own)
            self.main_commit(self.edit(self.state, paths), f"meanwhile {self.n}", [self.head])
        branch_diff = {p: state[p] for p in own if state[p] != base_state[p]}
        if fate == "merge":
            self.s.mark += 0
            self.main_commit(branch_diff, f"Merge feature {tip}", [self.head, tip])
            self.merges += 1
        elif fate == "squash" and all(self.state[p] == base_state[p] for p in branch_diff):
            self.main_commit(branch_diff, f"feature {tip} (squashed)", [self.head])
            self.facts_marks["squashed"].append(tip)
        elif fate == "pick":
            mark, changes = branch_commits[0]
            if all(self.state[p] == base_state[p] for p in changes):
                self.main_commit(dict(changes), f"picked {mark}", [self.head])
                self.facts_marks["picked"].append(mark)
            self.facts_marks["unmerged"].append(tip)
        else:
            self.facts_marks["unmerged"].append(tip)

    def revert(self) -> None:
        for mark in reversed(self.facts_marks["main"][-30:]):
            if mark not in self.last_change:
                continue
            before, after = self.last_change[mark]
            if all(self.state[p] == after[p] for p in after) and before:
                self.main_commit(
                    dict(before), f'Revert "{mark}"\n\nThis reverts mark {mark}.', [self.head]
                )
                self.facts_marks["reverted"].append(mark)
                return

    def build(self, commits: int) -> None:
        self.direct()
        while self.s.mark < commits:
            roll = self.rng.random()
            if roll < 0.55:
                self.direct()
            elif roll < 0.75:
                self.branch("merge")
            elif roll < 0.85:
                self.branch("squash")
            elif roll < 0.9:
                self.branch("pick")
            elif roll < 0.97:
                self.branch("unmerged")
            else:
                self.revert()


def generate(dest: Path, commits: int, seed: int = 0) -> Facts:
    """A repository at dest with about `commits` commits; the facts about it, as shas."""
    b = _Builder(seed)
    b.build(commits)
    dest.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True, env=env)
    marks = dest / ".git" / "bench-marks"
    subprocess.run(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=dest,
        input=b"".join(b.s.chunks) + b"done\n",
        check=True,
        env=env,
    )
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=dest, check=True, env=env)
    sha = {}
    for line in marks.read_text().splitlines():
        mark, _, value = line.partition(" ")
        sha[int(mark[1:])] = value
    facts = Facts(merges=b.merges, commits=b.s.mark)
    for key, found in b.facts_marks.items():
        setattr(facts, key, [sha[m] for m in found])
    return facts
