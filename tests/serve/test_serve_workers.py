"""Two uvicorn workers share what must be shared: chat sessions, feedback and research jobs live in SQLite,
``/metrics`` sums both workers (prometheus multiprocess mode), and a principal's rate-limit bucket is one for the
whole server (a SQLite file next to the store)."""
from __future__ import annotations

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
        metrics = c.get("/metrics").text
    assert turns == list(range(1, 13))  # one history, whichever worker answered
    assert len(worker_pids(server)) == 2
    counted = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("ragbench_http_requests_total{") and 'status="200"' in line
               and 'route="/v1/chat/sessions/{session_id}/messages"' in line]
    assert counted == [12.0]


LIMIT = 2  # per minute: one token back every 30 s, so the test's few requests can never see a refill


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-workers-limited")
    with Server(tmp, ["--retriever", "bm25", "--workers", "2", "--rate-limit", f"{LIMIT}/minute", *FAST]) as s:
        yield s


def test_two_workers_share_one_bucket_per_principal(limited):
    who = bearer(token("bucket-sharer"))
    codes = []
    for _ in range(16):
        with limited.client() as one:  # fresh connections, so both workers take some
            r = one.get("/v1/search", params={"q": "leave"}, headers=who)
            codes.append(r.status_code)
            if r.status_code == 429:
                assert 1 <= int(r.headers["retry-after"]) <= 30
    with limited.client() as c:
        other = c.get("/v1/search", params={"q": "leave"}, headers=bearer(token("bucket-neighbour")))
        metrics = c.get("/metrics").text
    # Per-worker buckets would let up to 2 × LIMIT through; one shared bucket lets exactly LIMIT through.
    assert codes == [200] * LIMIT + [429] * (16 - LIMIT)
    assert other.status_code == 200
    served = {rec["pid"] for rec in limited.log_records()
              if rec.get("msg") == "request" and rec.get("principal") == "bucket-sharer"}
    # Both workers answered this principal, so per-worker buckets would have let more than LIMIT through.
    assert len(served) == 2
    limited_total = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                     if line.startswith("ragbench_rate_limited_total ")]
    assert limited_total == [16.0 - LIMIT]
