"""Text that can always be written: file names that are not UTF-8, and XML's forbidden chars.

A case can name its output files with any bytes; Python keeps such names as lone
surrogates, which no UTF-8 writer accepts. Reports show them as escapes instead.
"""

from __future__ import annotations

import re

# characters XML 1.0 forbids, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def printable(text: str) -> str:
    """text with every lone surrogate written as `\\udcff`: valid UTF-8, still readable."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", printable(text))
