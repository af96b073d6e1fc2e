"""Places each request on a (replica, DP lane) slot."""

from tinysim.workload import Request


class Scheduler:
    def __init__(self, replicas: int, lanes: int) -> None:
        self.replicas = replicas
        self.lanes = lanes
        self.cursor = 0  # persists across scheduling calls

    def schedule(self, batch: list[Request]) -> list[tuple[Request, int, int]]:
        placed = []
        for i, req in enumerate(batch):
            replica = self.cursor % self.replicas
            lane = (i // self.replicas) % self.lanes
            self.cursor += 1
            placed.append((req, replica, lane))
        return placed
