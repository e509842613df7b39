"""Two uvicorn workers share what must be shared: chat sessions, feedback and research jobs live in SQLite,
``/metrics`` sums both workers (prometheus multiprocess mode), and a principal's rate-limit bucket is one for the
whole server (a SQLite file next to the store)."""
from __future__ import annotations

import time

import pytest

from .helpers import FAST, Server, bearer, token


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-workers")
    with Server(tmp, ["--retriever", "bm25", "--workers", "2", "--rate-limit", "0", *FAST]) as s:
        yield s


def worker_pids(server: Server) -> set[int]:
    return {rec["pid"] for rec in server.log_records() if rec.get("msg") == "serving"}


def test_two_workers_share_sessions_and_metrics(server):
    alice = bearer(token("alice-workers"))
    with server.client() as c:
        sid = c.post("/v1/chat/sessions", headers=alice).json()["session_id"]
        turns = []
        # Fresh connections, so the kernel spreads them over both workers.
        for _ in range(12):
            with server.client() as one:
                r = one.post(f"/v1/chat/sessions/{sid}/messages",
                             json={"question": "How many days of annual leave do staff get?"}, headers=alice)
                assert r.status_code == 200, r.text
                turns.append(r.json()["turn"])
        # A request is counted in the middleware's `finally`, after its response went out, so the last one may
        # still be uncounted when /metrics is read at once on a loaded machine: read until both agree or 10 s pass.
        deadline = time.monotonic() + 10.0
        while True:
            counted = [float(line.rsplit(" ", 1)[1]) for line in c.get("/metrics").text.splitlines()
                       if line.startswith("ragbench_http_requests_total{") and 'status="200"' in line
                       and 'route="/v1/chat/sessions/{session_id}/messages"' in line]
            if counted == [12.0] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert turns == list(range(1, 13))  # one history, whichever worker answered
    assert len(worker_pids(server)) == 2
    assert counted == [12.0]


LIMIT = 2  # per minute: one token back every 30 s, so the test's few requests can never see a refill


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-workers-limited")
    with Server(tmp, ["--retriever", "bm25", "--workers", "2", "--rate-limit", f"{LIMIT}/minute", *FAST]) as s:
        yield s


def _served_by(server: Server, sub: str) -> set[int]:
    return {rec["pid"] for rec in server.log_records() if rec.get("msg") == "request" and rec.get("principal") == sub}


def test_two_workers_share_one_bucket_per_principal(limited):
    who = bearer(token("bucket-sharer"))
    codes: list[int] = []
    # Fresh connections until both workers have answered this principal (the kernel decides which worker accepts a
    # connection, so that can take more than a few; 120 at most, well inside the 30 s a token takes to come back).
    while len(codes) < 120 and (len(codes) < 8 or len(_served_by(limited, "bucket-sharer")) < 2):
        for _ in range(8):
            with limited.client() as one:
                r = one.get("/v1/search", params={"q": "leave"}, headers=who)
            codes.append(r.status_code)
            if r.status_code == 429:
                assert 1 <= int(r.headers["retry-after"]) <= 30
        time.sleep(0.2)  # the access lines are written just after the responses
    with limited.client() as c:
        other = c.get("/v1/search", params={"q": "leave"}, headers=bearer(token("bucket-neighbour")))
        metrics = c.get("/metrics").text
    # Both workers answered this principal, so per-worker buckets would have let more than LIMIT through; one
    # shared bucket lets exactly LIMIT through.
    assert len(_served_by(limited, "bucket-sharer")) == 2
    assert codes == [200] * LIMIT + [429] * (len(codes) - LIMIT)
    assert other.status_code == 200
    limited_total = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                     if line.startswith("ragbench_rate_limited_total ")]
    assert limited_total == [float(len(codes) - LIMIT)]
