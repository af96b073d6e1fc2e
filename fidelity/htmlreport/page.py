"""The document: head, policy, inline style and script, escaping, and the size budget.

The Content-Security-Policy is `default-src 'none'`: the page can load nothing (no script,
style, font, image or connection from anywhere), and runs only the one script whose sha256
it names. So even a case text that escaped its escaping could not run or fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources

from fidelity.text import visible

LIMIT = 8 * 2**20  # bytes: a page past it drops case details (said on the page), never rows


def esc(text: object) -> str:
    """Text as HTML text or attribute value: nothing in it is markup; a control byte,
    lone surrogate or text-direction override is shown as its escape (`\\x1b`)."""
    return html.escape(visible(str(text)), quote=True)


def _asset(name: str) -> str:
    return resources.files("fidelity.htmlreport").joinpath(name).read_text("utf-8")


def _policy(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def document(title: str, body: Iterable[str]) -> str:
    """A whole page: the policy first, then the style, the body, and the script last."""
    script = _asset("report.js")
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{esc(_policy(script))}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{esc(title)}</title>\n<style>\n{_asset('report.css')}</style>\n</head>\n",
            "<body>\n",
            *body,
            f"<script>{script}</script>\n</body>\n</html>\n",
        ]
    )


def section(title: str, inner: Iterable[str], id: str = "", cls: str = "") -> str:
    attrs = (f' id="{esc(id)}"' if id else "") + (f' class="{esc(cls)}"' if cls else "")
    return f"<section{attrs}>\n<h2>{esc(title)}</h2>\n" + "".join(inner) + "</section>\n"


def items(lines: Iterable[str], cls: str = "") -> str:
    """An escaped list; '' for none."""
    shown = "".join(f"<li>{esc(line)}</li>\n" for line in lines)
    attr = f' class="{esc(cls)}"' if cls else ""
    return f"<ul{attr}>\n{shown}</ul>\n" if shown else ""


def pre(text: str, cls: str = "log") -> str:
    return f'<pre class="{esc(cls)}">{esc(text)}</pre>\n'


@dataclass(slots=True)
class Budget:
    """Bytes left for optional parts of a page; what did not fit is counted, to be said."""

    left: int
    elided: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        self.elided[what] = self.elided.get(what, 0) + 1

    def take(self, part: str, what: str, *, dry: bool = False) -> str:
        """part when it fits in what is left, else '' and one more `what` elided (when
        `what` names it); `dry` only asks, taking nothing and counting nothing."""
        size = len(part.encode())
        if size > self.left:
            if what and not dry:
                self.count(what)
            return ""
        if not dry:
            self.left -= size
        return part

    def note(self, limit: int) -> str:
        """What was left out to keep the page under `limit` bytes, and where to find it."""
        if not self.elided:
            return ""
        said = ", ".join(f"{n} {what}" for what, n in self.elided.items())
        return (
            f'<p class="elided" id="elided">Left out to keep this page under {limit / 2**20:g} '
            f"MiB: {esc(said)}. Every case is in the table; the run directory holds the rest "
            "(`fidelity compare RUN_DIR` says every value).</p>\n"
        )
