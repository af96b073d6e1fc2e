"""Deterministic requests: a linear congruential generator, so every run is bit-identical."""

from collections import namedtuple

# a named tuple rather than a dataclass: `dataclasses` imports `inspect`, which doubles the
# start-up of every case the demo runs
Request = namedtuple("Request", "request_id arrival_ms prompt_tokens output_tokens")


def requests(count: int, online: bool, seed: int) -> list[Request]:
    state = seed
    out = []
    for i in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        prompt = 64 + state % 960
        state = (state * 1103515245 + 12345) % 2**31
        output = 16 + state % 240
        arrival = 37 * i if online else 0
        out.append(Request(i, arrival, prompt, output))
    return out
