"""Exceptions that the CLI turns into exit codes, in one place (see cli.main)."""


class FidelityError(Exception):
    """Base class; `exit_code` is what the CLI returns for it."""

    exit_code = 3


class UsageError(FidelityError):
    """Bad arguments, invalid configuration or case table, unknown revision: exit 2."""

    exit_code = 2


class UntrustedError(FidelityError):
    """The evidence cannot be produced or trusted (git failed mid-run, corrupt run dir): exit 3."""

    exit_code = 3
