"""The checkers' own errors; fidelity's command line maps them to exit codes (2 and 3)."""


class CheckerError(Exception):
    """Base class of what the checkers refuse."""


class ConfigError(CheckerError, ValueError):
    """The configuration cannot be used; the message names the file and key (exit 2)."""


class NothingToCheck(CheckerError):
    """No page or message to look at: a gate that looked at nothing cannot pass (exit 3)."""
