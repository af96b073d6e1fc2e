"""Replays a workload through the scheduler and per-lane FIFO queues."""

from collections import defaultdict

from tinysim.predictor import Predictor
from tinysim.scheduler import Scheduler
from tinysim.workload import Request


def simulate(reqs: list[Request], replicas: int, lanes: int) -> list[dict[str, object]]:
    scheduler = Scheduler(replicas, lanes)
    predictor = Predictor()
    free_at: dict[tuple[int, int], float] = defaultdict(float)
    finishes: dict[tuple[int, int], list[float]] = defaultdict(list)
    by_arrival: dict[int, list[Request]] = defaultdict(list)
    for r in reqs:
        by_arrival[r.arrival_ms].append(r)
    rows = []
    for now in sorted(by_arrival):
        for req, replica, lane in scheduler.schedule(by_arrival[now]):
            slot = (replica, lane)
            depth = sum(1 for f in finishes[slot] if f > now)
            prefill, decode = predictor.predict(req.prompt_tokens, depth)
            start = max(float(now), free_at[slot])
            first = start + prefill
            finish = first + decode * req.output_tokens
            free_at[slot] = finish
            finishes[slot].append(finish)
            rows.append(
                {
                    "request_id": req.request_id,
                    "arrival_ms": req.arrival_ms,
                    "replica": replica,
                    "lane": lane,
                    "start_ms": f"{start:.3f}",
                    "ttft_ms": f"{first - req.arrival_ms:.3f}",
                    "latency_ms": f"{finish - req.arrival_ms:.3f}",
                }
            )
    return sorted(rows, key=lambda row: int(str(row["request_id"])))
