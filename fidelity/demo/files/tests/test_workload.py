"""The workload is deterministic and arrives as the mode says."""

from tinysim.workload import requests


def test_same_seed_same_requests():
    assert requests(50, True, 7) == requests(50, True, 7)


def test_online_requests_arrive_every_37_ms():
    assert [r.arrival_ms for r in requests(4, True, 7)] == [0, 37, 74, 111]


def test_offline_requests_all_arrive_at_zero():
    assert {r.arrival_ms for r in requests(20, False, 7)} == {0}
