"""Lanes: one worktree per worker, reused control after control, each run in a verified-clean
tree; and the pool that runs controls in lanes and cleans up on Ctrl-C.

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
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from fidelity import proc, worktree
from fidelity.controls import edit as controls_edit
from fidelity.controls import junit as junit_read
from fidelity.controls import runner, warm
from fidelity.controls.selection import Selection, parse_patch
from fidelity.controls.table import Control, ControlTable
from fidelity.controls.verdict import RunStatus, TreeRun, classify
from fidelity.git import worktrees
from fidelity.placeholders import fill

T = TypeVar("T")
SELECT_ENV = "FIDELITY_SELECT"
COLLECTED_KEPT = 3  # collected servers a lane keeps alive at once (one per command)


@dataclass(frozen=True, slots=True)
class Tree:
    """What every lane of one run shares: the tree under test, its table, the import guard's
    names, and the run's cancellation token (set on Ctrl-C: a worker that has not started
    its test command yet does not start it, and the lanes' processes are killed)."""

    repo: Path
    sha: str
    table: ControlTable
    names: tuple[str, ...] = ()
    cancel: proc.Cancel = field(default_factory=proc.Cancel)


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
        start = time.monotonic()
        root = self.root
        collecting = 0.0
        if job.swap and job.collect:
            self._collect(job, root)  # while the tree is still the unmodified one
            collecting = time.monotonic() - start
        names = edited_files(job.control)
        originals = {n: (root / n).read_bytes() if (root / n).is_file() else None for n in names}
        try:
            run = self._edited(job, root)
        finally:
            self._restore(root, originals)
        if job.traced and run.mode == "collected":
            # as long as a cold run took: each control's limit is scaled from it
            run = replace(run, duration_s=round(run.duration_s + collecting, 4))
        wall = time.monotonic() - start
        return replace(run, overhead_s=round(max(wall - run.duration_s, 0.0), 4))

    def _edited(self, job: Job, root: Path) -> TreeRun:
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
        return self._test(job, root)

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

    def _test(self, job: Job, root: Path) -> TreeRun:
        argv, junit = self._argv(job, root)
        junit.unlink(missing_ok=True)
        pytest = runner.is_pytest(job.control.command)
        extra = dict(job.env)
        env = runner.env_for(self.table, root, self.tree.names, pytest)
        args = warm.pytest_args(argv) if job.warm and pytest else None
        result = self._swapped(job, root, extra)
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

    def _server_args(self, job: Job, root: Path) -> list[str] | None:
        """A collected server's pytest arguments for the job: its command's, without the
        `--tb=line` a control adds (the child sets that), so that the unmodified run's server
        serves the controls too; None when the command is not `PYTHON -m pytest`."""
        if not runner.is_pytest(job.control.command):
            return None
        return warm.pytest_args(self._argv(job, root, brief=False)[0])

    def _swapped(self, job: Job, root: Path, extra: Mapping[str, str]) -> warm.WarmResult | None:
        """The run in a fork of the collected server, or None where it cannot be one."""
        args = self._server_args(job, root) if job.swap else None
        if args is None or self.table.setup:
            return None
        key = tuple(args)
        server = self._collected.get(key)
        if server is None or not server.alive:
            return None
        ids = job.selection.ids if job.selection is not None else None
        tb = "line" if _tb_line(job) else ""
        result = server.swap(
            edited_files(job.control), ids, extra, job.log, job.timeout_s, traced=job.traced, tb=tb
        )
        if result.refused:
            _note(job.log.with_suffix(".swap.txt"), result.refused)
            return None
        if result.lost or result.status is proc.ProcStatus.TIMEOUT:
            self._collected.pop(key, None)  # closed by the call: the next control starts one
        return None if result.lost else result

    def _collect(self, job: Job, root: Path) -> None:
        """A collected server for the job's command, started if the lane has none alive (for
        the traced run, always one with the trace switched on); the least recently used goes
        when more than `COLLECTED_KEPT` would be kept."""
        argv, _ = self._argv(job, root, brief=False)
        args = warm.pytest_args(argv) if runner.is_pytest(job.control.command) else None
        if args is None or tuple(args) in self._collect_failed or self.table.setup:
            return  # setup commands remake files from the edited tree: imported afresh
        key = tuple(args)
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


class Lanes:
    """A pool of workers, each with its own lane of the tree, kept across several `map`
    calls."""

    def __init__(self, tree: Tree, jobs: int) -> None:
        self.tree = tree
        self._jobs = max(1, jobs)
        self._local = threading.local()
        self._lanes: list[Lane] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=self._jobs)

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for lane in self._lanes:
            lane.close()

    def lane(self) -> Lane:
        """This thread's lane (made on first use)."""
        lane = getattr(self._local, "lane", None)
        if lane is None:
            lane = self._local.lane = Lane(self.tree)
            with self._lock:
                self._lanes.append(lane)
        return lane

    def _in_lane(self, task: Callable[[Lane], T]) -> T:
        return task(self.lane())

    def map(
        self, tasks: Sequence[Callable[[Lane], T]], done: Callable[[T], None] | None = None
    ) -> list[T]:
        """Run tasks in lanes, results in task order. On Ctrl-C (or any error) nothing new
        starts and running test commands are killed before the exception goes on."""
        futures = [self._pool.submit(self._in_lane, t) for t in tasks]
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    value = future.result()
                    if done is not None:
                        done(value)
        except BaseException:
            abandon(futures, self.tree.cancel)
            raise
        return [f.result() for f in futures]


def abandon(futures: Sequence[Future[T]], cancel: proc.Cancel) -> None:
    """Start nothing new and kill the run's running commands until every worker has finished.

    Only the processes started with the run's token are killed (setup, tests, warm pytest),
    never git, so a worker's `git worktree add` or `remove` is never killed half-way; a
    second Ctrl-C while this runs is absorbed, not obeyed, since leaving now would leave
    worktrees behind.
    """
    cancel.set()
    for future in futures:
        future.cancel()
    while not all(f.done() for f in futures):
        try:
            cancel.kill()
            wait(futures, timeout=0.2)
        except KeyboardInterrupt:
            continue


def run_tree(tree: Tree, control: Control, log: Path, *, timeout_s: float = 3600.0) -> TreeRun:
    """One control, every test, cold, in a worktree of its own (the negative control)."""
    lane = Lane(tree)
    try:
        return lane.run(Job(control, log, control.timeout_s or timeout_s))
    finally:
        lane.close()


def parallel(tasks: Sequence[Callable[[], T]], jobs: int, cancel: proc.Cancel) -> list[T]:
    """Run tasks in a pool, results in task order, with the same Ctrl-C cleanup as `Lanes`
    (each task makes and removes its own lane; `cancel` is the token their lanes share)."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(t) for t in tasks]
        try:
            wait(futures)
            return [f.result() for f in futures]
        except BaseException:
            abandon(futures, cancel)
            raise
