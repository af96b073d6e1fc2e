"""`fidelity check-docs` (not built yet: registers no command)."""

import argparse
from typing import Any


def register(sub: "argparse._SubParsersAction[Any]") -> None:
    return None
