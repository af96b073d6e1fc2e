"""The `{name}` placeholders of case and control tables, filled in one place.

`{python}` is the interpreter fidelity itself runs in: a table that names it works the same
from an activated venv, a venv that is not activated and a pipx-style install, where a bare
`python` would be whatever comes first on PATH.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping


def with_python(places: Mapping[str, str]) -> dict[str, str]:
    """places plus `{python}`; a place given by the caller wins."""
    return {"python": sys.executable, **places}


def fill(value: str, places: Mapping[str, str]) -> str:
    for name, path in with_python(places).items():
        value = value.replace("{" + name + "}", path)
    return value
