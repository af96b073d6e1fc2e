"""Real git repositories for tests, with pinned identities and dates so shas are stable.

Fixture commands run git directly (the product's calls go through fidelity.git); the
environment drops inherited GIT_* variables and points HOME at the repository's parent so
the user's global config cannot change what the tests see.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class GitRepo:
    """A repository under construction; every commit advances a pinned clock by a minute."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tick = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "commit.gpgsign", "false")

    def env(self) -> dict[str, str]:
        date = f"2024-01-01T00:{self._tick // 60:02d}:{self._tick % 60:02d}+0000"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            HOME=str(self.path.parent),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="Ada Test",
            GIT_AUTHOR_EMAIL="ada@example.invalid",
            GIT_COMMITTER_NAME="Ada Test",
            GIT_COMMITTER_EMAIL="ada@example.invalid",
            GIT_AUTHOR_DATE=date,
            GIT_COMMITTER_DATE=date,
        )
        return env

    def git(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=self.env(),
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )
        return result.stdout.strip()

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        """Write files, stage everything and commit; returns the new sha."""
        self.write(files or {})
        self.git("add", "-A")
        self._tick += 1
        self.git("commit", "-q", "--allow-empty", "-F", "-", stdin=message)
        return self.git("rev-parse", "HEAD")

    def rm(self, name: str, message: str) -> str:
        self.git("rm", "-q", name)
        self._tick += 1
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")
