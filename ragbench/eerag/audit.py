"""Two-phase audit in the knowledge store: candidates surfaced (before inference), entries elected (after).

Only ids and hashes are stored, never chunk text, so the audit table cannot leak content.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Sequence

AUDIT_DDL = """
CREATE TABLE IF NOT EXISTS eerag_audit (
    request_id TEXT PRIMARY KEY,
    surfaced TEXT NOT NULL,          -- JSON [[number, chunk_id, doc_id], ...]
    elected TEXT,                    -- JSON [[number, chunk_id, tag], ...], NULL until phase 2
    rejected TEXT,                   -- JSON [ids requested but not shown / over the cap]
    surfaced_at TEXT NOT NULL,
    elected_at TEXT
);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class AuditLog:
    """Writes and reads the ``eerag_audit`` table of a :class:`ragbench.store.KnowledgeStore`."""

    def __init__(self, store: Any) -> None:
        self.store = store
        store.ensure_schema("eerag_audit", AUDIT_DDL, version=1)

    def surfaced(self, request_id: str, candidates: Sequence[tuple[int, str, str]]) -> None:
        with self.store.transaction() as con:
            con.execute("INSERT OR REPLACE INTO eerag_audit(request_id, surfaced, surfaced_at) VALUES (?, ?, ?)",
                        (request_id, json.dumps([list(c) for c in candidates]), _now()))

    def elected(self, request_id: str, entries: Sequence[tuple[int, str, str]], rejected: Sequence[int]) -> None:
        with self.store.transaction() as con:
            con.execute("UPDATE eerag_audit SET elected = ?, rejected = ?, elected_at = ? WHERE request_id = ?",
                        (json.dumps([list(e) for e in entries]), json.dumps(list(rejected)[:1000]), _now(),
                         request_id))

    def get(self, request_id: str) -> dict[str, Any] | None:
        rows = self.store.query("SELECT * FROM eerag_audit WHERE request_id = ?", (request_id,))
        if not rows:
            return None
        r = dict(rows[0])
        for k in ("surfaced", "elected", "rejected"):
            r[k] = json.loads(r[k]) if r[k] is not None else None
        return r
