"""Per-principal token buckets (``serve.rate_limit_per_minute``), shared by every worker process of a server.

Each principal has a bucket of ``N`` tokens refilled at ``N / 60`` per second; a request takes one token or is
refused with the seconds until one is back (the ``Retry-After`` of the 429).

:class:`SharedRateLimiter` keeps the buckets in a small SQLite file next to the served store
(``<store>.ratelimit.db``, WAL mode), so every uvicorn worker — and every other server on the same host serving the
same store — draws from one bucket per principal: the limit is N per minute for the whole server, whatever the
number of workers. One request costs one short ``BEGIN IMMEDIATE`` transaction (read the bucket, write it back),
which SQLite serialises across processes, so two workers can never both spend the last token. The buckets live in
their own file rather than in the store because the store's single writer lock is also held by ingests and
research-hub writes: a rate-limit check must not queue behind those. The file holds nothing but counters; deleting it
only refills every bucket. :class:`RateLimiter` is the same bucket in memory, for an in-memory store and for tests.
"""
from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ..errors import StoreError

#: How often (seconds) one process deletes the rows of buckets that are full again (a missing row means "full").
PRUNE_EVERY = 60.0
_INIT_ATTEMPTS = 50


def take(tokens: float, last: float, now: float, capacity: float, rate: float) -> tuple[bool, float, int]:
    """One request against a bucket holding ``tokens`` at time ``last``: ``(allowed, tokens left, retry_after)``.
    A clock that went backwards (another process wrote a later time) refills nothing."""
    tokens = min(capacity, tokens + max(0.0, now - last) * rate)
    if tokens >= 1.0:
        return True, tokens - 1.0, 0
    return False, tokens, max(1, math.ceil((1.0 - tokens) / rate))


class RateLimiter:
    """In-process buckets: ``allow(key) -> (allowed, retry_after_seconds)``; ``per_minute = 0`` switches limiting
    off. Only right for one process: with several workers use :class:`SharedRateLimiter`."""

    shared = False

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
            allowed, tokens, retry_after = take(tokens, last, now, self.capacity, self.rate)
            self._buckets[key] = (tokens, now)  # most recently used last
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)  # an evicted key starts full again: at worst one extra burst
        return allowed, retry_after

    def close(self) -> None:
        pass


class SharedRateLimiter:
    """Buckets in the SQLite file ``path``, shared by every process that opens it (same interface as
    :class:`RateLimiter`). The clock is wall time, as all processes on a host read the same one."""

    shared = True

    def __init__(self, path: str | Path, per_minute: int, clock: Callable[[], float] = time.time,
                 busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.clock = clock
        self.busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None  # opened on first use: never before uvicorn forks a worker
        self._lock = threading.Lock()
        self._next_prune = 0.0

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    @staticmethod
    def path_for(store: str | Path) -> Path:
        """The bucket file of a served store: ``kb.db`` → ``kb.ratelimit.db`` in the same folder."""
        p = Path(store)
        return p.with_name(p.stem + ".ratelimit.db")

    def _fail(self, exc: Exception) -> StoreError:
        return StoreError(f"rate-limit file {self.path} cannot be used ({exc}). Fix: check the disk and the "
                          "folder's permissions; deleting the file is safe (it only refills every bucket).")

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._fail(exc) from exc
        for attempt in range(_INIT_ATTEMPTS):
            try:
                # Switching a new file to WAL may be answered "locked" at once (no busy wait) while another worker
                # does the same; the table is created idempotently.
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("CREATE TABLE IF NOT EXISTS buckets (key TEXT PRIMARY KEY, tokens REAL NOT NULL, "
                             "updated REAL NOT NULL) WITHOUT ROWID")
                return conn
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == _INIT_ATTEMPTS - 1:
                    conn.close()
                    raise self._fail(exc) from exc
                time.sleep(0.02 * (attempt + 1))
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise self._fail(exc) from exc
        raise AssertionError("unreachable")

    def allow(self, key: str) -> tuple[bool, int]:
        if not self.enabled:
            return True, 0
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")  # the write lock first, so no other process reads this bucket now
                try:
                    now = self.clock()  # read under the lock: writers' times then only move forward
                    row = conn.execute("SELECT tokens, updated FROM buckets WHERE key = ?", (key,)).fetchone()
                    tokens, last = (float(row[0]), float(row[1])) if row else (self.capacity, now)
                    allowed, tokens, retry_after = take(tokens, last, now, self.capacity, self.rate)
                    conn.execute("INSERT INTO buckets(key, tokens, updated) VALUES (?, ?, ?) ON CONFLICT(key) DO "
                                 "UPDATE SET tokens = excluded.tokens, updated = excluded.updated",
                                 (key, tokens, max(now, last)))
                    if now >= self._next_prune:
                        # A bucket untouched for capacity / rate seconds is full again, exactly as a missing row.
                        conn.execute("DELETE FROM buckets WHERE updated < ?", (now - self.capacity / self.rate,))
                        self._next_prune = now + PRUNE_EVERY
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._fail(exc) from exc
        return allowed, retry_after

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def make_limiter(store: str | Path, per_minute: int) -> RateLimiter | SharedRateLimiter:
    """The limiter of a server over ``store``: shared through the store's bucket file, or in memory when the store
    itself is (``:memory:``) or limiting is off."""
    if per_minute <= 0 or str(store) == ":memory:":
        return RateLimiter(per_minute)
    return SharedRateLimiter(SharedRateLimiter.path_for(store), per_minute)
