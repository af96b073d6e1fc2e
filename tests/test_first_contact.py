"""First contact stays green: the README's test command is CI's, with CI's Hypothesis
settings, so a fresh venv's `python -m pytest` draws the examples CI drew."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python -m pip install -e '.[test]' && python -m pytest"
PROBE = "import conftest; from hypothesis import settings; d = settings.default; "
PROBE += "print(d.derandomize, d.max_examples)"


def loaded_profile(profile: str | None, ci: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("HYPOTHESIS_PROFILE", "CI")}
    if ci:
        env["CI"] = "true"  # Hypothesis derandomizes its own defaults on a CI machine
    if profile is not None:
        env["HYPOTHESIS_PROFILE"] = profile
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT / "tests",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_the_readme_test_command_is_cis_word_for_word() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"```sh\n{COMMAND}\n```" in readme.split("## ", 1)[0]
    assert [line for line in ci.splitlines() if line == COMMAND] == [COMMAND]
    assert "HYPOTHESIS_PROFILE" not in ci  # CI runs on the defaults a user gets


@pytest.mark.parametrize("ci", [False, True], ids=["desk", "ci-machine"])
@pytest.mark.parametrize(
    ("profile", "loaded"),
    [(None, "True 150"), ("explore", "False 1500")],
)
def test_the_default_profile_is_cis_derandomized_one(
    profile: str | None, loaded: str, ci: bool
) -> None:
    assert loaded_profile(profile, ci) == loaded
