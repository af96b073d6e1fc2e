"""`fidelity trailers`: commit messages and their trailers read from git, judged by the
pure rules of `checkers.trailers`.

Trailers are read by git's own parser (`git interpret-trailers --parse`), so what counts as
a trailer is exactly what git and its tooling see: the last paragraph only, folded lines
unfolded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from checkers.trailers import (
    Checked,
    Finding,
    Rules,
    TrailerReport,
    check_message,
    check_size,
    rules_from_config,
)
from fidelity import config, git
from fidelity.errors import UsageError


@dataclass(frozen=True, slots=True)
class GitProbe:
    """Answers for one commit (`rev`), or for the commit being made (`rev=None`: HEAD is
    its parent and the index is its tree), as in a commit-msg hook."""

    repo: Path
    rev: str | None

    def commit_problem(self, value: str) -> str | None:
        sha = git.resolve(self.repo, value)
        if sha is None:
            return "names no commit in this repository"
        tip = self.rev or git.resolve(self.repo, "HEAD")
        if tip is None:
            return "cannot be an ancestor: the repository has no commits yet"
        if not git.is_ancestor(self.repo, sha, tip):
            return f"is not an ancestor of {tip[:12]}"
        return None

    def has_path(self, value: str) -> bool:
        return git.path_in_tree(self.repo, self.rev, value)


def _one(repo: Path, where: str, message: bytes) -> Checked:
    trailers = tuple(git.parse_trailers(repo, message))
    text = message.decode(errors="replace")
    subject = text.strip().splitlines()[0] if text.strip() else ""
    return Checked(where, subject, trailers)


def check_file(repo: Path, path: Path, rules: Rules) -> TrailerReport:
    """The commit-msg hook: the message being written, against HEAD and the index."""
    try:
        message = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read message file {path}: {exc.strerror}") from None
    checked = _one(repo, str(path), message)
    text = message.decode(errors="replace")
    probe = GitProbe(repo, None)
    findings = check_message(str(path), text, checked.trailers, rules, probe)
    return TrailerReport((checked,), findings, source=str(path))


def check_range(repo: Path, spec: str, rules: Rules) -> TrailerReport:
    """Every non-merge commit in `A..B`, and the size rule over the range's diff."""
    base, sep, tip = spec.partition("..")
    if not sep or tip.startswith("."):
        raise UsageError(f"--range {spec!r}: give it as A..B (two revisions), e.g. main..HEAD")
    base_sha, tip_sha = git.rev_parse(repo, base or "HEAD"), git.rev_parse(repo, tip or "HEAD")
    checked: list[Checked] = []
    findings: list[Finding] = []
    for sha, _ in git.log_commits(repo, [f"{base_sha}..{tip_sha}"], no_merges=True):
        message = git.commit_message(repo, sha)
        one = _one(repo, sha[:12], message)
        checked.append(one)
        text = message.decode(errors="replace")
        findings += check_message(one.where, text, one.trailers, rules, GitProbe(repo, sha))
    size = git.diff_size(repo, base_sha, tip_sha) if rules.sized and checked else None
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
    """A message file being written (commit-msg hook), or every commit of a range."""
    if message_file is not None:
        return check_file(repo, message_file, rules(repo))
    if spec is None:
        raise UsageError("name a --message-file or a --range A..B")
    return check_range(repo, spec, rules(repo))
