"""The simulation: one FIFO queue per slot, rows in request order."""

from tinysim.engine import simulate
from tinysim.workload import requests


def test_a_slot_serves_one_request_at_a_time():
    rows = simulate(requests(30, False, 7), replicas=1, lanes=1)
    ends = [r["arrival_ms"] + float(r["latency_ms"]) for r in rows]
    starts = [float(r["start_ms"]) for r in rows]
    assert all(later >= end for later, end in zip(starts[1:], ends, strict=False))


def test_rows_come_in_request_order():
    rows = simulate(requests(30, True, 7), replicas=2, lanes=2)
    assert [r["request_id"] for r in rows] == list(range(30))
