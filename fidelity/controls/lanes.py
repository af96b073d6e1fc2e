"""The pool that runs controls in lanes, one lane per worker thread, and cleans up on Ctrl-C:
nothing new starts, and the run's test commands are killed, never git half-way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar

from fidelity import proc
from fidelity.controls.lane import Job, Lane, Tree
from fidelity.controls.table import Control
from fidelity.controls.verdict import TreeRun

T = TypeVar("T")


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

    @property
    def jobs(self) -> int:
        return self._jobs

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
