"""What a commit in an agent's line would record, judged before the line runs.

The content is the index the commit uses: the repository's own, or the one GIT_INDEX_FILE
names (a relative path is read from the top of the work tree, as git reads it). When the
line stages (`-a`, paths, `git add` first, a commit in doubt), that index is judged again
with the files of the work tree the commit stages from: the repository's own (then the
whole work tree too, untracked files included), or the one `--work-tree`, GIT_WORK_TREE or
a bare GIT_DIR names (its tracked files, as `commit -a` takes them). The index is copied
into scratch space first: the user's index files are only read.

The message is what the line states (`-m`, `-F FILE`, a here-document), with the
`--trailer` values added the way git adds them (`fidelity.git.message`); when the line
states no message, the trailers are judged on their own, and a required trailer they lack
is not reported (the unseen message may hold it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from fidelity.git import message as git_message
from fidelity.git import stage
from fidelity.preflight.gitcli import Commit
from fidelity.preflight.outcome import Report
from fidelity.preflight.run import Request, run

UNSEEN = "(the message the hook cannot read)\n"


@dataclass(frozen=True, slots=True)
class Message:
    """The message file the trailers gate reads (None: no message to judge), whether it
    holds only the trailers, and what the hook could not read of it."""

    path: Path | None
    partial: bool = False
    notes: tuple[str, ...] = ()


def message(commit: Commit, repo: Path, scratch: Path) -> Message:
    text = _stated(commit)
    trailers = commit.trailers
    if trailers is None:
        if commit.message is None and commit.message_file not in (None, "-"):
            return Message(Path(commit.cwd, commit.message_file or ""))
        return Message(_write(scratch, text) if text is not None else None)
    where = Path(commit.cwd) if Path(commit.cwd).is_dir() else repo
    config = git_message.trailer_config(where, trailers.settings, dict(trailers.env))
    notes = [f"{key} runs a program, not run here" for key in git_message.runs_commands(config)]
    if trailers.unknown:
        notes.append(trailers.unknown)
    body = text if text is not None else UNSEEN
    final = git_message.with_trailers(body, trailers.values, config, scratch)
    return Message(_write(scratch, final), text is None or bool(notes), tuple(notes))


def _stated(commit: Commit) -> str | None:
    if commit.message is not None:
        return commit.message
    if commit.message_file in (None, "-"):
        return None
    path = Path(commit.cwd, commit.message_file or "")
    return path.read_text(encoding="utf-8", errors="surrogateescape") if path.is_file() else None


def _write(scratch: Path, text: str) -> Path:
    path = scratch / "COMMIT_EDITMSG"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return path


def place(commit: Commit, repo: Path) -> tuple[Path | None, Path | None]:
    """(index file, work tree) the commit uses where they are not the repository's own."""
    tree = Path(commit.place.work_tree) if commit.place.work_tree else None
    if tree is not None and tree.resolve() == repo.resolve():
        tree = None
    index = None
    if commit.place.index is not None:
        named = Path(os.path.expanduser(commit.place.index))
        index = named if named.is_absolute() else (tree or repo) / named
    return index, tree


def reports(commit: Commit, repo: Path, scratch: Path, said: Message) -> list[Report]:
    """The judged contents' reports: the index the commit uses, and with what it stages."""
    base = Request(repo, amend=commit.amend, message=said.path, partial=said.partial)
    index, tree = place(commit, repo)
    if index is None and tree is None:
        found = [run(replace(base, staged=True))]
        return found + [run(base)] if commit.stages else found
    label = f"the index {index}" if index is not None else "the index"
    own = scratch / "commit.index"
    stage.copy_index(repo, index, own)
    found = [run(replace(base, staged=True, index=own, label=label))]
    if commit.stages:
        staged = scratch / "staged.index"
        stage.copy_index(repo, index, staged)
        stage.stage_from(repo, tree or repo, staged, untracked=bool(commit.doubt))
        what = f"{label} with the files of the work tree {tree or repo}"
        found.append(run(replace(base, staged=True, index=staged, label=what)))
        if tree is None:
            found.append(run(base))
    return found
