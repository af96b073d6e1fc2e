"""The shell examples of the documentation, read and run as a reader would type them.

Every fenced `sh`, `bash`, `console` or `shell` block (or one with no language) in README.md,
AGENTS.md and docs/ carries an HTML comment on the lines just before it, which GitHub does
not render:

    <!-- example: exit=1 expect="MOVED: 3 moved" -->   run it; check exits and lines
    <!-- example: skip="needs Slurm (sbatch)" -->      not runnable here, and why
    <!-- example: ran-by=.ci/run -->                   .ci/run runs each command verbatim

A runnable block runs in a scratch copy of the demo repository (`fidelity demo`'s: HEAD at
the fix, `origin/main` at the refactor) with this interpreter's `fidelity` and `python`
first on PATH. Its words, read by shlex, all optional and repeatable where it makes sense:

- `exit=1,0`: each command's exit code, in order (default: every one 0);
- `expect="TEXT"`: a line of the output (stdout and stderr) holds TEXT;
- `env=NAME=VALUE`: a variable the reader is assumed to have (`GITHUB_STEP_SUMMARY`);
- `where=OLD=NEW`: OLD in the block is the reader's to fill (`<run>`); NEW is shell text;
- `before=CMD`, `then=CMD`: unseen set-up and checks around the block; each must exit 0.

In a `console` block, lines starting `$ ` are the commands and the other lines expected
output, as in a cram transcript. A new example is text: no test code changes.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

SHELL = frozenset({"", "sh", "bash", "console", "shell", "shell-session", "zsh"})
RUN_KEYS = frozenset({"exit", "expect", "env", "where", "before", "then"})
ANNOTATION = re.compile(r"<!--\s*example:(?P<words>.*?)-->", re.S)
MARK = "@@fidelity-example"


@dataclass(frozen=True, slots=True)
class Example:
    """One fenced shell block and the annotation before it (None: unmarked)."""

    page: str  # relative to the repository
    line: int  # the opening fence's line, 1-based
    lang: str
    body: str
    words: tuple[str, ...] | None
    unreadable: str = ""  # why shlex could not read the comment's words

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do with a runnable example: the shell steps and what they must give."""

    before: tuple[str, ...]
    commands: tuple[str, ...]
    then: tuple[str, ...]
    exits: tuple[int, ...]
    expect: tuple[str, ...]
    env: tuple[tuple[str, str], ...]


def examples(page: str, text: str) -> list[Example]:
    """The page's shell blocks, each with the words of the `example:` comment before it."""
    tokens = MarkdownIt("commonmark").parse(text)
    found = []
    for i, token in enumerate(tokens):
        lang = token.info.strip().split(" ")[0] if token.type == "fence" else None
        if lang is None or lang not in SHELL or token.map is None:
            continue
        before = tokens[i - 1] if i else None
        marked = (
            ANNOTATION.search(before.content) if before and before.type == "html_block" else None
        )
        found.append(_example(page, token.map[0] + 1, lang, token.content, marked))
    return found


def _example(page: str, line: int, lang: str, body: str, marked: re.Match[str] | None) -> Example:
    if marked is None:
        return Example(page, line, lang, body, None)
    try:
        return Example(page, line, lang, body, tuple(shlex.split(marked.group("words"))))
    except ValueError as exc:  # an unclosed quote
        return Example(page, line, lang, body, (), f"{exc}")


def pages(root: Path) -> list[Path]:
    """README.md, AGENTS.md and every Markdown page under docs/."""
    return [root / "README.md", root / "AGENTS.md", *sorted((root / "docs").rglob("*.md"))]


def collect(root: Path) -> list[Example]:
    return [
        e
        for p in pages(root)
        for e in examples(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
    ]


def pairs(words: Iterable[str]) -> list[tuple[str, str]]:
    return [(w.partition("=")[0], w.partition("=")[2]) for w in words]


def problems(example: Example) -> list[str]:
    """Why the annotation is not usable: missing, a key it does not know, a skip with no
    reason or with run words, a malformed exit list."""
    if example.words is None:
        return [
            f"{example.where}: a shell example with no annotation; put "
            '<!-- example: ... --> before the fence (exit=, expect=; or skip="why")'
        ]
    if example.unreadable:
        return [f"{example.where}: the example comment cannot be read: {example.unreadable}"]
    given = pairs(example.words)
    found = [f"{example.where}: unknown word {k!r}" for k, _ in given if not _known(k)]
    keys = dict(given)
    if "skip" in keys and (not keys["skip"].strip() or len(keys) > 1):
        found.append(f"{example.where}: skip needs a reason and no other words")
    if "ran-by" in keys and len(keys) > 1:
        found.append(f"{example.where}: ran-by takes no other words")
    if "exit" in keys and not re.fullmatch(r"\d+(,\d+)*", keys["exit"]):
        found.append(f"{example.where}: exit={keys['exit']!r} is not a list of exit codes")
    return found


def _known(key: str) -> bool:
    return key in RUN_KEYS or key in ("skip", "ran-by")


def kind(example: Example) -> str:
    """What the annotation asks for: skip, ran-by, or run (the default)."""
    keys = {k for k, _ in pairs(example.words or ())}
    return "skip" if "skip" in keys else "ran-by" if "ran-by" in keys else "run"


def commands(body: str, lang: str) -> tuple[list[str], list[str]]:
    """The block's commands (continuations joined, comment lines dropped) and, in a console
    transcript, the output lines it shows."""
    lines = re.sub(r"[ \t]*\\\n\s*", " ", body).splitlines()
    if lang == "console":
        typed = [line[2:] for line in lines if line.startswith("$ ")]
        shown = [line for line in lines if line.strip() and not line.startswith("$ ")]
        return typed, shown
    typed = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return typed, []


def plan(example: Example) -> Plan:
    words = pairs(example.words or ())
    body = example.body
    for key, value in words:
        if key == "where":
            old, _, new = value.partition("=")
            body = body.replace(old, new)
    typed, shown = commands(body, example.lang)
    exits = next((v for k, v in reversed(words) if k == "exit"), "")
    return Plan(
        before=tuple(v for k, v in words if k == "before"),
        commands=tuple(typed),
        then=tuple(v for k, v in words if k == "then"),
        exits=tuple(int(c) for c in exits.split(",")) if exits else (0,) * len(typed),
        expect=tuple(shown) + tuple(v for k, v in words if k == "expect"),
        env=tuple((v.partition("=")[0], v.partition("=")[2]) for k, v in words if k == "env"),
    )


def script(steps: Iterable[tuple[str, str]]) -> str:
    """One bash script: each step, then a marker line with its name and exit code."""
    lines = ["exec 2>&1"]
    for name, step in steps:
        lines += [step, f"printf '\\n{MARK} {name} %d\\n' $?"]
    return "\n".join(lines) + "\n"


def environment(home: Path, extra: Iterable[tuple[str, str]]) -> dict[str, str]:
    """This interpreter's `fidelity` and `python` first on PATH; no inherited GIT_* or
    GITHUB_* variables; a HOME of the example's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(HOME=str(home), NO_COLOR="1", **dict(extra))
    return env


def run(example: Example, cwd: Path, home: Path) -> tuple[list[str], str]:
    """Run the example in cwd; what went wrong (empty: it works as documented) and the
    output it gave."""
    todo = plan(example)
    steps = [("before", s) for s in todo.before] + [("command", c) for c in todo.commands]
    steps += [("then", s) for s in todo.then]
    done = subprocess.run(
        ["bash", "-c", script(steps)],
        cwd=cwd,
        env=environment(home, todo.env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return verdict(example, todo, steps, done.stdout), done.stdout


def verdict(example: Example, todo: Plan, steps: list[tuple[str, str]], output: str) -> list[str]:
    """The differences between what the example gave and what its annotation says."""
    codes = [int(m.group(2)) for m in re.finditer(rf"^{MARK} (\w+) (\d+)$", output, re.M)]
    if len(codes) != len(steps):
        return [f"{example.where}: the block ran {len(codes)} of {len(steps)} steps"]
    found = []
    wanted = iter(todo.exits)
    for (name, step), code in zip(steps, codes, strict=True):
        want = next(wanted, 0) if name == "command" else 0
        if code != want:
            found.append(f"{example.where}: `{step}` exited {code}, documented {want}")
    if len(todo.exits) != len(todo.commands):
        found.append(
            f"{example.where}: exit= lists {len(todo.exits)} codes for "
            f"{len(todo.commands)} commands"
        )
    lines = [line.rstrip() for line in output.splitlines()]
    for text in todo.expect:
        if not any(text.strip() in line for line in lines):
            found.append(f"{example.where}: no line of the output holds {text!r}")
    return found


def ran_by(example: Example, root: Path) -> list[str]:
    """Each command of the block is a line of the script that runs it (`ran-by=PATH`)."""
    path = dict(pairs(example.words or ())).get("ran-by", "")
    target = root / path
    if not path or not target.is_file():
        return [f"{example.where}: ran-by={path!r} names no file"]
    lines = {line.strip() for line in target.read_text(encoding="utf-8").splitlines()}
    typed, _ = commands(example.body, example.lang)
    return [f"{example.where}: {path} does not run `{c}`" for c in typed if c.strip() not in lines]
