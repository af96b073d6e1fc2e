"""`fidelity install-hooks`: plain git hooks for people without the pre-commit framework,
and the record-table merge driver in the repository's own git config.

A hook file this command did not write (no marker line) is foreign: it is never
overwritten, and when one is in the way nothing at all is written. The hooks run the
interpreter fidelity was installed in, by absolute path, so a commit from a shell where
that venv is not activated still runs them; when that interpreter is gone the hook says so
and the commit stops (a hook that cannot judge must not pass).
"""

from __future__ import annotations

import enum
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from fidelity import config, git
from fidelity.errors import UsageError

MARKER = "# fidelity install-hooks: managed file; rerun `fidelity install-hooks` to update it"
DRIVER = "fidelity-records"
DRIVER_NAME = "fidelity keyed record tables (merge rows by key)"


class Action(enum.StrEnum):
    WRITTEN = "written"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Installed:
    what: str  # a hook name, or the merge driver's config key
    where: str
    action: Action
    why: str = ""


def _script(python: str, command: str) -> str:
    return (
        "#!/bin/sh\n"
        f"{MARKER}\n"
        f"python={shlex.quote(python)}\n"
        'if [ ! -x "$python" ]; then\n'
        '  echo "fidelity hook: $python is gone; reinstall fidelity and rerun '
        '\\`fidelity install-hooks\\`" >&2\n'
        "  exit 1\n"
        "fi\n"
        f'exec "$python" -m fidelity {command}\n'
    )


def scripts(repo: Path, python: str) -> dict[str, str | None]:
    """hook name -> script, or None when the hook has nothing to run in this repository."""
    trailers = isinstance(config.load(repo).get("trailers"), dict)
    return {
        "pre-commit": _script(python, "preflight --staged"),
        "commit-msg": _script(python, 'trailers --message-file "$1"') if trailers else None,
    }


def driver_command(python: str) -> str:
    from fidelity.recordmerge.driver import git_line

    return git_line(python)


def _foreign(path: Path) -> bool:
    if not path.exists() and not path.is_symlink():
        return False
    try:
        return MARKER not in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # a folder, a broken link: not ours either


def install(repo: Path, python: str = sys.executable) -> list[Installed]:
    """Write the hooks and the merge driver; UsageError, before writing anything, when a
    foreign hook or driver is in the way."""
    folder = git.hooks_dir(repo)
    wanted = scripts(repo, python)
    blocked = [name for name, text in wanted.items() if text and _foreign(folder / name)]
    driver_key = f"merge.{DRIVER}.driver"
    current = git.config_local(repo, driver_key)
    if current is not None and "fidelity merge-records" not in current:
        blocked.append(f"{driver_key} = {current}")
    if blocked:
        raise UsageError(
            "not installed: these are not fidelity's and are never overwritten: "
            + ", ".join(str(folder / b) if "=" not in b else b for b in blocked)
            + ". Call `fidelity preflight --staged` (pre-commit) and `fidelity trailers "
            '--message-file "$1"` (commit-msg) from them yourself, or move them away and '
            "rerun; pre-commit framework users add the hooks of .pre-commit-hooks.yaml instead."
        )
    done = [_write(folder / name, text) for name, text in wanted.items()]
    done.append(_driver(repo, python, driver_key, current))
    return done


def _write(path: Path, text: str | None) -> Installed:
    if text is None:
        why = "no [tool.fidelity.trailers] to judge a message by; rerun after configuring it"
        return Installed(path.name, str(path), Action.SKIPPED, why)
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if old == text:
        return Installed(path.name, str(path), Action.UNCHANGED)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return Installed(path.name, str(path), Action.WRITTEN if old is None else Action.UPDATED)


def _driver(repo: Path, python: str, key: str, current: str | None) -> Installed:
    command = driver_command(python)
    where = f"{git.common_dir(repo) / 'config'}"
    if current == command:
        return Installed(key, where, Action.UNCHANGED)
    git.set_config_local(repo, f"merge.{DRIVER}.name", DRIVER_NAME)
    git.set_config_local(repo, key, command)
    attributes = repo / ".gitattributes"
    text = attributes.read_text(encoding="utf-8", errors="replace") if attributes.is_file() else ""
    why = (
        ""
        if f"merge={DRIVER}" in text
        else f"assign it in .gitattributes: `records/*.md merge={DRIVER}`"
    )
    return Installed(key, where, Action.WRITTEN if current is None else Action.UPDATED, why)
