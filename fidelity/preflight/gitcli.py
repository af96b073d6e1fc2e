"""git's command line, read for the agent hook (pure): where a git call runs, which
subcommand it is, whether it creates commits or brings content into the index from
elsewhere, and what a `git commit` records and with which message.

Words are the shell's values, None where only the shell knows one (see `shellwords`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

Words = Sequence[str | None]

# git's own subcommands (`git --list-cmds=builtins`, git 2.39) and its common scripts; an
# alias cannot shadow them, so a line of these needs no look at the config
BUILTIN = frozenset(
    """add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
    clean clone column commit commit-graph commit-tree config count-objects credential
    describe diagnose diff diff-files diff-index diff-tree difftool fast-export fast-import
    fetch fetch-pack fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc grep
    hash-object help hook index-pack init interpret-trailers log ls-files ls-remote ls-tree
    mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mktag
    mktree multi-pack-index mv name-rev notes pack-objects pack-refs patch-id prune pull push
    range-diff read-tree rebase reflog remote repack replace rerere reset restore rev-list
    rev-parse revert rm shortlog show show-branch show-ref sparse-checkout stage stash status
    stripspace switch symbolic-ref tag update-index update-ref var verify-commit verify-pack
    verify-tag version whatchanged worktree write-tree submodule mergetool gui gitk lfs
    request-pull instaweb""".split()  # noqa: SIM905 (a list of 120 words reads better so)
)
# subcommands that change the index or HEAD: a commit after one of them in the same line
# records more than the index holds when the hook runs
STAGING = frozenset(
    """add rm mv stage apply restore reset checkout switch stash merge pull rebase
    cherry-pick revert am commit update-index read-tree""".split()  # noqa: SIM905
)
# subcommands that create commits (or land one on a branch): what they record is not known
# before they run
COMMITTING = frozenset(
    """commit-tree merge pull cherry-pick revert am rebase fast-import update-ref""".split()  # noqa: SIM905
)
NO_COMMIT = frozenset(
    {"--abort", "--quit", "--no-commit", "-n", "--edit-todo", "--show-current-patch"}
)
STASH_READS = frozenset({"list", "show", "drop", "clear", "pop", "apply", "branch"})
GIT_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
COMMIT_SHORT_VALUES = frozenset("mFCct")  # short options whose value follows
COMMIT_LONG_VALUES = frozenset(
    {
        *("--message", "--file", "--reuse-message", "--reedit-message", "--fixup"),
        *("--squash", "--author", "--date", "--cleanup", "--template", "--trailer"),
        "--pathspec-from-file",
    }
)
BRANCH_VALUES = frozenset({"-b", "-B", "--orphan", "-c", "-C", "--create", "--force-create"})


INDEX_UNKNOWN = "the index GIT_INDEX_FILE names"
TREE_UNKNOWN = "the work tree --work-tree or GIT_WORK_TREE names"


@dataclass(frozen=True, slots=True)
class Place:
    """The index and work tree a git call uses when they are not the repository's own:
    GIT_INDEX_FILE as written (git reads a relative one from the top of the work tree),
    the work tree `--work-tree` or GIT_WORK_TREE name (or, with only a git directory named,
    the directory git runs in), absolute; `unknown` says why the shell alone knows one."""

    index: str | None = None
    work_tree: str | None = None
    unknown: str = ""

    def __bool__(self) -> bool:
        return self.index is not None or self.work_tree is not None or bool(self.unknown)


@dataclass(frozen=True, slots=True)
class Trailers:
    """`--trailer` values, and the configuration git reads them with: the call's `-c`
    settings and the GIT_CONFIG_* variables the line sets (a `trailer.<token>.key` alias
    turns `dnm: yes` into `Do-Not-Merge: yes`). `unknown`: why they cannot all be read."""

    values: tuple[str, ...]
    settings: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    unknown: str = ""


@dataclass(frozen=True, slots=True)
class Commit:
    """One `git commit` the line would (or, in doubt, could) run."""

    cwd: str  # the directory git runs in: the event's cwd joined with cd / -C, as written
    amend: bool = False
    stages: bool = False  # records more than the index holds now (-a, paths, git add before)
    message: str | None = None  # the message, when the line states it
    message_file: str | None = None  # -F FILE (relative to cwd), when given
    unknown: str = ""  # why the message is not known, when it is not
    cwd_known: bool = True  # False when a cd or -C names a directory by a variable
    doubt: str = ""  # why this counts as a commit though the line does not say `git commit`
    also: tuple[str, ...] = ()  # other directories the line was in before (a cd may fail)
    brought: str = ""  # a git command earlier in the line that filled the index from elsewhere
    place: Place = Place()  # another index or work tree than the repository's own
    trailers: Trailers | None = None  # --trailer values, read as part of the message


def join(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(path)))


def git_dir_home(cwd: str, value: str) -> str:
    """The work tree a --git-dir or GIT_DIR names (its parent when it ends in .git)."""
    path = join(cwd, value)
    return posixpath.dirname(path) if posixpath.basename(path) == ".git" else path


@dataclass(frozen=True, slots=True)
class Head:
    """git's global options read: where it runs, the subcommand and where it stands."""

    cwd: str
    known: bool
    sub: str | None = None
    at: int = 0
    aliases: Mapping[str, str] = field(default_factory=dict)  # from -c alias.NAME=VALUE
    dynamic_config: bool = False  # a -c or --config-env only the shell can know
    settings: tuple[str, ...] = ()  # every -c value, to look for commands inside
    doubt: str = ""
    config: tuple[str, ...] = ()  # every -c KEY=VALUE, as given
    place: Place = Place()
    exports: tuple[tuple[str, str | None], ...] = ()  # what git hands an alias it runs


@dataclass(slots=True)
class _Reading:
    """git's global options so far; relative paths wait for the last -C (git changes
    directory first, then reads GIT_DIR and GIT_WORK_TREE from where it is)."""

    run_in: str
    known: bool
    env: dict[str, str | None]
    aliases: dict[str, str] = field(default_factory=dict)
    settings: list[str] = field(default_factory=list)
    config: list[str] = field(default_factory=list)
    dynamic: bool = False

    def option(self, option: str, value: str | None) -> None:
        if option == "-C":
            self.known = self.known and value is not None
            self.run_in = join(self.run_in, value or "")
        elif option in ("--git-dir", "--work-tree"):
            self.env["GIT_DIR" if option == "--git-dir" else "GIT_WORK_TREE"] = value
        elif option == "-c" and value is not None:
            key, _, setting = value.partition("=")
            self.settings.append(setting)
            self.config.append(value)
            if key.lower().startswith("alias."):
                self.aliases[key[6:].lower()] = setting
        elif option in ("-c", "--config-env"):
            self.dynamic = True  # --config-env names a variable the value comes from

    def head(self, sub: str | None = None, at: int = 0, doubt: str = "") -> Head:
        cwd, known = self.run_in, self.known
        if "GIT_DIR" in self.env:
            known = known and self.env["GIT_DIR"] is not None
            cwd = git_dir_home(self.run_in, self.env["GIT_DIR"] or "")
        where = place(self.env, self.run_in, cwd)
        return Head(
            cwd,
            known,
            sub,
            at,
            self.aliases,
            self.dynamic,
            tuple(self.settings),
            doubt,
            tuple(self.config),
            where,
            self.exports(where),
        )

    def exports(self, where: Place) -> tuple[tuple[str, str | None], ...]:
        """The variables git sets for the command an alias runs (as git does for
        --git-dir, --work-tree and -c), absolute: the alias runs from elsewhere."""
        found: dict[str, str | None] = {}
        if "GIT_DIR" in self.env:
            value = self.env["GIT_DIR"]
            found["GIT_DIR"] = join(self.run_in, value) if value is not None else None
        if where.work_tree is not None or where.unknown == TREE_UNKNOWN:
            found["GIT_WORK_TREE"] = where.work_tree
        if self.config or self.dynamic:
            given = self.env.get("GIT_CONFIG_PARAMETERS", "")
            quoted = (_sq(k) + "=" + _sq(v) for k, _, v in (c.partition("=") for c in self.config))
            found["GIT_CONFIG_PARAMETERS"] = (
                None if self.dynamic or given is None else " ".join([given, *quoted]).strip()
            )
        return tuple(found.items())


def _sq(text: str) -> str:
    """git's quoting in GIT_CONFIG_PARAMETERS: 'text', a quote written '\\''."""
    return "'" + text.replace("'", "'\\''") + "'"


def place(env: Mapping[str, str | None], run_in: str, home: str) -> Place:
    """The index and work tree a git call run in `run_in` uses, when not the repository's
    own (`home`, where its git directory is found): GIT_INDEX_FILE, GIT_WORK_TREE, or the
    directory git runs in when only GIT_DIR is given (git's rule; core.worktree unread)."""
    unknown = ""
    index = env.get("GIT_INDEX_FILE")
    if "GIT_INDEX_FILE" in env and index is None:
        unknown = INDEX_UNKNOWN
    tree: str | None = None
    if "GIT_WORK_TREE" in env:
        value = env["GIT_WORK_TREE"]
        tree = join(run_in, value) if value is not None else None
        unknown = unknown or (TREE_UNKNOWN if value is None else "")
    elif "GIT_DIR" in env:
        tree = run_in
    if tree == home and "GIT_DIR" in env:
        tree = None
    return Place(index, tree, unknown)


def head(args: Words, cwd: str, known: bool, env: Mapping[str, str | None] | None = None) -> Head:
    """-C and --git-dir (GIT_DIR) move the repository; --work-tree (GIT_WORK_TREE) and
    GIT_INDEX_FILE do not, but the commit records what they hold (`place`)."""
    names = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS")
    reading = _Reading(cwd, known, {k: v for k, v in (env or {}).items() if k in names})
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return reading.head(doubt="the git subcommand is built by the shell")
        if not arg.startswith("-"):
            return reading.head(arg, i)
        option, eq, attached = arg.partition("=")
        if option not in GIT_VALUE_OPTIONS:
            i += 1
            continue
        value = attached if eq else (args[i + 1] if i + 1 < len(args) else "")
        i += 1 if eq else 2
        reading.option(option, value)
    return reading.head(None, i)


def _positional(args: Words, valued: frozenset[str] = frozenset()) -> list[str | None]:
    """The arguments that are not options (or option values), up to `--`."""
    out: list[str | None] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            break
        elif arg is not None and arg.startswith("-"):
            skip = arg in valued
        else:
            out.append(arg)
    return out


def _reset_moves(args: Words) -> bool:
    """`git reset` naming a commit other than HEAD moves the branch (and the index)."""
    return any(a != "HEAD" for a in _positional(args))


def committing(sub: str, args: Words) -> bool:
    """Whether `git SUB ARGS` creates a commit or lands one on a branch."""
    if sub in COMMITTING:
        return not any(a in NO_COMMIT for a in args if a is not None)
    if sub == "stash":
        first = next(iter(_positional(args)), "push")
        return first not in STASH_READS
    return sub == "reset" and _reset_moves(args)


def brings(sub: str, args: Words) -> str:
    """Why `git SUB ARGS` fills the index or work tree from elsewhere than the work tree (a
    stash, another commit, a patch), or '': a commit later in the line then records
    content the hook cannot judge beforehand."""
    if sub == "stash":
        first = next(iter(_positional(args)), None)
        return f"git stash {first}" if first in ("pop", "apply", "branch") else ""
    if sub in ("apply", "read-tree", "update-index", "checkout-index", "am"):
        return f"git {sub}"
    if sub in ("merge", "pull", "cherry-pick", "revert", "rebase"):
        return f"git {sub}"
    if sub == "reset":
        return "git reset to another commit" if _reset_moves(args) else ""
    if sub == "restore":
        source = any(a in ("-s", "--source") or (a or "").startswith("--source=") for a in args)
        return "git restore --source" if source else ""
    if sub in ("checkout", "switch"):
        return f"git {sub} to another commit" if _positional(args, BRANCH_VALUES) else ""
    return ""


# --- git commit's options ---

SHORT_NAMES = {
    *(("-m", "--message"), ("-F", "--file"), ("-C", "--reuse-message")),
    *(("-c", "--reedit-message"), ("-t", "--template"), ("-a", "--all")),
    *(("-i", "--include"), ("-o", "--only"), ("-p", "--patch")),
}
LONG_OF = dict(SHORT_NAMES)
STAGES = frozenset(
    {"--all", "--include", "--only", "--interactive", "--patch", "--pathspec-from-file"}
)
ELSEWHERE = ("--reuse-message", "--reedit-message", "--fixup", "--squash", "--template")
_Options = list[tuple[str, str | None]]


def _options(args: Words) -> tuple[_Options, bool, bool]:
    """git commit's options as (long name, value), short clusters unpacked; whether a
    pathspec was given; whether some argument is built by the shell."""
    options: _Options = []
    paths = dynamic = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            dynamic = True
        elif arg == "--":
            return options, paths or i < len(args), dynamic
        elif not arg.startswith("-") or arg == "-":
            paths = True
        elif arg.startswith("--"):
            name, has_value, value = arg.partition("=")
            got: str | None = value
            if name in COMMIT_LONG_VALUES and not has_value:
                got, i = (args[i] if i < len(args) else ""), i + 1
            options.append((name, got))
        else:
            for j, flag in enumerate(arg[1:], start=1):
                name = LONG_OF.get(f"-{flag}", f"-{flag}")
                if flag not in COMMIT_SHORT_VALUES:
                    options.append((name, ""))
                    continue
                got = arg[j + 1 :]
                if not got:
                    got, i = (args[i] if i < len(args) else ""), i + 1
                options.append((name, got))
                break
    return options, paths, dynamic


def commit(args: Words, cwd: str, known: bool, staged_before: bool) -> Commit:
    """What `git commit ARGS` records: whether it stages more, amends, and its message."""
    options, paths, dynamic = _options(args)
    names = [name for name, _ in options]
    files = [value for name, value in options if name == "--file"]
    elsewhere = next((n for n in names if n in ELSEWHERE), None)
    unknown = f"{elsewhere} builds the message from elsewhere" if elsewhere else ""
    if dynamic:
        unknown = "an argument is built by the shell"
    found = Commit(
        cwd=cwd,
        amend="--amend" in names,
        stages=paths or staged_before or dynamic or any(n in STAGES for n in names),
        message_file=files[-1] if files else None,
        unknown=unknown,
        cwd_known=known,
        trailers=_trailers([value for name, value in options if name == "--trailer"]),
    )
    if files and files[-1] is None:
        return replace(found, message_file=None, unknown="the message file is named by the shell")
    return _with_message(found, [value for name, value in options if name == "--message"])


def _trailers(values: list[str | None]) -> Trailers | None:
    if not values:
        return None
    unknown = "a --trailer value is built by the shell" if None in values else ""
    return Trailers(tuple(v for v in values if v is not None), unknown=unknown)


def _with_message(found: Commit, messages: list[str | None]) -> Commit:
    if found.unknown or found.message_file is not None:
        return replace(found, unknown=found.unknown or "the message is in a file")
    if not messages:
        return replace(found, unknown="no -m: the message is written in an editor or elsewhere")
    if any(text is None for text in messages):
        return replace(found, unknown="the message is built by the shell ($... or `...`)")
    return replace(found, message="\n\n".join(t for t in messages if t is not None) + "\n")


def stdin_message(found: Commit, stdin: str | None) -> Commit:
    """`git commit -F -` with a here-document: the message is the document."""
    if found.message_file != "-" or stdin is None:
        return found
    return replace(found, message_file=None, unknown="", message=stdin)
