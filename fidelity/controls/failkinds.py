"""How a test failed: by an assertion, by an exception the code raised, or by an error that
says the edited code could not run as written (import, name, attribute, type, syntax).

A control exists to show that the tests notice a change of behaviour. A test that fails
because the edited code no longer imports or calls proves only that it ran that code, so a
control whose expected tests fail only that way is `caught-by-error`, never `caught`,
unless the control names the exception as the behaviour under test (`raises`).

The controls' pytest plugin records each failure exactly (a `fidelity_failure` property in
the JUnit report: the kind, then the exception's class names along its MRO). For other
runners the kind is read from the failure's `type` attribute or its message, best effort,
and a failure whose form is unknown counts as an assertion.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

PROPERTY = "fidelity_failure"
CRASH_NAMES = frozenset(
    {
        "ImportError",
        "ModuleNotFoundError",
        "NameError",
        "UnboundLocalError",
        "AttributeError",
        "TypeError",
        "SyntaxError",
        "IndentationError",
        "TabError",
    }
)
_ASSERTION_NAMES = frozenset({"AssertionError", "Failed"})
_TYPE_PREFIX = re.compile(r"(?:[A-Za-z_][\w]*\.)*([A-Z][\w]*)(?::|$)")


class Kind(enum.StrEnum):
    ASSERTION = "assertion"
    DECLARED = "declared"  # an exception the control names in `raises`
    EXCEPTION = "exception"
    ERROR = "error"  # the code could not run as written


@dataclass(frozen=True, slots=True)
class Failure:
    kind: Kind
    types: tuple[str, ...] = ()  # the exception's class names, most derived first

    def label(self) -> str:
        """`assertion`, `error: ModuleNotFoundError`, `declared: ZeroDivisionError`."""
        if self.kind is Kind.ASSERTION or not self.types:
            return str(self.kind)
        return f"{self.kind}: {self.types[0]}"


UNKNOWN = Failure(Kind.ASSERTION)


def from_property(value: str) -> Failure:
    """The plugin's property: `error ModuleNotFoundError ImportError`."""
    kind, *types = value.split()
    try:
        return Failure(Kind(kind), tuple(types))
    except ValueError:
        return UNKNOWN


def _named(name: str) -> Failure:
    if name in _ASSERTION_NAMES:
        return Failure(Kind.ASSERTION, (name,))
    return Failure(Kind.ERROR if name in CRASH_NAMES else Kind.EXCEPTION, (name,))


def from_junit(type_attr: str, message: str) -> Failure:
    """Best effort for runners without the plugin: the `type` attribute, else a message
    that starts with a class name (`ModuleNotFoundError: No module named 'x'`)."""
    name = type_attr.rpartition(".")[2].strip()
    if name:
        return _named(name)
    found = _TYPE_PREFIX.match(message.strip())
    if found is None:
        return UNKNOWN  # `assert 1 == 2`, free text: what a test's own check says
    return _named(found.group(1))


# classes a failure may carry that `Exception` does not cover
_OUTSIDE_EXCEPTION = frozenset(
    {"BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit"}
)


def declared(failure: Failure, raises: Sequence[str]) -> Failure:
    """A failure by an exception the control says is the behaviour under test: one whose
    class, or any class along its MRO, is named (`Exception` names every exception). Without
    the plugin only the most derived class is known, so `Exception` and `BaseException` are
    matched by what they must hold."""
    wanted = {r.rpartition(".")[2] for r in raises}
    if failure.kind is Kind.ASSERTION or not failure.types:
        return failure
    types = set(failure.types)
    if "BaseException" in wanted or ("Exception" in wanted and not types & _OUTSIDE_EXCEPTION):
        types |= {"Exception", "BaseException"}
    return Failure(Kind.DECLARED, failure.types) if wanted & types else failure


def only_errors(failures: Iterable[Failure]) -> bool:
    """Whether there is at least one failure and every one is a crash."""
    kinds = [f.kind for f in failures]
    return bool(kinds) and all(k is Kind.ERROR for k in kinds)


def summary(failures: Mapping[str, Failure]) -> str:
    """`assertion 2, error: TypeError 1`, largest first."""
    counts: dict[str, int] = {}
    for f in failures.values():
        counts[f.label()] = counts.get(f.label(), 0) + 1
    return ", ".join(f"{label} {n}" for label, n in sorted(counts.items(), key=lambda x: -x[1]))
