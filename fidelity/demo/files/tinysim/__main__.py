"""python -m tinysim --lanes N --replicas N (--online|--offline) --out DIR"""

import argparse
import csv
import json
import os

from tinysim.engine import simulate
from tinysim.workload import requests


def main() -> None:
    parser = argparse.ArgumentParser(prog="tinysim")
    parser.add_argument("--lanes", type=int, default=1, help="attention-DP lanes per replica")
    parser.add_argument("--replicas", type=int, default=1)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--online", action="store_true", help="requests arrive over time")
    mode.add_argument("--offline", action="store_true", help="all requests arrive at t=0")
    parser.add_argument("--requests", type=int, default=120)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = simulate(requests(args.requests, args.online, args.seed), args.replicas, args.lanes)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "request_metrics.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    lanes_used = sorted({(r["replica"], r["lane"]) for r in rows})
    summary = {"requests": len(rows), "slots_used": len(lanes_used)}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        f.write(json.dumps(summary, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
