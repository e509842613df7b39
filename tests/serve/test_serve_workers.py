"""Two uvicorn workers share what must be shared: chat sessions, feedback and research jobs live in SQLite, and
``/metrics`` sums both workers (prometheus multiprocess mode); rate-limit buckets are per worker (documented)."""
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
