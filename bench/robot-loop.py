"""One measurement of bench/robot-loop.ts: a control loop at --hz for --steps ticks, printed as one JSON line.

Modes: `bare` (a loop that only sleeps to each tick's deadline: the timer's own ceiling), `chunked` (the package's
ChunkedController, chunking.py, against a fake in-process transport answering a chunk of --chunk actions after
--latency-ms) and `per-step` (one blocking request per step, as the robot client did before chunked control).
"""

import argparse
import json
import sys
import time
from pathlib import Path
from typing import List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "activities/edge-package/runtime/python"))
import chunking  # noqa: E402

FEATURES = [{"name": "actions", "dtype": "float32", "shape": [7]}]


def jitter(ticks: List[float], period: float, q: int) -> float:
    """Nearest-rank percentile q of how far tick intervals strayed from the period (run_report.py's)."""
    strayed = sorted(abs(b - a - period) * 1000 for a, b in zip(ticks, ticks[1:]))
    return strayed[max(0, -(-len(strayed) * q // 100) - 1)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["bare", "chunked", "per-step"])
    p.add_argument("--hz", type=float, default=50)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--chunk", type=int, default=50)
    p.add_argument("--latency-ms", type=float, default=30)
    p.add_argument("--threshold", type=float, default=0.5)
    a = p.parse_args()
    period, requests, underruns = 1 / a.hz, 0, 0
    chunk = {"actions": np.zeros((a.chunk, 7), dtype=np.float32)}

    def infer(_obs: object) -> dict:
        nonlocal requests
        requests += 1
        time.sleep(a.latency_ms / 1000)
        return chunk

    started = time.perf_counter()
    if a.mode == "chunked":
        loop = chunking.ChunkedController(infer, lambda step: {}, lambda action, step, origin: None, FEATURES, a.hz, a.threshold)
        loop.run(a.steps)
        ticks, underruns = loop.stats.tick_times, loop.stats.underruns
    else:
        ticks, deadline = [], time.perf_counter()
        for _ in range(a.steps):
            if a.mode == "per-step":
                infer({})
            now = time.perf_counter()  # the controller's own schedule (ChunkedController._sleep_until)
            if deadline > now:
                time.sleep(deadline - now)
            elif now - deadline > period:
                deadline = now
            deadline += period
            ticks.append(time.perf_counter())
    elapsed = time.perf_counter() - started
    print(json.dumps({"ticksPerSecond": a.steps / elapsed, "jitterP50Ms": jitter(ticks, period, 50), "jitterP99Ms": jitter(ticks, period, 99),
                      "requestsPerStep": requests / a.steps, "underruns": underruns}))


if __name__ == "__main__":
    main()
