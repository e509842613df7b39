"""Prometheus metrics: requests by route and status, a latency histogram, refusals by reason, rate-limited
requests and, with ``serve.decided_by_metrics``, answers by the rule that decided them.

Each app gets its own registry (several apps in one test process do not collide). Under ``uvicorn --workers N``
the command sets ``PROMETHEUS_MULTIPROC_DIR`` before the workers start; ``/metrics`` then aggregates every worker
(prometheus_client's multiprocess mode) instead of showing whichever worker answered.
"""
from __future__ import annotations

import os

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The server's metrics; ``decided_by``: also count answers by the rule that decided them
    (``serve.decided_by_metrics``)."""

    def __init__(self, decided_by: bool = False) -> None:
        self.multiprocess = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
        # In multiprocess mode the values go to files; the registry passed here is only for collection.
        self.registry = CollectorRegistry()
        reg = None if self.multiprocess else self.registry
        self.requests = Counter("ragbench_http_requests_total", "HTTP requests by route template, method and status",
                                ["route", "method", "status"], registry=reg)
        self.latency = Histogram("ragbench_http_request_duration_seconds", "HTTP request latency by route template",
                                 ["route", "method"], buckets=BUCKETS, registry=reg)
        self.refusals = Counter("ragbench_refusals_total", "Answers refused, by reason", ["reason"], registry=reg)
        # Every answer by Answer.decided_by, only when asked for (serve.decided_by_metrics): /metrics needs no
        # credentials, and this label tells a restricted-gap refusal from a weak retrieval, which the answer body
        # deliberately does not (docs/answers.md, "Restricted evidence").
        self.answers = (Counter("ragbench_answers_total", "Answers by the rule that decided them and whether refused",
                                ["decided_by", "refused"], registry=reg) if decided_by else None)
        self.rate_limited = Counter("ragbench_rate_limited_total", "Requests refused by the rate limiter (429)",
                                    registry=reg)
        if self.multiprocess:
            multiprocess.MultiProcessCollector(self.registry)

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)

    def answered(self, refused: bool, refusal_reason: str | None, decided_by: str) -> None:
        """Count one answer (given or refused) of any route."""
        if refused:
            self.refusals.labels(refusal_reason or "unknown").inc()
        if self.answers is not None:
            self.answers.labels(decided_by or "unknown", "true" if refused else "false").inc()

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
