"""Per-principal token buckets (``serve.rate_limit_per_minute``).

Each principal has a bucket of ``N`` tokens refilled at ``N / 60`` per second; a request takes one token or is
refused with the seconds until one is back (the ``Retry-After`` of the 429). Buckets live in the process: with
several workers or hosts every process keeps its own (docs/design.md, "Scale-out", says what to use instead).
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable


class RateLimiter:
    """``allow(key) -> (allowed, retry_after_seconds)``; ``per_minute = 0`` switches limiting off."""

    def __init__(self, per_minute: int, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (tokens, last refill)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    def allow(self, key: str) -> tuple[bool, int]:
        if not self.enabled:
            return True, 0
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            self._buckets[key] = (tokens, now)  # most recently used last
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)  # an evicted key starts full again: at worst one extra burst
        if allowed:
            return True, 0
        return False, max(1, math.ceil((1.0 - tokens) / self.rate))
