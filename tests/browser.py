"""Headless Chromium for the tests that look at a page: Debian's browser, driven by Playwright.

The browser is Debian's `/usr/bin/chromium`, never one Playwright downloads (`playwright
install` fetches a browser build, which fails where only the package registries are
reachable). When it is missing, `ensure_chromium` installs it with apt-get, as root, so that
the README's test command sets up what these tests need on a fresh machine; it returns why
not (a skip's message) only where it cannot: no apt-get, not root, or apt-get failed.

Chromium starts with the flags that keep it off the network (background networking,
component updates, sync, QUIC) and a fresh profile. `Opened` records every console error,
page error and request a page made that was not for the page itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
PACKAGES = ["chromium", "chromium-driver"]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[1]


def artifacts() -> Path:
    """Where screenshots go for CI to upload: $FIDELITY_ARTIFACTS, else tests-artifacts/."""
    where = Path(os.environ.get("FIDELITY_ARTIFACTS") or ROOT / "tests-artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", *args], env=env, capture_output=True, text=True, timeout=1200, check=False
    )


def ensure_chromium() -> str:
    """'' when /usr/bin/chromium is there (installed now if need be), else why it is not."""
    if CHROMIUM.exists():
        return ""
    if shutil.which("apt-get") is None:
        return f"no {CHROMIUM} and no apt-get to install it: install Chromium to run these tests"
    if os.geteuid() != 0:
        return (
            f"no {CHROMIUM}, and installing it needs root: run "
            f"`sudo apt-get install -y {' '.join(PACKAGES)}`, then the tests again"
        )
    done = _apt("install", "-y", "-q", *PACKAGES)
    if done.returncode != 0:  # a fresh machine's package lists may be empty or old
        _apt("update", "-q")
        done = _apt("install", "-y", "-q", *PACKAGES)
    if done.returncode != 0 or not CHROMIUM.exists():
        said = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return f"apt-get could not install {' '.join(PACKAGES)}: {' | '.join(said)}"
    return ""


@dataclass
class Opened:
    """A page opened in the browser, and what it did that a report page must not."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    seconds: float = 0.0  # from navigation to the report's script having run

    def shot(self, name: str, selector: str | None = None) -> Path:
        """A screenshot in the artifacts folder: the whole page, or one element."""
        path = artifacts() / name
        if selector:
            self.page.locator(selector).first.screenshot(path=str(path))
        else:
            self.page.screenshot(path=str(path), full_page=True)
        return path


@contextmanager
def browser(profile: Path) -> Iterator[Any]:
    """A Chromium context with a fresh profile, closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def open_page(context: Any, path: Path, ready: str = "html[data-ready='1']") -> Opened:
    """Open a file in a new tab and wait until `ready` matches (the report's script ran)."""
    page = context.new_page()
    opened = Opened(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    own = path.resolve().as_uri()
    page.on("request", lambda r: None if r.url == own else opened.requests.append(r.url))
    start = time.perf_counter()
    page.goto(own, wait_until="load")
    page.wait_for_selector(ready, state="attached", timeout=30_000)
    opened.seconds = time.perf_counter() - start
    return opened
