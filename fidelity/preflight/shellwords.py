"""The value of a shell word as bash would pass it, from tree-sitter-bash nodes (pure).

A word is known when quote removal alone gives its value: plain words (backslash escapes
and line continuations removed), '...', "..." without expansions, $'...' (ANSI-C escapes
decoded), and concatenations of these. Anything the shell must expand or run first (`$X`,
`$(...)`, arithmetic, globs, brace expansion) is unknown: None. One shape is read through:
`"$(cat <<'EOF' ... EOF)"`, the way agents write multi-line commit messages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

GLOB = re.compile(r"(?<!\\)[*?\[]")
ANSI_C = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _unescape_word(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value.replace("\\\n", ""), flags=re.S)


def _unescape_dq(value: str) -> str:
    return re.sub(r"\\([\\$`\"\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), value)


def _ansi_c(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU":
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return ANSI_SIMPLE.get(code, code if code in "\\'\"?" else "\\" + code)

    return ANSI_C.sub(one, body)


def heredoc_body(redirect: Node) -> str | None:
    """A here-document's text, or None when the shell would expand something in it."""
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if start is None or body is None:
        return "" if start is not None else None
    quoted = any(q in text(start) for q in "'\"\\")
    if not quoted and any(c.type != "heredoc_content" for c in body.named_children):
        return None
    value = text(body)
    if any(c.type == "<<-" for c in redirect.children):
        value = re.sub(r"(?m)^\t+", "", value)
    return value


def _heredoc_message(node: Node) -> str | None:
    """The body of `$(cat <<'EOF' ... EOF)`."""
    inner = list(node.named_children)
    if len(inner) != 1 or inner[0].type != "redirected_statement":
        return None
    body = inner[0].child_by_field_name("body")
    redirects = inner[0].children_by_field_name("redirect")
    if body is None or body.type != "command" or text(body).strip() != "cat":
        return None
    if len(redirects) != 1 or redirects[0].type != "heredoc_redirect":
        return None
    return heredoc_body(redirects[0])


def literal(node: Node) -> str | None:
    """The word's value after quote removal, or None when only the shell can know it."""
    kind = node.type
    if kind == "word":
        value = text(node)
        return None if GLOB.search(value) else _unescape_word(value)
    if kind == "number":
        return text(node)
    if kind == "raw_string":
        return text(node)[1:-1]
    if kind == "ansi_c_string":
        return _ansi_c(text(node)[2:-1])
    if kind in ("string", "translated_string"):
        return _string(node)
    if kind == "concatenation":
        parts = [literal(c) for c in node.children]
        if any(p is None for p in parts) or any(text(c) == "{" for c in node.children):
            return None  # brace expansion: {commit,x}
        return "".join(p for p in parts if p is not None)
    return None


def _string(node: Node) -> str | None:
    parts = [c for c in node.children if c.type not in ('"', '$"')]
    if len(parts) == 1 and parts[0].type == "command_substitution":
        message = _heredoc_message(parts[0])
        return message.rstrip("\n") if message is not None else None
    out = []
    for part in parts:
        if part.type != "string_content":
            return None
        out.append(_unescape_dq(text(part)))
    return "".join(out)
