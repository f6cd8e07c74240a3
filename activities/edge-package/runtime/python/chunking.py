"""Chunked control, as openpi's ActionChunkBroker and LeRobot's async robot client do it: one inference returns a
chunk of H actions, played one per control tick from a queue keyed by control step. The next request leaves (in a
background thread) as soon as the queue holds no more than `threshold` of a chunk, so the robot keeps acting during
the round trip. A chunk is aligned to the step its observation was taken at: actions for steps already played are
dropped, and where it overlaps actions still queued the two are merged by the aggregation (`replace`: the newest
chunk wins; `weighted`: 0.3 * queued + 0.7 * newest, LeRobot's weighted_average). A tick whose step has no action
(the chunk came too late) holds the last action and counts an underrun.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

Action = Dict[str, np.ndarray]
AGGREGATIONS: Dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "replace": lambda queued, newest: newest,
    "weighted": lambda queued, newest: (0.3 * queued + 0.7 * newest).astype(newest.dtype),
}


def split_chunk(chunk: Dict[str, Any], features: List[dict]) -> List[Action]:
    """The chunk's actions in order. A feature answered with its bare shape is one action (H = 1); H is the shortest
    leading dimension among the features; keys the profile does not name are dropped."""
    stacked = {}
    for f in features:
        value = np.asarray(chunk[f["name"]])
        stacked[f["name"]] = value if value.ndim == len(f["shape"]) + 1 else value[np.newaxis]
    horizon = min(v.shape[0] for v in stacked.values())
    return [{name: v[i] for name, v in stacked.items()} for i in range(horizon)]


class SettingError(ValueError):
    pass


def validate(threshold: float, aggregation: str) -> None:
    if not 0 <= threshold <= 1:
        raise SettingError(f"chunk threshold must be within [0, 1], got {threshold}")
    if aggregation not in AGGREGATIONS:
        raise SettingError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation}")


class ActionQueue:
    """Actions by control step, each with its origin (the step of the observation its newest chunk was inferred
    from); the control loop pops, the request thread merges."""

    def __init__(self, aggregate: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
        self._aggregate, self._lock = aggregate, threading.Lock()
        self._actions: Dict[int, Tuple[Action, int]] = {}

    def merge(self, origin: int, actions: List[Action], next_step: int) -> None:
        with self._lock:
            for offset, action in enumerate(actions):
                step = origin + offset
                if step < next_step:
                    continue  # its tick has passed
                queued = self._actions.get(step)
                if queued is not None:
                    action = {k: self._aggregate(queued[0][k], v) for k, v in action.items()}
                self._actions[step] = (action, origin)

    def pop(self, step: int) -> Optional[Tuple[Action, int]]:
        with self._lock:
            for stale in [s for s in self._actions if s < step]:
                del self._actions[stale]
            return self._actions.pop(step, None)

    def depth(self) -> int:
        with self._lock:
            return len(self._actions)


@dataclass
class LoopStats:
    inferences: int = 0
    underruns: int = 0
    depths: List[int] = field(default_factory=list)
    tick_times: List[float] = field(default_factory=list)
    round_trips_ms: List[float] = field(default_factory=list)

    def jitter_ms(self, period_s: float) -> List[float]:
        """How far each tick interval strayed from the control period."""
        return [abs(b - a - period_s) * 1000 for a, b in zip(self.tick_times, self.tick_times[1:])]


class ChunkedController:
    """Plays `steps` actions at `rate_hz` (0: unthrottled, each tick waits for the action it needs, so nothing
    underruns). `infer(observation) -> chunk`, `observe(step) -> observation` and `apply(action, step, origin)` are
    the policy and the robot; an exception in `infer` ends the run at the next tick."""

    def __init__(self, infer: Callable[[Any], Dict[str, Any]], observe: Callable[[int], Any],
                 apply: Callable[[Action, int, int], None],
                 features: List[dict], rate_hz: float, threshold: float = 0.5, aggregation: str = "replace") -> None:
        validate(threshold, aggregation)
        self.infer, self.observe, self.apply, self.features = infer, observe, apply, features
        self.period = 1 / rate_hz if rate_hz > 0 else 0.0
        self.threshold, self.queue, self.stats = threshold, ActionQueue(AGGREGATIONS[aggregation]), LoopStats()
        self.chunk_size, self.step = 1, 0
        self._inflight: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None

    def _request(self, observation: Any, origin: int) -> None:
        try:
            self.stats.inferences += 1
            started = time.perf_counter()
            chunk = self.infer(observation)
            self.stats.round_trips_ms.append((time.perf_counter() - started) * 1000)
            actions = split_chunk(chunk, self.features)
            self.chunk_size = max(self.chunk_size, len(actions))
            self.queue.merge(origin, actions, self.step)
        except BaseException as error:  # noqa: BLE001 - re-raised in the control loop's thread
            self._error = error

    def _ask(self, wait: bool) -> None:
        self._inflight = threading.Thread(target=self._request, args=(self.observe(self.step), self.step), daemon=True)
        self._inflight.start()
        if wait:
            self._inflight.join()

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise self._error

    def run(self, steps: int) -> None:
        self._ask(wait=True)  # nothing to play before the first chunk
        self._raise_failure()
        last: Optional[Tuple[Action, int]] = None
        deadline = time.perf_counter()
        while self.step < steps:
            if self.period:
                deadline = self._sleep_until(deadline)
            elif self.queue.depth() == 0 and self._inflight is not None:
                self._inflight.join()
            self._raise_failure()
            self.stats.tick_times.append(time.perf_counter())
            self.stats.depths.append(self.queue.depth())
            queued = self.queue.pop(self.step)
            if queued is None:
                self.stats.underruns += 1
                queued = last
            if queued is not None:  # None only while no chunk has held an action yet
                self.apply(queued[0], self.step, queued[1])
                last = queued
            self.step += 1
            idle = self._inflight is None or not self._inflight.is_alive()
            if idle and self.step < steps and self.queue.depth() <= self.threshold * self.chunk_size:
                self._ask(wait=False)

    def _sleep_until(self, deadline: float) -> float:
        """Sleeps to the tick's deadline; returns the next one. A tick more than a period late restarts the schedule
        instead of bursting to catch up."""
        now = time.perf_counter()
        if deadline > now:
            time.sleep(deadline - now)
        elif now - deadline > self.period:
            deadline = now
        return deadline + self.period
