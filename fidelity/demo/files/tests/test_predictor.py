"""Latency prediction: grows with prompt and queue depth; depth saturates at 8."""

from tinysim.predictor import Predictor


def test_prefill_grows_with_the_prompt():
    p = Predictor()
    assert p.predict(100, 0)[0] < p.predict(1000, 0)[0]


def test_queue_depth_saturates_at_eight():
    p = Predictor()
    assert p.predict(100, 8) == p.predict(100, 50)


def test_cache_returns_what_it_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYSIM_CACHE", str(tmp_path))
    first = Predictor().predict(300, 2)
    assert Predictor().predict(300, 2) == first
    assert len(list(tmp_path.iterdir())) == 1
