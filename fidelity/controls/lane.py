"""A lane: one worktree per worker, reused control after control, each run in a
verified-clean tree (the pool of lanes is `lanes`).

A control's edits are applied, its setup commands run, its tests run (in a warm pytest where
that is sound, else in a fresh process), and then the edited files are written back. The
tree must then be clean again (`git status`, caches aside), or it is reset and cleaned. A
restored or edited Python file gets a later mtime and loses its cached bytecode, since a
`.pyc` is trusted on mtime (seconds) and size, and an edit such as `a + b` -> `a - b`
keeps the size. The built-in no-op control runs last, so state one control leaves behind
shows up as a no-op that does not survive.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from fidelity import proc, worktree
from fidelity.controls import edit as controls_edit
from fidelity.controls import junit as junit_read
from fidelity.controls import runner, warm
from fidelity.controls.selection import Selection, parse_patch
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.verdict import RunStatus, TreeRun, classify
from fidelity.git import worktrees
from fidelity.placeholders import fill

SELECT_ENV = "FIDELITY_SELECT"
COLLECTED_KEPT = 3  # collected servers a lane keeps alive at once (one per command)


@dataclass(frozen=True, slots=True)
class Tree:
    """What every lane of one run shares: the tree under test, its table, the import guard's
    names, the run's cancellation token (set on Ctrl-C: a worker that has not started its
    test command yet does not start it, and the lanes' processes are killed), and the
    commands whose tests failed in a fork of a collected pytest but not in a fresh process
    (no lane forks them again)."""

    repo: Path
    sha: str
    table: ControlTable
    names: tuple[str, ...] = ()
    cancel: proc.Cancel = field(default_factory=proc.Cancel)
    unforked: set[tuple[str, ...]] = field(default_factory=set, hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class Job:
    """One run of one control in a lane."""

    control: Control
    log: Path
    timeout_s: float
    selection: Selection | None = None  # None: every test
    env: Mapping[str, str] = field(default_factory=dict)  # extra variables (trace, expect)
    warm: bool = False  # fork a warm pytest when the command allows it
    preload: tuple[str, ...] = ()
    # failures in one line each (`--tb=line`) unless the command names a style: a control's
    # verdict reads how each test failed from the plugin, and pytest spent about a seventh
    # of a control's run parsing source for long tracebacks nobody reads
    brief: bool = False
    # the edit lands only in function bodies that ran inside tests alone (`Selection`): a
    # collected server may swap it into a fork instead of importing the tree afresh
    swap: bool = False
    # a collected server may be started for it (else only one the lane has alive is used)
    collect: bool = False
    # the traced run of the unmodified tree: its collected server is started with the trace
    # switched on and this run is its first child, so the tree is imported and collected once
    traced: bool = False


def edited_files(control: Control) -> list[str]:
    files = []
    for e in control.edits:
        if e.patch is None:
            files.append(e.file)
        else:
            files += [f for pf in parse_patch(e.patch) for f in (pf.old, pf.new) if f]
            files.append(e.file)
    return list(dict.fromkeys(files))


def _forget_bytecode(path: Path) -> None:
    """A later mtime and no cached bytecode, so Python compiles what is on disk now."""
    if path.suffix == ".py":
        for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            pyc.unlink(missing_ok=True)
    if path.exists():
        stat = path.stat()
        later = max(time.time_ns(), stat.st_mtime_ns) + 2_000_000_000
        os.utime(path, ns=(later, later))


class Lane:
    """A worktree of the tree's sha, opened on first use, and the warm pytest that serves it."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.table = tree.table
        self._stack = ExitStack()
        self._root: Path | None = None
        self._server: warm.Server | None = None
        self._warm_failed = False
        # collected servers by their pytest arguments, the latest used last (`COLLECTED_KEPT`)
        self._collected: dict[tuple[str, ...], warm.Server] = {}
        self._collect_failed: set[tuple[str, ...]] = set()

    @property
    def root(self) -> Path:
        if self._root is None:
            checkout = self._stack.enter_context(
                worktree.detached(self.tree.repo, self.tree.sha, "control")
            )
            self._root = checkout.path
        return self._root

    def close(self) -> None:
        for server in (self._server, *self._collected.values()):
            if server is not None:
                server.close()
        self._server = None
        self._collected = {}
        self._stack.close()

    def run(self, job: Job) -> TreeRun:
        """The job's control in this lane's tree; overhead is wall time minus the test run."""
        root = self.root
        start = time.monotonic()  # after the worktree is made: that is overhead, not the run
        collecting = 0.0
        if job.swap and job.collect:
            self._collect(job, root)  # while the tree is still the unmodified one
            collecting = time.monotonic() - start
        names = edited_files(job.control)
        originals = {n: (root / n).read_bytes() if (root / n).is_file() else None for n in names}
        try:
            run = self._edited(job, root, collecting)
        finally:
            self._restore(root, originals)
        if job.traced and run.mode == "collected":
            # as long as a cold run took: each control's limit is scaled from it
            run = replace(run, duration_s=round(run.duration_s + collecting, 4))
        wall = time.monotonic() - start
        return replace(run, overhead_s=round(max(wall - run.duration_s, 0.0), 4))

    def _edited(self, job: Job, root: Path, spent: float = 0.0) -> TreeRun:
        why = controls_edit.apply(root, job.control.edits)
        for name in edited_files(job.control):
            _forget_bytecode(root / name)
        if why:
            return TreeRun(RunStatus.UNVIABLE, detail=why)
        if self.tree.cancel.is_set():
            raise KeyboardInterrupt
        why = self._setup(root, job)
        if why:
            return TreeRun(RunStatus.UNVIABLE, detail=why)
        if job.selection is not None and job.selection.ids == ():
            return TreeRun(
                RunStatus.PASSED,
                detail="not run: no test ran the edited code in the unmodified tree",
            )
        return self._test(job, root, spent)

    def _restore(self, root: Path, originals: Mapping[str, bytes | None]) -> None:
        for name, data in originals.items():
            path = root / name
            if data is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(data)
            _forget_bytecode(path)
        left = worktrees.leftovers(root)
        if left:
            tracked = worktrees.reset_worktree(root, left)
            if tracked:  # a test rewrote a tracked file: its bytecode cannot be trusted
                for cache in root.rglob("__pycache__"):
                    shutil.rmtree(cache, ignore_errors=True)

    def _setup(self, root: Path, job: Job) -> str:
        """'' when every setup command of the table succeeded in this tree, else why not."""
        if not self.table.setup:
            return ""
        log = job.log.with_suffix(".setup.log")
        env = runner.env_for(self.table, root, self.tree.names, pytest=False)
        for argv in self.table.setup:
            filled = [fill(a, {"worktree": str(root)}) for a in argv]
            result = proc.run(
                filled,
                cwd=root,
                env=env,
                timeout_s=job.timeout_s,
                stdout_path=log,
                stderr_path=log,
                cancel=self.tree.cancel,
            )
            if result.status is not proc.ProcStatus.OK:
                tail = runner.explain(
                    result.status, result.error, filled, runner.read_tail(log), log
                )
                return f"setup command {' '.join(argv)!r} failed ({result.status}): {tail}"
        return ""

    def _argv(self, job: Job, root: Path, *, brief: bool = True) -> tuple[list[str], Path]:
        """The job's test command as run (brief: with `--tb=line` where `Job.brief` asks for
        it), and the JUnit file it writes."""
        command = job.control.command
        junit = root.parent / "junit.xml"
        argv = runner.argv_for(command, junit, root)
        if brief and _tb_line(job):
            argv.append("--tb=line")
        return argv, junit

    def _test(self, job: Job, root: Path, spent: float = 0.0) -> TreeRun:
        argv, junit = self._argv(job, root)
        junit.unlink(missing_ok=True)
        pytest = runner.is_pytest(job.control.command)
        extra = dict(job.env)
        env = runner.env_for(self.table, root, self.tree.names, pytest)
        args = warm.pytest_args(argv) if job.warm and pytest else None
        result = self._swapped(job, root, extra, spent)
        if job.traced:
            result = self._trusted(job, root, result, spent)
        mode = "collected" if job.traced else "swap"
        if result is None and job.selection is not None and job.selection.ids is not None:
            chosen = root.parent / "select.json"
            files = sorted({i.split("::")[0] for i in job.selection.ids})
            chosen.write_text(json.dumps({"files": files, "ids": list(job.selection.ids)}))
            extra[SELECT_ENV] = str(chosen)
        if result is None and args is not None:
            server = self._warm_server(argv[0], root, env, job)
            if server is not None:
                result, mode = server.run(args, extra, job.log, job.timeout_s), "warm"
                if result.lost:
                    self._server, result = None, None
        if result is None:
            cold = proc.run(
                argv,
                cwd=root,
                env=runner.with_extra(env, extra),
                timeout_s=job.timeout_s,
                stdout_path=job.log,
                stderr_path=job.log,
                cancel=self.tree.cancel,
            )
            result = warm.WarmResult(cold.status, cold.returncode, cold.duration_s, cold.error)
            mode = "cold"
        return self._read(result, argv, junit, job, mode)

    def _server_argv(self, job: Job, root: Path) -> list[str] | None:
        """A collected server's command line for the job, which is also its key: the job's
        command without the `--tb=line` a control adds (the child sets that), so that the
        unmodified run's server serves the controls too; None unless `PYTHON -m pytest`."""
        if not runner.is_pytest(job.control.command):
            return None
        argv = self._argv(job, root, brief=False)[0]
        return argv if warm.pytest_args(argv) is not None else None

    def _swapped(
        self, job: Job, root: Path, extra: Mapping[str, str], spent: float = 0.0
    ) -> warm.WarmResult | None:
        """The run in a fork of the collected server, or None where it cannot be one. The
        traced run's limit covers the server's collection too (`spent`), as a cold run's
        covers its own."""
        argv = self._server_argv(job, root) if job.swap else None
        if argv is None or self.table.setup or job.control.command in self.tree.unforked:
            return None
        key = tuple(argv)
        server = self._collected.get(key)
        if server is None or not server.alive:
            return None
        ids = job.selection.ids if job.selection is not None else None
        tb = "line" if _tb_line(job) else ""
        limit = max(1.0, job.timeout_s - spent) if job.traced else job.timeout_s
        result = server.swap(
            edited_files(job.control), ids, extra, job.log, limit, traced=job.traced, tb=tb
        )
        if result.refused:
            _note(job.log.with_suffix(".swap.txt"), result.refused)
            return None
        if result.lost or result.status is proc.ProcStatus.TIMEOUT:
            self._collected.pop(key, None)  # closed by the call: the next control starts one
        return None if result.lost else result

    def _trusted(
        self, job: Job, root: Path, result: warm.WarmResult | None, spent: float
    ) -> warm.WarmResult | None:
        """The traced run's result from a fork, kept only when every test passed there: a
        fork can fail where a fresh process passes (a thread started at import does not
        survive it), so otherwise a cold run decides (None), and this command's controls
        import the tree afresh. A server whose collection used up the limit is a timeout."""
        if result is None:
            if spent >= job.timeout_s:
                return warm.WarmResult(proc.ProcStatus.TIMEOUT, None, 0.0)
            return None
        if result.status is proc.ProcStatus.OK:
            return result
        self.tree.unforked.add(job.control.command)  # every lane's, not this lane's alone
        _note(
            job.log.with_suffix(".swap.txt"),
            f"the tests did not all pass in a fork of the collected pytest ({result.status}, "
            f"exit {result.returncode}), so a fresh process ran them, and this command's "
            "controls import the tree afresh (a thread started at import does not survive "
            "a fork)",
        )
        argv = self._server_argv(job, root)
        server = self._collected.pop(tuple(argv), None) if argv is not None else None
        if server is not None:
            server.close()
        return None

    def _collect(self, job: Job, root: Path) -> None:
        """A collected server for the job's command, started if the lane has none alive (for
        the traced run, always one with the trace switched on); the least recently used goes
        when more than `COLLECTED_KEPT` would be kept."""
        argv = self._server_argv(job, root)
        args = warm.pytest_args(argv) if argv is not None else None
        if argv is None or args is None or tuple(argv) in self._collect_failed or self.table.setup:
            return  # setup commands remake files from the edited tree: imported afresh
        if job.control.command in self.tree.unforked:
            return
        key = tuple(argv)
        server = self._collected.pop(key, None)
        if server is not None and server.alive and not job.traced:
            self._collected[key] = server
            return
        if server is not None:
            server.close()
        while len(self._collected) >= COLLECTED_KEPT:
            self._collected.pop(next(iter(self._collected))).close()
        env = runner.env_for(self.table, root, self.tree.names, True)
        if job.traced:
            env = runner.with_extra(env, job.env)
        started = warm.Server.collect(
            argv[0],
            root,
            env,
            args,
            job.log.with_suffix(".server.log") if job.traced else job.log.parent / "_collected.log",
            timeout_s=job.timeout_s,
            cancel=self.tree.cancel,
        )
        if started is None:
            self._collect_failed.add(key)
        else:
            self._collected[key] = started

    def _read(
        self, result: warm.WarmResult, argv: Sequence[str], junit: Path, job: Job, mode: str
    ) -> TreeRun:
        output = runner.read_tail(job.log)
        why = runner.explain(result.status, result.error, argv, output, job.log)
        if result.status is proc.ProcStatus.TIMEOUT:
            why = f"timed out after {job.timeout_s:g} s; log: {job.log}"
        guard = result.returncode == runner.GUARD_EXIT and runner.GUARD_MARK in output
        suite = None if guard else _read_junit(junit)
        run = classify(result.status, result.returncode, suite, why)
        if guard:
            run = TreeRun(RunStatus.UNVIABLE, detail=why, exit_code=result.returncode)
        return replace(run, duration_s=round(result.duration_s, 4), mode=mode)

    def _warm_server(
        self, python: str, root: Path, env: Mapping[str, str], job: Job
    ) -> warm.Server | None:
        if self._server is not None and self._server.alive:
            return self._server
        if self._warm_failed:
            return None
        log = job.log.parent / "_warm.log"
        self._server = warm.Server.start(
            python, root, env, job.preload, log, cancel=self.tree.cancel
        )
        self._warm_failed = self._server is None
        return self._server


def _tb_line(job: Job) -> bool:
    """Whether the job's failures are reported a line each: brief, and the command names no
    `--tb` of its own."""
    command = job.control.command
    return (
        job.brief and runner.is_pytest(command) and not any(a.startswith("--tb") for a in command)
    )


def _note(path: Path, text: str) -> None:
    """Why a control ran in a fresh import and not a swap, beside its log."""
    path.write_text(f"not swapped: {text}\n", encoding="utf-8")


def _read_junit(junit: Path) -> junit_read.Suite | None:
    if not junit.is_file():
        return None
    try:
        return junit_read.read([junit])
    except junit_read.JUnitError:
        return None
