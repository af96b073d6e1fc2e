"""Work items run by a fixed number of threads, sized by the run's `--jobs`, never by the
machine: the runner's sides and each side's cases.

Not concurrent.futures: it imports logging and queue, which a run of trivial cases paid for
(about 10 ms of CPU) before its first case, and its pool's size defaults to one taken from
the machine's cores.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Batch(Generic[T, R]):
    """The items, what came of each, and the first failure; threads take items in order and
    say when the last of them is done (`finished`)."""

    def __init__(
        self, items: Sequence[T], work: Callable[[T], R], stop: Callable[[], None], threads: int
    ) -> None:
        self.items, self.work, self.stop = items, work, stop
        self.results: dict[int, R] = {}
        self.failed: list[BaseException] = []
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self._todo = iter(range(len(items)))
        self._running = threads

    def _next(self) -> int | None:
        with self._lock:
            return None if self.failed else next(self._todo, None)

    def fail(self, exc: BaseException) -> None:
        """Keep exc; the first failure calls `stop`, and no item starts after it."""
        with self._lock:
            first = not self.failed
            self.failed.append(exc)
        if first:
            self.stop()

    def worker(self) -> None:
        try:
            while (i := self._next()) is not None:
                try:
                    self.results[i] = self.work(self.items[i])
                except BaseException as exc:  # raised again in the caller's thread
                    self.fail(exc)
        finally:
            with self._lock:
                self._running -= 1
                if not self._running:
                    self.finished.set()


def each(
    items: Sequence[T], work: Callable[[T], R], threads: int, stop: Callable[[], None]
) -> list[R]:
    """work(item) for every item, at most `threads` at once, taken in order; the results in
    the items' order. When one raises (or the caller is interrupted while it waits), `stop`
    is called once, no further item starts, the running ones are waited for, and the first
    exception is raised (the interruption, when it was one).

    The caller waits on an event, not in `Thread.join`: a Ctrl-C that lands in join marks
    the thread it waits for as stopped (Python 3.11, bpo-45274's fix), so a second join
    returned at once and the run exited while a side was still removing its worktree."""
    size = max(1, min(threads, len(items)))
    batch = _Batch(items, work, stop, size)
    for _ in range(size):
        threading.Thread(target=batch.worker).start()
    try:
        batch.finished.wait()
    except BaseException as exc:  # Ctrl-C while waiting: stop, let the workers finish
        batch.fail(exc)
        batch.finished.wait()
        raise
    if batch.failed:
        raise batch.failed[0]
    return [batch.results[i] for i in range(len(items))]
