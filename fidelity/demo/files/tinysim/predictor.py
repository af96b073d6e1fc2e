"""A latency predictor with an on-disk cache (one file per prompt bucket and queue depth)."""

import json
import os


class Predictor:
    def __init__(self) -> None:
        self.cache = os.environ.get("TINYSIM_CACHE")

    def predict(self, prompt_tokens: int, depth: int) -> tuple[float, float]:
        bucket = prompt_tokens // 128
        depth = min(depth, 8)
        path = os.path.join(self.cache, f"pred-b{bucket}-d{depth}.json") if self.cache else None
        if path is not None and os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            return data["prefill_ms"], data["decode_ms"]
        prefill = 2.0 + 1.5 * bucket + 0.75 * depth
        decode = 0.25 + 0.05 * depth
        if path is not None:
            with open(path, "w") as f:
                json.dump({"prefill_ms": prefill, "decode_ms": decode}, f)
        return prefill, decode
