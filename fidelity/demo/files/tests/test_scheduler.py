"""Placement: replicas round-robin; DP lanes keep rotating across scheduling calls."""

from tinysim.scheduler import Scheduler
from tinysim.workload import requests


def slots(scheduler, batches):
    return [(replica, lane) for batch in batches for _, replica, lane in scheduler.schedule(batch)]


def test_replicas_take_turns():
    placed = slots(Scheduler(replicas=3, lanes=1), [requests(6, False, 7)])
    assert [replica for replica, _ in placed] == [0, 1, 2, 0, 1, 2]


def test_lanes_rotate_across_calls():
    batches = [[r] for r in requests(4, True, 7)]  # online: one request per call
    assert [lane for _, lane in slots(Scheduler(replicas=1, lanes=2), batches)] == [0, 1, 0, 1]
