"""Research jobs (``POST /v1/research`` → 202, ``GET /v1/research/{id}``), kept in the hub's store.

A job row is written before the work starts, so any worker process of the server can report on it; the research
itself runs on a small thread pool of the process that accepted it. Only the principal who submitted a job can see
it (anyone else gets 404, as for an unknown id). A worker that dies mid-job leaves the row ``running``: its
``updated_at`` then stops moving (docs/serve.md).
"""
from __future__ import annotations

import contextvars
import json
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ResearchJobs:
    def __init__(self, store: KnowledgeStore, runner: Runner, workers: int = 1,
                 on_done: Callable[[], None] | None = None) -> None:
        self.store = store
        self.runner = runner
        self.on_done = on_done
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="research")
        store.ensure_schema(SCHEMA, DDL, 1)

    def submit(self, owner: str, question: str, max_passes: int, request_id: str | None) -> dict[str, Any]:
        job_id = uuid.uuid4().hex
        now = _now()
        with self.store.transaction() as conn:
            conn.execute("INSERT INTO serve_research_jobs(job_id, owner, question, max_passes, status, created_at, "
                         "updated_at, request_id) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)",
                         (job_id, owner, question, max_passes, now, now, request_id))
        # The job's log lines keep the submitting request's id.
        ctx = contextvars.copy_context()
        self._pool.submit(ctx.run, self._run, job_id, question, max_passes)
        log.info("research job queued", extra={"job_id": job_id})
        return self.get(job_id, owner) or {}

    def _set(self, job_id: str, **values: Any) -> None:
        cols = ", ".join(f"{k} = ?" for k in values)
        with self.store.transaction() as conn:
            conn.execute(f"UPDATE serve_research_jobs SET {cols}, updated_at = ? WHERE job_id = ?",
                         (*values.values(), _now(), job_id))

    def _run(self, job_id: str, question: str, max_passes: int) -> None:
        try:
            self._set(job_id, status="running")
            report = self.runner(question, max_passes)
            self._set(job_id, status="done", report=json.dumps(report, ensure_ascii=False))
            log.info("research job done", extra={"job_id": job_id})
        except Exception as exc:  # noqa: BLE001 - a failed job is a status, not a crashed worker thread
            log.warning("research job failed", extra={"job_id": job_id, "error": type(exc).__name__})
            self._set(job_id, status="failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            if self.on_done is not None:
                try:
                    self.on_done()
                except Exception:
                    log.exception("refreshing the hub index after a job failed")

    def get(self, job_id: str, owner: str) -> dict[str, Any] | None:
        rows = self.store.query("SELECT * FROM serve_research_jobs WHERE job_id = ? AND owner = ?", (job_id, owner))
        if not rows:
            return None
        r = dict(rows[0])
        return {"job_id": r["job_id"], "status": r["status"], "question": r["question"],
                "max_passes": r["max_passes"], "created_at": r["created_at"], "updated_at": r["updated_at"],
                "report": json.loads(r["report"]) if r["report"] else None, "error": r["error"]}

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
