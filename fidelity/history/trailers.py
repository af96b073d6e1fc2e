"""`fidelity trailers`: commit messages and their trailers read from git, judged by the
pure rules of `checkers.trailers`.

Trailers are what `git log --format=%(trailers)` reads: the last paragraph only, folded
lines unfolded, and a `---` line (a pasted diff, a bot's separator) not taken as the end of
the message. A range is read by one `git log`; the repository questions its trailers raise
(does this commit exist, is it an ancestor, does this path exist) are answered in batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from checkers.trailers import (
    Checked,
    Finding,
    Rules,
    TrailerReport,
    Verify,
    check_message,
    check_size,
    clean,
    rules_from_config,
)
from fidelity import config
from fidelity.errors import UsageError
from fidelity.git import log, objects


@dataclass(frozen=True, slots=True)
class Answers:
    """Answers for one commit (`rev`), or for the commit being made (`rev=None`: HEAD is
    its parent and the index is its tree), as in a commit-msg hook; looked up from what
    `ask` collected for every message at once."""

    rev: str | None
    tip: str | None  # the commit the values must be ancestors of
    commits: Mapping[str, str | None] = field(default_factory=dict)  # value -> sha
    ancestors: frozenset[tuple[str, str]] = frozenset()  # (sha, tip) pairs that hold
    paths: frozenset[str] = frozenset()  # values that name a path at rev

    def commit_problem(self, value: str) -> str | None:
        sha = self.commits.get(value)
        if sha is None:
            return "names no commit in this repository"
        if self.tip is None:
            return "cannot be an ancestor: the repository has no commits yet"
        if (sha, self.tip) not in self.ancestors:
            return f"is not an ancestor of {self.tip[:12]}"
        return None

    def has_path(self, value: str) -> bool:
        return value in self.paths


def _values(trailers: Iterable[tuple[str, str]], rules: Rules, kind: Verify) -> list[str]:
    keys = {k.lower() for k, v in rules.verify.items() if v is kind}
    return [value for key, value in trailers if key.lower() in keys]


def ask(
    repo: Path, messages: Sequence[tuple[str | None, Sequence[tuple[str, str]]]], rules: Rules
) -> list[Answers]:
    """The repository answers each message's verified trailers need, in batched git calls
    (values resolved and paths looked up at once; ancestry checked per distinct pair)."""
    if not rules.verify:
        return [Answers(rev, rev) for rev, _ in messages]
    head = objects.resolve(repo, "HEAD") if any(rev is None for rev, _ in messages) else None
    wanted = sorted({v for _, t in messages for v in _values(t, rules, Verify.ANCESTOR)})
    commits = dict(
        zip(wanted, objects.object_ids(repo, [f"{v}^{{commit}}" for v in wanted]), strict=True)
    )
    lookups = []
    for rev, trailers in messages:
        for value in _values(trailers, rules, Verify.PATH):
            lookups.append((rev, value))
    found_paths = _paths(repo, lookups)
    answers = []
    for rev, trailers in messages:
        tip = rev or head
        pairs = {
            (sha, tip)
            for v in _values(trailers, rules, Verify.ANCESTOR)
            if (sha := commits.get(v)) and tip and log.is_ancestor(repo, sha, tip)
        }
        paths = frozenset(v for r, v in found_paths if r == rev)
        answers.append(Answers(rev, tip, commits, frozenset(pairs), paths))
    return answers


def _paths(repo: Path, lookups: Sequence[tuple[str | None, str]]) -> set[tuple[str | None, str]]:
    """The (rev, path) lookups that name a file or directory at rev (the index for None)."""
    found: set[tuple[str | None, str]] = set()
    in_trees = [(rev, value) for rev, value in lookups if rev is not None]
    names = [f"{rev}:{value.strip('/')}" for rev, value in in_trees]
    for pair, oid in zip(in_trees, objects.object_ids(repo, names), strict=True):
        if oid is not None and value_ok(pair[1]):
            found.add(pair)
    for rev, value in lookups:
        if rev is None and value_ok(value) and log.path_in_tree(repo, None, value):
            found.add((rev, value))
    return found


def value_ok(value: str) -> bool:
    """A path value that names something inside the tree (not `..`, not empty)."""
    parts = value.strip("/").split("/")
    return bool(value.strip("/")) and ".." not in parts


def _checked(where: str, message: str, trailers: Sequence[tuple[str, str]]) -> Checked:
    subject = message.strip().split("\n")[0].rstrip("\r") if message.strip() else ""
    return Checked(where, subject, tuple(trailers))


def check_file(repo: Path, path: Path, rules: Rules) -> TrailerReport:
    """The commit-msg hook: the message being written, against HEAD and the index."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read message file {path}: {exc.strerror}") from None
    trailers = log.parse_trailers(repo, raw)
    text = raw.decode(errors="replace")
    checked = _checked(str(path), text, trailers)
    (answers,) = ask(repo, [(None, trailers)], rules)
    findings = check_message(str(path), text, checked.trailers, rules, answers)
    return TrailerReport((checked,), findings, source=str(path))


def check_range(repo: Path, ends: tuple[str, str], rules: Rules) -> TrailerReport:
    """Every non-merge commit of ``ends[0]..ends[1]`` (two commits), as `--range` judges it."""
    spec = f"{ends[0][:12]}..{ends[1][:12]}"
    return _judge_range(repo, spec, ends, log.log_trailers(repo, [f"{ends[0]}..{ends[1]}"]), rules)


def _range(repo: Path, spec: str) -> tuple[str, str]:
    base, sep, tip = spec.partition("..")
    if not sep or tip.startswith("."):
        raise UsageError(f"--range {spec!r}: give it as A..B (two revisions), e.g. main..HEAD")
    return objects.rev_parse(repo, base or "HEAD"), objects.rev_parse(repo, tip or "HEAD")


def _judge_range(
    repo: Path,
    spec: str,
    ends: tuple[str, str],
    commits: Sequence[tuple[str, str, list[tuple[str, str]]]],
    rules: Rules,
) -> TrailerReport:
    """A fast look at the trailers alone first; the few messages it flags are then read in
    full and judged, so that each finding is located on its line."""
    answers = ask(repo, [(sha, trailers) for sha, _, trailers in commits], rules)
    flagged = [sha for sha, _, trailers in commits if not clean(trailers, rules)]
    texts = log.messages(repo, flagged)
    checked = [Checked(sha[:12], subject, tuple(trailers)) for sha, subject, trailers in commits]
    findings: list[Finding] = []
    for (sha, _, trailers), probe in zip(commits, answers, strict=True):
        if sha in texts:
            findings += check_message(sha[:12], texts[sha], trailers, rules, probe)
    size = log.diff_size(repo, *ends) if rules.sized and checked else None
    if size is not None:
        findings += check_size(spec, *size, rules)
    return TrailerReport(tuple(checked), tuple(findings), size, spec)


def rules(repo: Path) -> Rules:
    """The rules of `[tool.fidelity.trailers]`; UsageError when there are none to keep."""
    section = config.load(repo).get("trailers")
    if not isinstance(section, dict):
        raise UsageError(
            f"{repo / 'pyproject.toml'}: no [tool.fidelity.trailers] table; configure "
            "`required`, `forbidden`, `verify` or a size limit before checking trailers"
        )
    found = rules_from_config(section, str(repo / "pyproject.toml"))
    if found.empty:
        raise UsageError("[tool.fidelity.trailers] sets no rule: nothing to check")
    return found


def check(repo: Path, message_file: Path | None, spec: str | None) -> TrailerReport:
    """A message file being written (commit-msg hook), or every commit of a range.

    For a range, git reads the messages while the configuration is loaded and validated
    (a schema library import that costs as much as reading 20,000 messages).
    """
    if message_file is not None:
        return check_file(repo, message_file, rules(repo))
    if spec is None:
        raise UsageError("name a --message-file or a --range A..B")
    ends = _range(repo, spec)
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(log.log_trailers, repo, [f"{ends[0]}..{ends[1]}"])
        found = rules(repo)
        commits = reading.result()
    return _judge_range(repo, spec, ends, commits, found)
