"""The store file itself: recognising a ragbench store from its header bytes, creating and marking the core tables.

A random file or another program's SQLite database is refused *before* SQLite touches it: the header is read as
plain bytes first, so the file stays byte-for-byte unchanged.
"""
from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import StoreError

#: ``PRAGMA application_id`` of a ragbench store: the ASCII bytes "RGBK".
APPLICATION_ID = 0x5247424B
#: Version of the core tables below (also ``PRAGMA user_version``).
SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BATCH = 500  # ids per IN (...) clause

_CORE_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS schemas (name TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, source TEXT NOT NULL, sha256 TEXT NOT NULL,
    version INTEGER NOT NULL, acl TEXT NOT NULL, metadata TEXT NOT NULL, text TEXT NOT NULL,
    chunker TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, text TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '', UNIQUE (doc_id, seq));
CREATE TABLE IF NOT EXISTS embedding_models (model_id TEXT PRIMARY KEY, dim INTEGER NOT NULL, sha256 TEXT);
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL REFERENCES embedding_models(model_id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    vector BLOB NOT NULL, PRIMARY KEY (model_id, chunk_id));
CREATE INDEX IF NOT EXISTS embeddings_by_chunk ON embeddings(chunk_id);
"""


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")



def check_header(path: Path) -> None:
    """Refuse a file that is not a ragbench store, reading it as bytes only (SQLite never opens it)."""
    size = path.stat().st_size
    if size == 0:
        return  # SQLite treats an empty file as an empty database; we initialise it.
    with path.open("rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise StoreError(f"{path} is not a SQLite database (its first bytes are {header[:16]!r}); the file was "
                         "left unchanged. Fix: point the store at a new path or at a ragbench store file.")
    app_id = int.from_bytes(header[68:72], "big")
    schema_cookie = int.from_bytes(header[40:44], "big")
    if app_id == APPLICATION_ID:
        user_version = int.from_bytes(header[60:64], "big")
        if user_version > SCHEMA_VERSION:
            raise StoreError(f"{path} is a ragbench store of schema version {user_version}, newer than this "
                             f"ragbench's {SCHEMA_VERSION}; the file was left unchanged. Fix: upgrade ragbench.")
        return
    if app_id == 0 and schema_cookie == 0 and not path.with_name(path.name + "-wal").exists():
        return  # a SQLite file that never had any table: safe to initialise
    raise StoreError(f"{path} is another program's SQLite database (application_id {app_id:#010x}, expected "
                     f"{APPLICATION_ID:#010x} for a ragbench store); the file was left unchanged. "
                     "Fix: choose a different store path.")


def in_batches(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(ids), _BATCH):
        yield ids[i:i + _BATCH]


def qmarks(n: int) -> str:
    return ",".join("?" * n)



def initialise(conn: sqlite3.Connection, path: Path, in_memory: bool) -> None:
    """Create the core tables of a new store (or check an existing one) and switch a file store to WAL."""
    conn.execute("PRAGMA foreign_keys = ON")

    def state() -> tuple[int, set[str]]:
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        return app, {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    app_id, tables = state()
    if app_id == 0:
        # New store: mark it before switching to WAL, so the marker lands in the main file's header. The two reads
        # of state() above run in separate read transactions, so a concurrent creator can commit between them
        # (application id 0 but tables present): decide only on a re-read under the write lock.
        conn.execute("BEGIN IMMEDIATE")
        try:
            app_id, tables = state()  # another process may have created it while we waited for the lock
            if app_id == 0 and not tables:
                _create_core(conn)
                app_id, tables = state()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if app_id != APPLICATION_ID:
        raise StoreError(f"{path} is another program's SQLite database (application_id {app_id:#010x}). "
                         "Fix: choose a different store path.")
    elif "meta" not in tables or "documents" not in tables:
        raise StoreError(f"{path} is marked as a ragbench store but lacks its core tables (found "
                         f"{sorted(tables)}). Fix: restore it from a backup or delete it and ingest again.")
    if not in_memory:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot switch {path} to WAL mode (got {mode}). Fix: use a local disk.")
        # WAL + NORMAL: commits survive a process crash; only a power loss may drop the last ones.
        conn.execute("PRAGMA synchronous = NORMAL")


def _create_core(conn: sqlite3.Connection) -> None:
    from .. import __version__ as version

    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    for stmt in _CORE_DDL.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    now = utc_now()
    conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
        ("application", "ragbench knowledge store"), ("schema_version", str(SCHEMA_VERSION)),
        ("created_at", now), ("created_by", f"ragbench {version}")])
    conn.execute("INSERT INTO schemas VALUES ('core', ?, ?)", (SCHEMA_VERSION, now))
