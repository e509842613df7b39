"""Prometheus metrics: requests by route and status, a latency histogram, refusals by reason, rate-limited
requests.

Each app gets its own registry (several apps in one test process do not collide). Under ``uvicorn --workers N``
the command sets ``PROMETHEUS_MULTIPROC_DIR`` before the workers start; ``/metrics`` then aggregates every worker
(prometheus_client's multiprocess mode) instead of showing whichever worker answered.
"""
from __future__ import annotations

import os

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(self) -> None:
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        # In multiprocess mode the values go to files; the registry passed here is only for collection.
        self.registry = CollectorRegistry()
        reg = None if self.multiprocess else self.registry
        self.requests = Counter("ragbench_http_requests_total", "HTTP requests by route template, method and status",
                                ["route", "method", "status"], registry=reg)
        self.latency = Histogram("ragbench_http_request_duration_seconds", "HTTP request latency by route template",
                                 ["route", "method"], buckets=BUCKETS, registry=reg)
        self.refusals = Counter("ragbench_refusals_total", "Answers refused, by reason", ["reason"], registry=reg)
        self.rate_limited = Counter("ragbench_rate_limited_total", "Requests refused by the rate limiter (429)",
                                    registry=reg)
        if self.multiprocess:
            multiprocess.MultiProcessCollector(self.registry)

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
