"""Research jobs (``POST /v1/research`` → 202, ``GET /v1/research/{id}``), kept in the hub's store.

A job row is written before the work starts, so any worker process of the server can report on it; the research
itself runs on a small thread pool of the process that accepted it. Only the principal who submitted a job can see
it (anyone else gets 404, as for an unknown id).

**Leases.** The process holding a job (queued in its pool or running) refreshes the row's ``updated_at`` every
``lease / 4`` seconds from one heartbeat thread. A ``queued`` or ``running`` row not refreshed for
``serve.research_lease_seconds`` belongs to a process that died (killed, out of memory, host restart): whichever
process sees it — when its status is read, or at startup — marks it ``failed`` with an error saying so. It is not
re-queued: the dead run may already have written part of its findings to the hub and fetched pages from the web,
so whether to run it again is the submitter's call. A process stopped cleanly fails its queued jobs at once; a
running one keeps its lease while the process lives. Terminal states are final: a job failed by an expired lease
stays failed even if a stalled owner finishes later.
"""
from __future__ import annotations

import contextvars
import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from ..store import KnowledgeStore

log = logging.getLogger("ragbench.serve.jobs")

SCHEMA = "serve.research_jobs"
DDL = """
CREATE TABLE IF NOT EXISTS serve_research_jobs (
    job_id TEXT PRIMARY KEY, owner TEXT NOT NULL, question TEXT NOT NULL, max_passes INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, report TEXT, error TEXT, request_id TEXT);
"""
#: ``run(question, max_passes) -> coverage report as a dict``.
Runner = Callable[[str, int], dict[str, Any]]
OPEN = ("queued", "running")
_OPEN_SQL = "status IN ('queued', 'running')"


def _stamp(t: datetime) -> str:
    # One fixed format (UTC, milliseconds), so timestamps compare correctly as text in SQL.
    return t.astimezone(UTC).isoformat(timespec="milliseconds")


def _now() -> str:
    return _stamp(datetime.now(UTC))


def lease_error(lease_seconds: float) -> str:
    return (f"worker died: no heartbeat for {lease_seconds:g} s (serve.research_lease_seconds); "
            "re-submit the job.")


STOPPED_ERROR = "worker stopped (server shut down) before the job started; re-submit the job."


class ResearchJobs:
    def __init__(self, store: KnowledgeStore, runner: Runner, workers: int = 1,
                 on_done: Callable[[], None] | None = None, lease_seconds: float = 60.0) -> None:
        self.store = store
        self.runner = runner
        self.on_done = on_done
        self.lease_seconds = float(lease_seconds)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="research")
        self._held: set[str] = set()  # ids of jobs this process holds (queued in its pool or running)
        self._held_lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        store.ensure_schema(SCHEMA, DDL, 1)

    # ------------------------------------------------------------------------------------------ submit and run

    def submit(self, owner: str, question: str, max_passes: int, request_id: str | None) -> dict[str, Any]:
        job_id = uuid.uuid4().hex
        now = _now()
        with self._held_lock:
            self._held.add(job_id)  # before the row exists, so no other process can find it unheld and stale
        try:
            with self.store.transaction() as conn:
                conn.execute("INSERT INTO serve_research_jobs(job_id, owner, question, max_passes, status, "
                             "created_at, updated_at, request_id) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)",
                             (job_id, owner, question, max_passes, now, now, request_id))
        except BaseException:
            self._release(job_id)
            raise
        self._start_heartbeat()
        # The job's log lines keep the submitting request's id.
        ctx = contextvars.copy_context()
        try:
            future = self._pool.submit(ctx.run, self._run, job_id, question, max_passes)
            future.add_done_callback(lambda f: self._cancelled(job_id, f))
        except RuntimeError:  # the pool is shut down: this process is stopping
            self._finish(job_id, status="failed", error=STOPPED_ERROR)
        log.info("research job queued", extra={"job_id": job_id})
        return self.get(job_id, owner) or {}

    def _finish(self, job_id: str, **values: Any) -> bool:
        """Write ``values`` to an open job (terminal states are never overwritten) and release it; False when the
        row was no longer open (another process failed it after its lease expired)."""
        changed = self._update(job_id, **values)
        self._release(job_id)
        if not changed:
            log.warning("research job was closed by another process (lease expired); result dropped",
                        extra={"job_id": job_id})
        return changed

    def _release(self, job_id: str) -> None:
        with self._held_lock:
            self._held.discard(job_id)

    def _cancelled(self, job_id: str, future: Future[None]) -> None:
        """A job cancelled before it started (the pool was shut down) is failed at once, not left to the lease."""
        if future.cancelled():
            try:
                self._finish(job_id, status="failed", error=STOPPED_ERROR)
            except Exception:  # a store that cannot be written leaves the row to the lease
                log.exception("could not fail a cancelled research job")

    def _update(self, job_id: str, **values: Any) -> bool:
        cols = ", ".join(f"{k} = ?" for k in values)
        with self.store.transaction() as conn:
            cur = conn.execute(f"UPDATE serve_research_jobs SET {cols}, updated_at = ? WHERE job_id = ? AND "
                               f"{_OPEN_SQL}", (*values.values(), _now(), job_id))
            return cur.rowcount == 1

    def _run(self, job_id: str, question: str, max_passes: int) -> None:
        try:
            if not self._update(job_id, status="running"):
                self._release(job_id)  # failed by another process meanwhile (lease expired): not run
                return
            report = self.runner(question, max_passes)
            if self._finish(job_id, status="done", report=json.dumps(report, ensure_ascii=False)):
                log.info("research job done", extra={"job_id": job_id})
        except Exception as exc:  # noqa: BLE001 - a failed job is a status, not a crashed worker thread
            log.warning("research job failed", extra={"job_id": job_id, "error": type(exc).__name__})
            self._finish(job_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            if self.on_done is not None:
                try:
                    self.on_done()
                except Exception:
                    log.exception("refreshing the hub index after a job failed")

    # ------------------------------------------------------------------------------------------ leases

    @property
    def heartbeat_seconds(self) -> float:
        return self.lease_seconds / 4

    def _start_heartbeat(self) -> None:
        with self._held_lock:
            if self._beat is None and not self._stop.is_set():
                self._beat = threading.Thread(target=self._heartbeat_loop, name="research-heartbeat", daemon=True)
                self._beat.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            try:
                self.heartbeat()
            except Exception:  # one missed beat is not fatal: a lease spans four of them
                log.exception("research job heartbeat failed")

    def heartbeat(self) -> int:
        """Refresh ``updated_at`` of every open job this process holds; returns how many rows were refreshed."""
        with self._held_lock:
            held = sorted(self._held)
        if not held:
            return 0
        marks = ", ".join("?" * len(held))
        with self.store.transaction() as conn:
            cur = conn.execute(f"UPDATE serve_research_jobs SET updated_at = ? WHERE job_id IN ({marks}) AND "
                               f"{_OPEN_SQL}", (_now(), *held))
            return cur.rowcount

    def _cutoff(self) -> str:
        """Rows last refreshed before this time have an expired lease."""
        return _stamp(datetime.now(UTC) - timedelta(seconds=self.lease_seconds))

    def expire(self, job_id: str | None = None) -> int:
        """Fail open jobs (all, or ``job_id``) whose lease expired, except those this process holds (it is alive);
        returns how many were failed. One transaction: a row is either untouched or fully failed."""
        cutoff = self._cutoff()
        with self._held_lock:
            held = sorted(self._held)
        sql = f"UPDATE serve_research_jobs SET status = 'failed', error = ?, updated_at = ? WHERE {_OPEN_SQL} " \
              "AND updated_at < ?"
        params: list[Any] = [lease_error(self.lease_seconds), _now(), cutoff]
        if job_id is not None:
            sql += " AND job_id = ?"
            params.append(job_id)
        if held:
            sql += f" AND job_id NOT IN ({', '.join('?' * len(held))})"
            params.extend(held)
        with self.store.transaction() as conn:
            n = conn.execute(sql, params).rowcount
        if n:
            log.warning("research jobs failed: their worker stopped heartbeating",
                        extra={"jobs": n, "lease_seconds": self.lease_seconds})
        return n

    # ------------------------------------------------------------------------------------------ read

    def get(self, job_id: str, owner: str) -> dict[str, Any] | None:
        """The job as its owner sees it (None for an unknown id or someone else's job); an open job whose lease
        expired is failed first."""
        r = self._row(job_id, owner)
        if r is not None and r["status"] in OPEN and r["updated_at"] < self._cutoff() and self.expire(job_id):
            r = self._row(job_id, owner)
        if r is None:
            return None
        return {"job_id": r["job_id"], "status": r["status"], "question": r["question"],
                "max_passes": r["max_passes"], "created_at": r["created_at"], "updated_at": r["updated_at"],
                "report": json.loads(r["report"]) if r["report"] else None, "error": r["error"]}

    def _row(self, job_id: str, owner: str) -> dict[str, Any] | None:
        rows = self.store.query("SELECT * FROM serve_research_jobs WHERE job_id = ? AND owner = ?", (job_id, owner))
        return dict(rows[0]) if rows else None

    def shutdown(self) -> None:
        """Cancel the jobs still queued in this process's pool (their rows fail at once). A running job is not
        touched: the interpreter waits for its thread before exiting, and it keeps heartbeating until then (if the
        process is killed instead, its lease expires)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the heartbeat too (tests; a server only calls :meth:`shutdown`)."""
        self._stop.set()
        self.shutdown()
