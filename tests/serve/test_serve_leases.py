"""Research-job leases: the process holding a job heartbeats its row, and a job whose process died (no heartbeat
for ``serve.research_lease_seconds``) is failed by whichever process reads it or starts next — in process with two
store connections standing for two workers, and with a real server killed by SIGKILL mid-job."""
from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .helpers import FAST, Server, bearer, token  # first: skips the module when the serve extra is missing

from ragbench.serve.jobs import STOPPED_ERROR, ResearchJobs, lease_error
from ragbench.store import KnowledgeStore

REPORT = {"passes_completed": 1}


class Blocking:
    """A research runner that blocks until released."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, question: str, max_passes: int) -> dict[str, Any]:
        self.started.set()
        assert self.release.wait(60)
        return REPORT


def _workers(path: Path, runner: Any, lease: float = 1.0, workers: int = 1) -> tuple[ResearchJobs, ResearchJobs]:
    """Two job managers on one store file through two connections: the owner and another "worker"."""
    owner = ResearchJobs(KnowledgeStore.open(path), runner, workers, lease_seconds=lease)
    other = ResearchJobs(KnowledgeStore.open(path), runner, workers, lease_seconds=lease)
    return owner, other


def _wait_status(jobs: ResearchJobs, job_id: str, owner: str, status: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job = jobs.get(job_id, owner)
        assert job is not None
        if job["status"] == status or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def _age(store_path: Path, job_id: str, seconds: float) -> None:
    """Move a row's last heartbeat ``seconds`` into the past (what a dead or stalled owner leaves behind)."""
    store = KnowledgeStore.open(store_path)
    stamp = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="milliseconds")
    with store.transaction() as conn:
        conn.execute("UPDATE serve_research_jobs SET updated_at = ? WHERE job_id = ?", (stamp, job_id))
    store.close()


def test_a_live_owner_keeps_its_job_through_many_leases(tmp_path):
    runner = Blocking()
    owner, other = _workers(tmp_path / "hub.db", runner, lease=2.0)
    job_id = owner.submit("ann", "q?", 1, None)["job_id"]
    assert runner.started.wait(30)
    first = _wait_status(other, job_id, "ann", "running")
    time.sleep(5.0)  # 2.5 leases: only the heartbeat keeps the row fresh
    assert other.expire() == 0
    later = other.get(job_id, "ann")
    assert later is not None and later["status"] == "running" and later["updated_at"] > first["updated_at"]
    runner.release.set()
    done = _wait_status(other, job_id, "ann", "done")
    assert (done["status"], done["report"], done["error"]) == ("done", REPORT, None)
    owner.close()
    other.close()


def test_a_job_whose_owner_stopped_heartbeating_fails_and_stays_failed(tmp_path):
    runner = Blocking()
    owner, other = _workers(tmp_path / "hub.db", runner)
    job_id = owner.submit("ann", "q?", 1, None)["job_id"]
    assert runner.started.wait(30)
    owner._stop.set()  # the owner stalls: no more heartbeats
    _age(tmp_path / "hub.db", job_id, 5)
    assert other.get(job_id, "bob") is None  # still someone else's job: 404, and nothing is failed for bob
    failed = other.get(job_id, "ann")
    assert failed is not None and (failed["status"], failed["error"]) == ("failed", lease_error(1.0))
    assert lease_error(1.0) == "worker died: no heartbeat for 1 s (serve.research_lease_seconds); re-submit the job."
    runner.release.set()  # the stalled owner finishes after all: a terminal state is never overwritten
    owner._pool.shutdown(wait=True)
    again = other.get(job_id, "ann")
    assert again is not None and (again["status"], again["report"], again["error"]) == ("failed", None,
                                                                                        lease_error(1.0))
    owner.close()
    other.close()


def test_startup_check_fails_only_stale_open_jobs(tmp_path):
    path = tmp_path / "hub.db"
    jobs = ResearchJobs(KnowledgeStore.open(path), Blocking(), lease_seconds=60)
    now = datetime.now(UTC)
    rows = {"stale-running": ("running", 120), "stale-queued": ("queued", 61), "fresh-running": ("running", 5),
            "old-done": ("done", 9999), "old-failed": ("failed", 9999)}
    with jobs.store.transaction() as conn:
        for job_id, (status, age) in rows.items():
            stamp = (now - timedelta(seconds=age)).isoformat(timespec="milliseconds")
            conn.execute("INSERT INTO serve_research_jobs(job_id, owner, question, max_passes, status, created_at, "
                         "updated_at) VALUES (?, 'ann', 'q?', 1, ?, ?, ?)", (job_id, status, stamp, stamp))
    assert jobs.expire() == 2
    got = {j: (jobs.get(j, "ann") or {}) for j in rows}
    assert {j: g["status"] for j, g in got.items()} == {
        "stale-running": "failed", "stale-queued": "failed", "fresh-running": "running", "old-done": "done",
        "old-failed": "failed"}
    assert got["stale-running"]["error"] == got["stale-queued"]["error"] == lease_error(60)
    assert got["old-failed"]["error"] is None
    jobs.close()


def test_shutdown_fails_queued_jobs_at_once_and_lets_the_running_one_finish(tmp_path):
    runner = Blocking()
    owner, other = _workers(tmp_path / "hub.db", runner, lease=60)
    running = owner.submit("ann", "q1?", 1, None)["job_id"]
    assert runner.started.wait(30)
    queued = owner.submit("ann", "q2?", 1, None)["job_id"]
    owner.shutdown()
    q = other.get(queued, "ann")
    assert q is not None and (q["status"], q["error"]) == ("failed", STOPPED_ERROR)
    runner.release.set()
    assert _wait_status(other, running, "ann", "done")["report"] == REPORT
    owner.close()
    other.close()


# ---------------------------------------------------------------------------------------------- real processes


class HangingSearch:
    """A loopback search endpoint that answers nothing until released: a research job that reaches it stays
    ``running`` for as long as the test wants."""

    def __init__(self) -> None:
        self.hits = 0
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits += 1
                outer.release.wait(300)
                body = b"<html><body><div class='no-results'>No results.</div></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/html/"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()


@pytest.fixture
def search():
    s = HangingSearch()
    yield s
    s.close()


LEASE = 3  # s; heartbeats every 0.75 s: a live owner must miss four in a row to lose a job


def _poll(c: Any, url: str, who: dict[str, str], until: Any, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        r = c.get(url, headers=who)
        assert r.status_code == 200, r.text
        state = r.json()
        if until(state) or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_a_killed_worker_s_job_is_failed_by_another_server(tmp_path, search):
    hub = tmp_path / "hub.db"
    # A job row left open by a worker that died before the servers started: the first server's startup fails it.
    ghost = ResearchJobs(KnowledgeStore.open(hub), Blocking(), lease_seconds=LEASE)
    stamp = (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="milliseconds")
    with ghost.store.transaction() as conn:
        conn.execute("INSERT INTO serve_research_jobs(job_id, owner, question, max_passes, status, created_at, "
                     "updated_at) VALUES ('ghost', 'gone', 'q?', 1, 'running', ?, ?)", (stamp, stamp))
    ghost.close()
    ghost.store.close()
    args = ["--retriever", "bm25", "--rate-limit", "0", "--hub", str(hub),
            "--set", f"serve.research_lease_seconds={LEASE}", "--set", f"dal.search_url={search.url}",
            "--set", "dal.request_delay=0", "--set", "dal.retries=0", "--set", "dal.timeout=300",
            "--set", "dal.response_deadline=300", *FAST]
    owner = bearer(token("lease-owner"))
    a = Server(tmp_path, args).__enter__()
    try:
        store = KnowledgeStore.open(hub)
        (row,) = store.query("SELECT status, error FROM serve_research_jobs WHERE job_id = 'ghost'")
        store.close()
        assert (row["status"], row["error"]) == ("failed", lease_error(LEASE))  # failed at startup, before any read
        with a.client() as c:
            r = c.post("/v1/research", json={"question": "How does GraphQL compare to REST for mobile apps?",
                                             "max_passes": 1}, headers=owner)
            assert r.status_code == 202, r.text
            url = r.headers["location"]
            deadline = time.monotonic() + 90
            while search.hits == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert search.hits > 0  # the job is inside its first search, which never answers
            assert c.get(url, headers=owner).json()["status"] == "running"
        with Server(tmp_path, args) as b, b.client() as c:
            # b's startup check and reads leave a's job alone while a heartbeats, however many leases pass.
            time.sleep(LEASE * 1.5)
            assert c.get(url, headers=owner).json()["status"] == "running"
            assert a.proc is not None
            a.proc.kill()  # SIGKILL: no shutdown code runs, the row stays 'running'
            a.proc.wait()
            state = _poll(c, url, owner, lambda s: s["status"] != "running")
        assert (state["status"], state["error"], state["report"]) == ("failed", lease_error(LEASE), None)
        assert state["error"] == "worker died: no heartbeat for 3 s (serve.research_lease_seconds); re-submit the job."
    finally:
        a.__exit__()
