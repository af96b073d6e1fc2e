"""Places each request on a (replica, DP lane) slot."""

from tinysim.workload import Request


class Scheduler:
    def __init__(self, replicas: int, lanes: int) -> None:
        self.replicas = replicas
        self.lanes = lanes
        self.cursor = 0  # persists across scheduling calls

    def _slot(self, index_in_call: int) -> tuple[int, int]:
        replica = self.cursor % self.replicas
        lane = (index_in_call // self.replicas) % self.lanes
        return replica, lane

    def schedule(self, batch: list[Request]) -> list[tuple[Request, int, int]]:
        placed = []
        for index_in_call, req in enumerate(batch):
            replica, lane = self._slot(index_in_call)
            self.cursor += 1
            placed.append((req, replica, lane))
        return placed
