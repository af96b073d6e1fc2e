"""CI's start-up hook for coverage: .ci/run copies this module and a .pth file that imports it
into CI's own venv (never a user's install). With FIDELITY_CI_COVERAGE set to a config file,
coverage starts in a process only when that process first imports the product (fidelity,
checkers, or a plugin pytest loads by bare name), so the product's module-level lines are
measured and the thousands of Python processes the tests start that never import it (case
programs, venv and pip runs) pay nothing: coverage's own start-up hook imports coverage in
every one of them, about 75 ms each here. Without the variable this module does nothing.
"""

from __future__ import annotations

import os
import sys

PRODUCT = frozenset(
    {
        "fidelity",
        "checkers",
        "fidelity_pytest_controls",
        "fidelity_pytest_guard",
        "fidelity_testids",
        "fidelity_warm",
    }
)


class _StartOnFirstImport:
    """A meta path finder that finds nothing: it starts coverage, then steps aside."""

    def __init__(self, config: str) -> None:
        self.config = config

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in PRODUCT:
            sys.meta_path.remove(self)
            try:
                import coverage
            except ImportError:  # the venv before pip installed the test extra
                return
            coverage.Coverage(config_file=self.config, auto_data=True).start()


def install() -> None:
    config = os.environ.get("FIDELITY_CI_COVERAGE")
    if config and not any(isinstance(f, _StartOnFirstImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _StartOnFirstImport(config))


install()
