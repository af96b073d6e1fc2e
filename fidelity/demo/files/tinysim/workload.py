"""Deterministic requests: a linear congruential generator, so every run is bit-identical."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    request_id: int
    arrival_ms: int
    prompt_tokens: int
    output_tokens: int


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
