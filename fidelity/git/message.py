"""A commit message as `git commit --trailer` writes it: git's own `interpret-trailers`
adds the values, with the trailer configuration the commit would read (a
`trailer.<token>.key` alias turns `dnm: yes` into `Do-Not-Merge: yes`; separators, where
and if-exists rules), so the trailers gate judges what git will record. A trailer command
(`trailer.<token>.cmd`) is never run: its output is not known before the commit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from fidelity import proc
from fidelity.git.command import GIT_TIMEOUT_S, GitError, clean_env

COMMANDS = (".cmd", ".command")  # trailer settings that run a program


def trailer_config(
    cwd: Path, settings: Sequence[str], env: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(key, value) of every `trailer.*` setting a git call in cwd reads with `-c settings`
    and the line's GIT_CONFIG_* variables (env): system, global, repository and command line,
    in git's order (a later one wins)."""
    environ = clean_env()
    environ.pop("GIT_CONFIG_NOSYSTEM", None)  # the system's trailer keys apply to the commit
    environ.update(env)
    options = [arg for setting in settings for arg in ("-c", setting)]
    argv = ["git", *options, "--no-pager", "config", "--null", "--get-regexp", r"^trailer\."]
    result = proc.run(argv, cwd=cwd, env=environ, timeout_s=GIT_TIMEOUT_S)
    if result.returncode == 1:  # git config's answer when no key matches
        return []
    if result.status is not proc.ProcStatus.OK:
        why = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git config could not read the trailer settings in {cwd}: {why}")
    found = []
    for entry in result.stdout.split(b"\0"):
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        if key:
            found.append((key, value))
    return found


def runs_commands(config: Sequence[tuple[str, str]]) -> list[str]:
    """The trailer settings that would run a program when the commit adds its trailers."""
    return [key for key, _ in config if key.lower().endswith(COMMANDS)]


def with_trailers(
    message: str, trailers: Sequence[str], config: Sequence[tuple[str, str]], scratch: Path
) -> str:
    """message with trailers added as `git commit --trailer` adds them, read with config
    (its commands left out), in scratch: no repository's or user's configuration is read."""
    environ = clean_env()
    environ |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CEILING_DIRECTORIES": str(scratch)}
    kept = [f"{key}={value}" for key, value in config if not key.lower().endswith(COMMANDS)]
    options = [arg for setting in kept for arg in ("-c", setting)]
    values = [arg for value in trailers for arg in ("--trailer", value)]
    argv = ["git", *options, "--no-pager", "interpret-trailers", *values]
    result = proc.run(
        argv,
        cwd=scratch,
        env=environ,
        timeout_s=GIT_TIMEOUT_S,
        stdin=message.encode("utf-8", "surrogateescape"),
    )
    if result.status is not proc.ProcStatus.OK:
        why = result.stderr.decode(errors="replace").strip() or result.error
        raise GitError(f"git interpret-trailers could not add {list(trailers)}: {why}")
    return result.stdout.decode("utf-8", "surrogateescape")
