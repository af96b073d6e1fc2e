"""Places each request on a (replica, DP lane) slot."""

from tinysim.workload import Request


class Scheduler:
    def __init__(self, replicas: int, lanes: int) -> None:
        self.replicas = replicas
        self.lanes = lanes
        self.cursor = 0  # persists across scheduling calls

    def _slot(self) -> tuple[int, int]:
        # The lane rotates with the same persistent cursor as the replica, so it no longer
        # restarts at lane 0 each time the scheduler is entered.
        replica = self.cursor % self.replicas
        lane = (self.cursor // self.replicas) % self.lanes
        return replica, lane

    def schedule(self, batch: list[Request]) -> list[tuple[Request, int, int]]:
        placed = []
        for req in batch:
            replica, lane = self._slot()
            self.cursor += 1
            placed.append((req, replica, lane))
        return placed
