"""`fidelity install-hooks`: plain git hooks for people without the pre-commit framework,
the record-table merge driver in the repository's own git config, and (with an agent
settings file) the coding agent's hook; `uninstall` removes every one of them.

A hook file this command did not write (no marker line) is foreign: it is never
overwritten, and when one is in the way nothing at all is written. One it wrote carries
the digest of its text: edited since, it is the user's now, kept as a foreign one is
(rerunning install-hooks replaced such an edit, and --uninstall deleted it). The hooks run the
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

from fidelity import config
from fidelity.errors import UsageError
from fidelity.git import gitdir

MARKER = "# fidelity install-hooks: managed file; rerun `fidelity install-hooks` to update it"
DRIVER = "fidelity-records"
DRIVER_NAME = "fidelity keyed record tables (merge rows by key)"


class Action(enum.StrEnum):
    WRITTEN = "written"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class Installed:
    what: str  # a hook name, or the merge driver's config key
    where: str
    action: Action
    why: str = ""


DIGEST = "# fidelity install-hooks digest: "  # the sha256 of the file without this line


def _signed(text: str) -> str:
    """text with its digest line after the marker line."""
    head, marker, rest = text.partition(MARKER + "\n")
    return f"{head}{marker}{DIGEST}{_digest(head + marker + rest)}\n{rest}"


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def _script(python: str, command: str) -> str:
    return _signed(
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
    """hook name -> script, or None when the hook has nothing to run in this repository.
    pre-merge-commit judges a merge git made on its own (the rows gate), as pre-commit
    judges one whose conflicts were resolved by hand; pre-push judges each pushed range as
    CI does, so a merge made past the hooks (`--no-verify`) or a rebase that dropped a row
    stops there, before it leaves the machine; post-rewrite names a row a rebase lost as
    soon as the rebase ends."""
    trailers = isinstance(config.load(repo).get("trailers"), dict)
    return {
        "pre-commit": _script(python, "preflight --staged"),
        "pre-merge-commit": _script(python, "preflight --staged"),
        "commit-msg": _script(python, 'trailers --message-file "$1"') if trailers else None,
        "pre-push": _script(python, 'preflight --pre-push "$1"'),
        "post-rewrite": _script(python, 'preflight --post-rewrite "$1"'),
    }


HOOKS = ("pre-commit", "pre-merge-commit", "commit-msg", "pre-push", "post-rewrite")


def agent_script(python: str) -> str:
    """The agent's hook command: fidelity's agent hook, and when that cannot run at all, a
    block for any call that mentions git or a commit (exit 2; other codes let it through)."""
    return _signed(
        "#!/bin/sh\n"
        f"{MARKER}\n"
        f"python={shlex.quote(python)}\n"
        "event=$(cat; echo x)  # the x keeps trailing newlines, which $(...) would strip\n"
        "event=${event%x}\n"
        "status=127\n"
        'if [ -x "$python" ]; then\n'
        '  printf \'%s\' "$event" | "$python" -m fidelity preflight --agent-hook\n'
        "  status=$?\n"
        '  case $status in 0 | 2) exit "$status" ;; esac\n'
        "fi\n"
        "case $event in\n"
        "  *git* | *commit* | *\\\\u*)  # \\u: a JSON escape could spell either\n"
        '    echo "fidelity agent hook: $python -m fidelity preflight --agent-hook could not '
        "run (exit $status); this call may commit, so it is blocked. Reinstall fidelity and "
        'rerun \\`fidelity install-hooks --agent\\`." >&2\n'
        "    exit 2 ;;\n"
        "esac\n"
        "exit 0\n"
    )


def agent_script_path(repo: Path) -> Path:
    return gitdir.common_dir(repo) / "fidelity-agent-hook"


DEFAULT_AGENT_SETTINGS = Path(".claude") / "settings.local.json"


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


def _edited(path: Path) -> bool:
    """A file of ours whose text no longer has the digest it was written with (one written
    before digests were: never edited, as far as can be told)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    head, line, rest = text.partition("\n" + DIGEST)
    if not line:
        return False
    recorded, _, rest = rest.partition("\n")
    return _digest(head + "\n" + rest) != recorded


def install(repo: Path, python: str = sys.executable, agent: Path | None = None) -> list[Installed]:
    """Write the hooks and the merge driver, and with `agent` (a settings file) the agent's
    hook; UsageError, before writing anything, when a foreign hook or driver is in the way
    or the settings file is not what it should be."""
    folder = gitdir.hooks_dir(repo)
    wanted = scripts(repo, python)
    blocked = [name for name, text in wanted.items() if text and _foreign(folder / name)]
    edited = [name for name, text in wanted.items() if text and _edited(folder / name)]
    if edited:
        raise UsageError(
            "not installed: these were edited since fidelity wrote them, and an edit is never "
            f"overwritten: {', '.join(str(folder / e) for e in edited)}. Keep your edit in "
            "a hook of your own that calls fidelity, or delete the file, then rerun"
        )
    driver_key = f"merge.{DRIVER}.driver"
    current = gitdir.config_local(repo, driver_key)
    if current is not None and "fidelity merge-records" not in current:
        blocked.append(f"{driver_key} = {current}")
    if blocked:
        raise UsageError(
            "not installed: these are not fidelity's and are never overwritten: "
            + ", ".join(str(folder / b) if "=" not in b else b for b in blocked)
            + ". Call `fidelity preflight --staged` (pre-commit, pre-merge-commit), `fidelity "
            'trailers --message-file "$1"` (commit-msg), `fidelity preflight --pre-push "$1"` '
            '(pre-push) and `fidelity preflight --post-rewrite "$1"` (post-rewrite; both with '
            "their stdin) from them yourself, or move them away and rerun; pre-commit framework "
            "users add the hooks of .pre-commit-hooks.yaml instead."
        )
    if agent is not None:
        from fidelity.preflight import agentsettings

        agentsettings.has(agent, str(agent_script_path(repo)))  # refuses a broken file now
        if _foreign(agent_script_path(repo)) or _edited(agent_script_path(repo)):
            raise UsageError(
                f"not installed: {agent_script_path(repo)} is not fidelity's, or was edited"
            )
    done = [_write(folder / name, text) for name, text in wanted.items()]
    done.append(_driver(repo, python, driver_key, current))
    if agent is not None:
        done += _agent(repo, python, agent)
    return done


def _agent(repo: Path, python: str, settings: Path) -> list[Installed]:
    from fidelity.preflight import agentsettings

    script = agent_script_path(repo)
    done = [_write(script, agent_script(python))]
    added = agentsettings.add(settings, str(script))
    why = f"{agentsettings.EVENT} hook, matcher {agentsettings.MATCHER}"
    action = Action.WRITTEN if added else Action.UNCHANGED
    done.append(Installed("agent settings", str(settings), action, why))
    return done


def uninstall(repo: Path, agent: Path | None = None) -> list[Installed]:
    """Remove every hook file this command wrote (a foreign one is left and named), the
    merge driver's config when it is ours, the agent's script and its settings entry.
    .gitattributes is left alone: it is committed, and git ignores an unknown driver."""
    from fidelity.preflight import agentsettings

    folder = gitdir.hooks_dir(repo)
    done = []
    for name in HOOKS:
        done.append(_remove(folder / name))
    driver_key = f"merge.{DRIVER}.driver"
    current = gitdir.config_local(repo, driver_key)
    where = str(gitdir.common_dir(repo) / "config")
    if current is not None and "fidelity merge-records" in current:
        gitdir.unset_config_section(repo, f"merge.{DRIVER}")
        done.append(Installed(driver_key, where, Action.REMOVED))
    elif current is not None:
        done.append(Installed(driver_key, where, Action.SKIPPED, "not fidelity's; left"))
    script = agent_script_path(repo)
    done.append(_remove(script))
    settings = agent if agent is not None else repo / DEFAULT_AGENT_SETTINGS
    if agentsettings.remove(settings, str(script)):
        done.append(Installed("agent settings", str(settings), Action.REMOVED))
    return done


def _remove(path: Path) -> Installed:
    if not path.exists() and not path.is_symlink():
        return Installed(path.name, str(path), Action.UNCHANGED, "not there")
    if _foreign(path):
        return Installed(path.name, str(path), Action.SKIPPED, "not fidelity's; left")
    if _edited(path):
        return Installed(path.name, str(path), Action.SKIPPED, "edited since written; left")
    path.unlink()
    return Installed(path.name, str(path), Action.REMOVED)


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
    where = f"{gitdir.common_dir(repo) / 'config'}"
    if current == command:
        return Installed(key, where, Action.UNCHANGED)
    gitdir.set_config_local(repo, f"merge.{DRIVER}.name", DRIVER_NAME)
    gitdir.set_config_local(repo, key, command)
    attributes = repo / ".gitattributes"
    text = attributes.read_text(encoding="utf-8", errors="replace") if attributes.is_file() else ""
    why = (
        ""
        if f"merge={DRIVER}" in text
        else f"assign it in .gitattributes: `records/*.md merge={DRIVER}`"
    )
    return Installed(key, where, Action.WRITTEN if current is None else Action.UPDATED, why)
