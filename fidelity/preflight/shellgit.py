"""One git invocation in a shell command line (pure): where it runs, whether it commits,
stages or brings content from elsewhere, and what a git alias it calls expands to. The
reading of git's own arguments is `gitcli`'s."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace

from fidelity.preflight import gitcli
from fidelity.preflight.gitcli import Commit
from fidelity.preflight.shellwalk import MAX_DEPTH, State, Walker


class GitWalker(Walker):
    """The walk, knowing what git does."""

    def git(
        self,
        args: list[str | None],
        state: State,
        depth: int,
        stdin: str | None = None,
        env: Mapping[str, str | None] | None = None,
    ) -> list[Commit]:
        """One git invocation: its global options, then its subcommand or alias. `state`
        keeps what the line has staged so far; -C and GIT_DIR apply to this call alone."""
        merged = {**state.env, **(env or {})}
        head = gitcli.head(args, state.cwd, state.cwd_known, merged)
        here = state.fork(head.cwd, head.known)
        if head.doubt:
            return self.doubt(here, head.doubt)
        if head.sub is None:
            return []
        sub, rest = head.sub, args[head.at + 1 :]
        for setting in head.settings:  # -c core.editor='git commit ...'
            if self.embedded(setting, here, depth):
                return self.doubt(here, f"git -c runs a command: {setting[:60]}")
        if sub == "commit":
            found = gitcli.commit(rest, head.cwd, head.known, here.staged_before)
            found = replace(
                found,
                also=tuple(dict.fromkeys(here.visited)),
                brought=here.brought,
                place=head.place,
                trailers=_configured(found.trailers, head, merged),
            )
            state.staged_before = True
            return [gitcli.stdin_message(found, stdin)]
        return self.other_git(sub, rest, head, here, state, depth=depth)

    def other_git(
        self,
        sub: str,
        rest: list[str | None],
        head: gitcli.Head,
        here: State,
        state: State,
        *,
        depth: int,
    ) -> list[Commit]:
        """A git subcommand other than commit: one that creates commits is in doubt; one
        that fills the index from elsewhere marks the commits after it; an alias is read."""
        brought = gitcli.brings(sub, rest)
        if gitcli.committing(sub, rest):
            found = self.doubt(here, f"git {sub} creates commits")
            state.staged_before, state.brought = True, state.brought or brought
            return found
        if sub in gitcli.STAGING:
            if head.place and not brought:  # `git --work-tree=DIR add`, GIT_INDEX_FILE=...
                brought = f"git {sub} on {_named(head.place)}"
            state.staged_before, state.brought = True, state.brought or brought
        if sub in gitcli.BUILTIN:
            return []
        if head.dynamic_config:
            return self.doubt(here, "git -c sets configuration built by the shell")
        alias = head.aliases.get(sub.lower())
        if alias is None and head.known:
            alias = self.lookup.aliases(head.cwd).get(sub.lower())
        if alias is None:
            why = f"git {sub} is no git command fidelity knows (an alias it cannot read?)"
            return self.doubt(here, why)
        here.env.update(head.exports)
        found = self.alias(sub, alias, rest, here, depth)
        state.absorb(here)
        return found

    def alias(
        self, name: str, value: str, rest: list[str | None], here: State, depth: int
    ) -> list[Commit]:
        if depth >= MAX_DEPTH:
            return self.doubt(here, f"git alias {name!r} expands more than {MAX_DEPTH} times")
        if value.startswith("!"):
            if any(r is None for r in rest):
                return self.doubt(here, f"git alias {name!r} runs a shell line")
            line = value[1:] + "".join(" " + shlex.quote(r) for r in rest if r is not None)
            found = self.inner(line, here, depth)
        else:
            try:
                words: list[str | None] = list(shlex.split(value))
            except ValueError:
                return self.doubt(here, f"git alias {name!r} could not be split")
            found = self.git([*words, *rest], here, depth + 1)
        return [replace(c, doubt=c.doubt or f"git alias {name!r}") for c in found]


def _named(place: gitcli.Place) -> str:
    if place.index is not None or place.unknown == gitcli.INDEX_UNKNOWN:
        return gitcli.INDEX_UNKNOWN
    return "another work tree (--work-tree, GIT_WORK_TREE or GIT_DIR)"


def _configured(
    trailers: gitcli.Trailers | None, head: gitcli.Head, env: Mapping[str, str | None]
) -> gitcli.Trailers | None:
    """--trailer values with the configuration git reads them with: the call's -c settings
    and the GIT_CONFIG_* variables the line set (one the shell builds leaves them unknown)."""
    if trailers is None:
        return None
    config = {k: v for k, v in env.items() if k.startswith("GIT_CONFIG")}
    unknown = trailers.unknown
    if head.dynamic_config or None in config.values():
        unknown = unknown or "the line sets git configuration the shell builds"
    known = tuple((k, v) for k, v in config.items() if v is not None)
    return replace(trailers, settings=head.config, env=known, unknown=unknown)
