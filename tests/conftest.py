"""Fixtures: real git repositories in temp dirs, and the Hypothesis profiles.

The default profile is `ci`: property tests derandomized, the same examples on every run
and machine, so the README's `python -m pytest` in a fresh venv runs exactly what CI runs.
`HYPOTHESIS_PROFILE=explore` is the deliberate search for new failures: random examples,
ten times the budget (see README, "Testing"); what it finds becomes an `@example` or a case.
`controls` is `ci` without shrinking, for the mutation controls of cases/controls.toml.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, settings
from support import PROG, Repo, matrix_toml

# tests/data holds other projects' files (a fixture library with tests of its own)
collect_ignore = ["data"]

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=150)
# derandomize is spelled out: on a CI machine (a CI variable set) Hypothesis's own
# defaults are derandomized, and a profile inherits them
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=1500)
# our own mutation controls (cases/controls.toml): the same examples as `ci`, but a property
# test that fails stops at its first failing example: whether it fails is all a control
# reads, and shrinking examples that each run git and a merge driver took one 53 s (5 s now)
settings.register_profile(
    "controls",
    parent=settings.get_profile("ci"),
    phases=[p for p in Phase if p not in (Phase.shrink, Phase.explain)],
    report_multiple_bugs=False,
    database=None,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` (a stress or scale run of minutes) run only when asked for with
    FIDELITY_LONG_TESTS=1; each has a short version in the default run."""
    if os.environ.get("FIDELITY_LONG_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="a long test: set FIDELITY_LONG_TESTS=1 to run it")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def cache_key_outside_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every fidelity the tests start signs its caches with a key of the test session's,
    never one made in the developer's home."""
    with pytest.MonkeyPatch.context() as patch:
        key = tmp_path_factory.mktemp("cache-key") / "cache.key"
        patch.setenv("FIDELITY_CACHE_KEY_FILE", str(key))
        yield


@pytest.fixture(scope="session", autouse=True)
def not_in_github_actions() -> Iterator[None]:
    """Output and exit codes are asserted as they are outside CI (a partial run under CI
    exits 3); tests of the CI and GitHub behaviour set these with monkeypatch. Session
    scope: a module's fixture runs before any function's, and one made its runs under the
    CI's own CI=true (stop 51 failed on exactly that)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "CI"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's headless Chromium under Playwright, one fresh profile per session; installed
    with apt-get when missing (tests/browser.py), skipped only where that cannot be done."""
    import browser

    why = browser.ensure_chromium()
    if why:
        pytest.skip(why)
    with browser.browser(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], Repo]:
    def make(name: str = "repo") -> Repo:
        return Repo(tmp_path / name)

    return make


@pytest.fixture
def sim_repo(make_repo: Callable[[str], Repo]) -> Repo:
    """A repository whose cases echo value.txt; commit a new value.txt to move them."""
    repo = make_repo("sim")
    repo.commit(
        {
            "prog.py": PROG,
            "value.txt": "one\n",
            "cases/matrix.toml": matrix_toml({"a": "ok", "b": "ok", "c": "fail-if-bad"}),
            ".gitignore": "__pycache__/\n",
        },
        "baseline",
    )
    return repo


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that appends each call's arguments to the returned file and runs
    the real one (fidelity's git runner keeps PATH and drops GIT_TRACE, so tracing cannot
    count its calls)."""
    import shutil

    real, bin_dir, log = shutil.which("git"), tmp_path / "bin", tmp_path / "git-calls.log"
    assert real is not None
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(real).parent}")
    return log
