"""The SQLite knowledge store: documents (versions, ACLs, metadata), chunks (spans, summaries) and embeddings.

One file holds everything; other subsystems add their own tables through :meth:`KnowledgeStore.ensure_schema`
and write through :meth:`KnowledgeStore.transaction`. The file is marked as ours (``PRAGMA application_id`` and
``user_version``) so that a random file or another program's SQLite database is refused *before* SQLite touches
it: the header is read as plain bytes first, and the file stays byte-for-byte unchanged.

Ingest is idempotent by content hash (SHA-256 of the whitespace-normalised text). Each document is written in
its own transaction, so an interrupted ingest keeps every finished document whole and a rerun completes it.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .errors import DataError, StoreError
from .schema import Acl, Chunk, Document
from .text import content_hash, read_text_file

if TYPE_CHECKING:
    from .retrieval.base import Chunker, Embedder

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "IngestReport", "KnowledgeStore", "StoredDocument", "read_text_file"]

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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class StoredDocument:
    """A document as stored: ``sha256`` is the content hash, ``version`` counts content changes from 1."""

    doc_id: str
    title: str
    source: str
    sha256: str
    version: int
    acl: Acl
    metadata: dict
    text: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class IngestReport:
    """Counts of one ingest call; ``errors`` lists skipped documents (``on_error="skip"``)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    errors: list[str] = field(default_factory=list)


def _check_header(path: Path) -> None:
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


def _in_batches(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(ids), _BATCH):
        yield ids[i:i + _BATCH]


def _qmarks(n: int) -> str:
    return ",".join("?" * n)


class KnowledgeStore:
    """Documents, chunks and embeddings in one SQLite file (WAL mode). Thread-safe; one connection per store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._depth = 0  # nesting depth of transaction()

    # ------------------------------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, path: str | Path) -> "KnowledgeStore":
        """Open (or create) the store at ``path``; ``":memory:"`` gives a private in-memory store."""
        store = cls(path)
        store._connection()
        return store

    @property
    def in_memory(self) -> bool:
        return str(self.path) == ":memory:"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    def _connect(self) -> sqlite3.Connection:
        if not self.in_memory:
            if self.path.is_dir():
                raise StoreError(f"store path {self.path} is a directory. Fix: give a file path, e.g. "
                                 f"{self.path / 'ragbench.db'}.")
            if self.path.exists():
                _check_header(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}. Fix: check the path and its permissions.") from exc
        conn.row_factory = sqlite3.Row
        try:
            self._initialise(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"store {self.path} is damaged or unreadable ({exc}). Fix: restore it from a backup "
                             "or delete it and ingest again.") from exc
        except StoreError:
            conn.close()
            raise
        return conn

    def _initialise(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA foreign_keys = ON")

        def state() -> tuple[int, set[str]]:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            return app, {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

        app_id, tables = state()
        if app_id == 0 and not tables:
            # New store: mark it before switching to WAL, so the marker lands in the main file's header.
            conn.execute("BEGIN IMMEDIATE")
            try:
                app_id, tables = state()  # another process may have created it while we waited for the lock
                if app_id == 0 and not tables:
                    self._create_core(conn)
                    app_id, tables = state()
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if app_id != APPLICATION_ID:
            raise StoreError(f"{self.path} is another program's SQLite database (application_id {app_id:#010x}). "
                             "Fix: choose a different store path.")
        elif "meta" not in tables or "documents" not in tables:
            raise StoreError(f"{self.path} is marked as a ragbench store but lacks its core tables (found "
                             f"{sorted(tables)}). Fix: restore it from a backup or delete it and ingest again.")
        if not self.in_memory:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"cannot switch {self.path} to WAL mode (got {mode}). Fix: use a local disk.")
            # WAL + NORMAL: commits survive a process crash; only a power loss may drop the last ones.
            conn.execute("PRAGMA synchronous = NORMAL")

    @staticmethod
    def _create_core(conn: sqlite3.Connection) -> None:
        from . import __version__ as version  # noqa: PLC0415 - the package version, no heavy import

        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        for stmt in _CORE_DDL.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        now = _now()
        conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
            ("application", "ragbench knowledge store"), ("schema_version", str(SCHEMA_VERSION)),
            ("created_at", now), ("created_by", f"ragbench {version}")])
        conn.execute("INSERT INTO schemas VALUES ('core', ?, ?)", (SCHEMA_VERSION, now))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "KnowledgeStore":
        self._connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KnowledgeStore({str(self.path)!r})"

    # ------------------------------------------------------------------------------------------ extension point

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error); nested calls use savepoints."""
        conn = self._connection()
        with self._lock:
            depth = self._depth
            try:
                conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot start a write transaction on {self.path}: {exc}. Fix: close other "
                                 "writers or retry.") from exc
            self._depth += 1
            try:
                yield conn
            except BaseException as exc:
                self._depth -= 1
                if depth == 0:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                else:
                    conn.execute(f"ROLLBACK TO sp{depth}")
                    conn.execute(f"RELEASE sp{depth}")
                if type(exc) is sqlite3.DatabaseError:  # corruption, not a caller's constraint error
                    raise StoreError(f"store {self.path} could not be written: {exc}.") from exc
                raise
            else:
                self._depth -= 1
                try:
                    conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
                except sqlite3.Error as exc:
                    if depth == 0 and conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise StoreError(f"store {self.path}: commit failed ({exc}); the transaction was rolled "
                                     "back. Fix: check free disk space and permissions, then retry.") from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run a read query and return all rows (``sqlite3.Row``: index by name or position)."""
        conn = self._connection()
        with self._lock:
            try:
                return conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                if type(exc) is sqlite3.DatabaseError:
                    raise StoreError(f"store {self.path} could not be read: {exc}. Fix: restore it from a "
                                     "backup or delete it and ingest again.") from exc
                raise

    def ensure_schema(self, name: str, ddl: str, version: int = 1) -> None:
        """Create a subsystem's tables once: runs ``ddl`` (idempotent statements) unless ``name`` is already
        recorded at ``version`` or later, then records it — all in one transaction."""
        conn = self._connection()
        with self._lock:
            if self._depth:
                raise StoreError(f"ensure_schema({name!r}) cannot run inside a transaction. Fix: call it first.")
            row = conn.execute("SELECT version FROM schemas WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] >= version:
                return
            try:
                # executescript() cannot take parameters, so the record is written after it, before COMMIT.
                conn.executescript("BEGIN IMMEDIATE;\n" + ddl)
                conn.execute("INSERT OR REPLACE INTO schemas(name, version, applied_at) VALUES (?, ?, ?)",
                             (name, version, _now()))
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"schema {name!r} (version {version}) could not be created: {exc}. "
                                 "Fix: correct the DDL; nothing was written.") from exc

    def schema_version(self, name: str) -> int | None:
        """The recorded version of a subsystem's schema (``core`` is this module's), or None."""
        rows = self.query("SELECT version FROM schemas WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def get_meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        if not isinstance(value, str):
            raise DataError(f"meta value for {key!r} must be str, found {type(value).__name__}. Fix: json.dumps it.")
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # ------------------------------------------------------------------------------------------ reads

    @staticmethod
    def _document(row: sqlite3.Row) -> StoredDocument:
        return StoredDocument(row["doc_id"], row["title"], row["source"], row["sha256"], row["version"],
                              Acl.from_json(json.loads(row["acl"])), json.loads(row["metadata"]), row["text"],
                              row["created_at"], row["updated_at"])

    @staticmethod
    def _chunk(row: sqlite3.Row) -> Chunk:
        return Chunk(row["chunk_id"], row["doc_id"], row["seq"], row["start"], row["end"], row["text"],
                     row["summary"])

    def get_document(self, doc_id: str) -> StoredDocument | None:
        rows = self.query("SELECT * FROM documents WHERE doc_id = ?", (doc_id,))
        return self._document(rows[0]) if rows else None

    def documents(self) -> list[StoredDocument]:
        """Every document, in ingest order."""
        return [self._document(r) for r in self.query("SELECT * FROM documents ORDER BY rowid")]

    def doc_ids(self) -> list[str]:
        """Every document id, in ingest order."""
        return [r[0] for r in self.query("SELECT doc_id FROM documents ORDER BY rowid")]

    def __len__(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM documents")[0][0])

    def __contains__(self, doc_id: object) -> bool:
        return bool(self.query("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)))

    def chunks(self, doc_ids: Iterable[str] | None = None) -> list[Chunk]:
        """Chunks ordered by document (ingest order) then ``seq``; unknown doc ids are ignored."""
        sql = ("SELECT c.*, d.rowid AS doc_row FROM chunks c JOIN documents d ON d.doc_id = c.doc_id")
        if doc_ids is None:
            return [self._chunk(r) for r in self.query(sql + " ORDER BY d.rowid, c.seq")]
        ids = list(dict.fromkeys(doc_ids))
        rows: list[sqlite3.Row] = []
        for batch in _in_batches(ids):
            rows += self.query(sql + f" WHERE c.doc_id IN ({_qmarks(len(batch))})", batch)
        rows.sort(key=lambda r: (r["doc_row"], r["seq"]))
        return [self._chunk(r) for r in rows]

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        rows = self.query("SELECT * FROM chunks WHERE chunk_id = ?", (chunk_id,))
        return self._chunk(rows[0]) if rows else None

    def chunk_count(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM chunks")[0][0])

    def acls(self) -> dict[str, Acl]:
        """``doc_id → Acl`` for every document."""
        return {r[0]: Acl.from_json(json.loads(r[1])) for r in self.query("SELECT doc_id, acl FROM documents")}

    def acl_of(self, doc_id: str) -> Acl | None:
        """The document's ACL read from the database now (so a revoked permission takes effect at once)."""
        rows = self.query("SELECT acl FROM documents WHERE doc_id = ?", (doc_id,))
        return Acl.from_json(json.loads(rows[0][0])) if rows else None

    def titles(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.query("SELECT doc_id, title FROM documents")}

    # ------------------------------------------------------------------------------------------ writes

    def _existing_chunk_ids(self, conn: sqlite3.Connection, chunk_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for batch in _in_batches(list(chunk_ids)):
            found.update(r[0] for r in conn.execute(
                f"SELECT chunk_id FROM chunks WHERE chunk_id IN ({_qmarks(len(batch))})", tuple(batch)))
        return found

    def set_summaries(self, summaries: Mapping[str, str]) -> None:
        """Replace chunk summaries; every id must exist (else DataError and nothing is written)."""
        for cid, text in summaries.items():
            if not isinstance(text, str):
                raise DataError(f"summary of chunk {cid!r} must be str, found {type(text).__name__}.")
        with self.transaction() as conn:
            missing = sorted(set(summaries) - self._existing_chunk_ids(conn, list(summaries)))
            if missing:
                raise DataError(f"set_summaries: unknown chunk id(s) {missing[:5]} ({len(missing)} in all); nothing "
                                "was written. Fix: use ids from store.chunks().")
            conn.executemany("UPDATE chunks SET summary = ? WHERE chunk_id = ?",
                             [(text, cid) for cid, text in summaries.items()])

    @staticmethod
    def _check_vectors(model_id: str, chunk_ids: Sequence[str], vectors: np.ndarray) -> np.ndarray:
        if not isinstance(model_id, str) or not model_id.strip():
            raise DataError(f"embedding model_id must be a non-empty string, found {model_id!r}.")
        arr = np.asarray(vectors)
        if arr.ndim != 2 or arr.shape[0] != len(chunk_ids):
            raise DataError(f"embeddings for {len(chunk_ids)} chunk ids must have shape ({len(chunk_ids)}, dim), "
                            f"found {arr.shape}. Fix: pass one row per chunk id.")
        if arr.shape[1] == 0 and len(chunk_ids):
            raise DataError("embeddings have 0 dimensions. Fix: pass real vectors.")
        if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
            raise DataError(f"embeddings for model {model_id!r} contain non-numeric, NaN or infinite values. "
                            "Fix: check the embedder's output.")
        if len(set(chunk_ids)) != len(chunk_ids):
            raise DataError(f"embeddings for model {model_id!r}: duplicate chunk ids. Fix: de-duplicate them.")
        return arr.astype("<f4", copy=False)

    def _write_vectors(self, conn: sqlite3.Connection, model_id: str, chunk_ids: Sequence[str], arr: np.ndarray,
                       sha256: str | None = None) -> None:
        row = conn.execute("SELECT dim, sha256 FROM embedding_models WHERE model_id = ?", (model_id,)).fetchone()
        if row is None:
            conn.execute("INSERT INTO embedding_models(model_id, dim, sha256) VALUES (?, ?, ?)",
                         (model_id, int(arr.shape[1]), sha256))
        else:
            if row["dim"] != arr.shape[1]:
                raise DataError(f"model {model_id!r} has {row['dim']}-dimensional embeddings in this store, given "
                                f"{arr.shape[1]}. Fix: use another model_id or delete_embeddings({model_id!r}).")
            if sha256 and row["sha256"] and row["sha256"] != sha256:
                raise StoreError(f"model {model_id!r} in this store was embedded with weights {row['sha256'][:12]}…, "
                                 f"the embedder has {sha256[:12]}…; mixing them would corrupt rankings. "
                                 f"Fix: store.delete_embeddings({model_id!r}) then ingest again.")
            if sha256 and not row["sha256"]:
                conn.execute("UPDATE embedding_models SET sha256 = ? WHERE model_id = ?", (sha256, model_id))
        conn.executemany("INSERT OR REPLACE INTO embeddings(model_id, chunk_id, vector) VALUES (?, ?, ?)",
                         [(model_id, cid, arr[i].tobytes()) for i, cid in enumerate(chunk_ids)])

    def put_embeddings(self, model_id: str, chunk_ids: Sequence[str], vectors: np.ndarray,
                       sha256: str | None = None) -> None:
        """Store float32 vectors for existing chunks (replacing older ones) in one transaction; ``sha256`` (of
        the model weights) is recorded for the model, and a different recorded one is refused (StoreError)."""
        chunk_ids = list(chunk_ids)
        arr = self._check_vectors(model_id, chunk_ids, vectors)
        with self.transaction() as conn:
            missing = sorted(set(chunk_ids) - self._existing_chunk_ids(conn, chunk_ids))
            if missing:
                raise DataError(f"put_embeddings: unknown chunk id(s) {missing[:5]} ({len(missing)} in all); nothing "
                                "was written. Fix: use ids from store.chunks().")
            if chunk_ids:
                self._write_vectors(conn, model_id, chunk_ids, arr, sha256)

    def embeddings(self, model_id: str, chunk_ids: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
        """``(ids, float32 (n, dim))`` for ``model_id``; in ``chunk_ids`` order (missing ids left out), else in
        document-then-seq order. No vectors → ``([], shape (0, dim))`` (dim 0 for an unknown model)."""
        rows = self.query("SELECT dim FROM embedding_models WHERE model_id = ?", (model_id,))
        dim = rows[0][0] if rows else 0
        if chunk_ids is None:
            found = self.query(
                "SELECT e.chunk_id, e.vector FROM embeddings e JOIN chunks c ON c.chunk_id = e.chunk_id "
                "JOIN documents d ON d.doc_id = c.doc_id WHERE e.model_id = ? ORDER BY d.rowid, c.seq", (model_id,))
            pairs = [(r[0], r[1]) for r in found]
        else:
            wanted = list(chunk_ids)
            got: dict[str, bytes] = {}
            for batch in _in_batches(list(dict.fromkeys(wanted))):
                got.update((r[0], r[1]) for r in self.query(
                    f"SELECT chunk_id, vector FROM embeddings WHERE model_id = ? AND chunk_id IN "
                    f"({_qmarks(len(batch))})", (model_id, *batch)))
            pairs = [(cid, got[cid]) for cid in wanted if cid in got]
        if not pairs:
            return [], np.zeros((0, dim), dtype=np.float32)
        matrix = np.frombuffer(b"".join(p[1] for p in pairs), dtype="<f4").reshape(len(pairs), dim)
        return [p[0] for p in pairs], matrix.astype(np.float32)

    def embedding_models(self) -> dict[str, dict[str, Any]]:
        """``model_id → {"dim", "sha256", "count"}`` for every model with stored vectors."""
        rows = self.query("SELECT m.model_id, m.dim, m.sha256, COUNT(e.chunk_id) AS n FROM embedding_models m "
                          "LEFT JOIN embeddings e ON e.model_id = m.model_id GROUP BY m.model_id")
        return {r[0]: {"dim": r[1], "sha256": r[2], "count": r[3]} for r in rows}

    def delete_embeddings(self, model_id: str) -> int:
        """Drop every vector of ``model_id``; returns how many were dropped."""
        with self.transaction() as conn:
            n = conn.execute("DELETE FROM embeddings WHERE model_id = ?", (model_id,)).rowcount
            conn.execute("DELETE FROM embedding_models WHERE model_id = ?", (model_id,))
        return int(n)

    def delete_document(self, doc_id: str) -> bool:
        """Delete a document with its chunks, summaries and embeddings; False when it did not exist."""
        with self.transaction() as conn:
            return conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,)).rowcount > 0

    # ------------------------------------------------------------------------------------------ ingest

    def ingest(self, documents: Iterable[Document], chunker: "Chunker", embedder: "Embedder | None" = None,
               summarizer: Callable[[Chunk], str] | None = None, show_progress: bool = False,
               on_error: str = "raise", batch_chunks: int = 64, prune: bool = False) -> IngestReport:
        """Add new documents, re-version changed ones, skip unchanged ones (same content hash and chunker).

        Every document is validated first (duplicate ids, blank or non-str text, non-JSON metadata → DataError
        before anything is written; with ``on_error="skip"`` blank documents are skipped and listed in
        ``errors`` instead). Documents are then chunked, summarised and embedded in groups of about
        ``batch_chunks`` chunks, and each document is written in its own transaction. A changed document gets
        ``version + 1``; its chunks replace the old ones (a chunk whose id survives keeps its embeddings and
        summary). Unchanged documents only get missing summaries / embeddings filled in. With ``prune=True``
        stored documents absent from ``documents`` are deleted afterwards (counted in ``deleted``), so the
        store mirrors a source folder.
        """
        from tqdm.auto import tqdm

        if isinstance(batch_chunks, bool) or not isinstance(batch_chunks, int) or batch_chunks < 1:
            raise DataError(f"batch_chunks must be a positive integer, found {batch_chunks!r}.")
        docs, errors, seen = _validate_documents(documents, on_error)
        chunker_sig = repr(chunker)
        counts = {"added": 0, "updated": 0, "unchanged": 0, "chunks": 0}
        bar = tqdm(total=len(docs), disable=not show_progress, desc="ingest", unit="doc")
        group: list[_Plan] = []
        pending = 0
        for doc in docs:
            plan = self._plan(doc, chunker, chunker_sig, embedder, summarizer, on_error, errors)
            if plan is None:
                bar.update(1)
                continue
            group.append(plan)
            # Without an embedder, group by chunk count too, so that writes (and kept progress) start early.
            pending += len(plan.to_embed) if embedder is not None else max(1, len(plan.chunks))
            if pending >= batch_chunks:
                self._finish_group(group, embedder, summarizer, counts)
                bar.update(len(group))
                group, pending = [], 0
        if group:
            self._finish_group(group, embedder, summarizer, counts)
            bar.update(len(group))
        bar.close()
        deleted = 0
        if prune:
            gone = [d for d in self.doc_ids() if d not in seen]
            with self.transaction() as conn:
                for batch in _in_batches(gone):
                    deleted += conn.execute(f"DELETE FROM documents WHERE doc_id IN ({_qmarks(len(batch))})",
                                            tuple(batch)).rowcount
        return IngestReport(counts["added"], counts["updated"], counts["unchanged"], deleted, counts["chunks"],
                            errors)

    def _plan(self, doc: Document, chunker: "Chunker", chunker_sig: str, embedder: "Embedder | None",
              summarizer: Callable[[Chunk], str] | None, on_error: str, errors: list[str]) -> "_Plan | None":
        sha = content_hash(doc.text)
        rows = self.query("SELECT sha256, version, chunker, title, source, acl, metadata FROM documents "
                          "WHERE doc_id = ?", (doc.doc_id,))
        old = rows[0] if rows else None
        acl_json = json.dumps(doc.acl.to_json(), sort_keys=True)
        meta_json = json.dumps(dict(doc.metadata), sort_keys=True, ensure_ascii=False)
        fields_same = old is not None and (old["title"], old["source"], old["acl"], old["metadata"]) == (
            doc.title, doc.source, acl_json, meta_json)
        if old is not None and old["sha256"] == sha and old["chunker"] == chunker_sig:
            kind = "unchanged" if fields_same else "fields"
            # Stored chunks matter only when summaries or embeddings may be missing.
            chunks = self.chunks([doc.doc_id]) if embedder is not None or summarizer is not None else []
        else:
            kind = "add" if old is None else ("update" if old["sha256"] != sha else "rechunk")
            try:
                chunks = chunker.chunk(doc)
            except DataError as exc:
                if on_error != "skip":
                    raise
                errors.append(str(exc))
                return None
            _check_chunks(doc, chunks)
        plan = _Plan(doc, kind, sha, (old["version"] if old is not None else 0), acl_json, meta_json, chunks,
                     chunker_sig)
        have_summary: dict[str, str] = {}
        have_vector: set[str] = set()
        if old is not None:
            ids = [c.chunk_id for c in chunks]
            for batch in _in_batches(ids):
                have_summary.update((r[0], r[1]) for r in self.query(
                    f"SELECT chunk_id, summary FROM chunks WHERE chunk_id IN ({_qmarks(len(batch))})", batch))
                if embedder is not None:
                    have_vector.update(r[0] for r in self.query(
                        f"SELECT chunk_id FROM embeddings WHERE model_id = ? AND chunk_id IN "
                        f"({_qmarks(len(batch))})", (embedder.model_id, *batch)))
        plan.summaries = {cid: s for cid, s in have_summary.items() if s}
        if embedder is not None:
            plan.to_embed = [c for c in chunks if c.chunk_id not in have_vector]
        if summarizer is not None:
            plan.to_summarize = [c for c in chunks if c.chunk_id not in plan.summaries]
        return plan

    def _finish_group(self, group: list["_Plan"], embedder: "Embedder | None",
                      summarizer: Callable[[Chunk], str] | None, counts: dict[str, int]) -> None:
        """Embed and summarise a group's chunks (no write yet), then write each document in its own transaction."""
        vectors: dict[str, np.ndarray] = {}
        if embedder is not None:
            todo = [c for p in group for c in p.to_embed]
            if todo:
                arr = embedder.embed([c.text for c in todo])
                arr = self._check_vectors(embedder.model_id, [c.chunk_id for c in todo], arr)
                vectors = {c.chunk_id: arr[i] for i, c in enumerate(todo)}
        sha = embedder.sha256 if embedder is not None and vectors else None
        for plan in group:
            if summarizer is not None:
                for c in plan.to_summarize:
                    summary = summarizer(c)
                    if not isinstance(summary, str):
                        raise DataError(f"summarizer returned {type(summary).__name__} for chunk {c.chunk_id!r}; "
                                        "expected str.")
                    plan.summaries[c.chunk_id] = summary
            self._write_plan(plan, embedder, vectors, sha)
            counts[{"add": "added", "update": "updated", "rechunk": "updated", "fields": "updated"}.get(
                plan.kind, "unchanged")] += 1
            if plan.kind != "unchanged" and plan.kind != "fields":
                counts["chunks"] += len(plan.chunks)

    def _write_plan(self, plan: "_Plan", embedder: "Embedder | None", vectors: Mapping[str, np.ndarray],
                    sha: str | None) -> None:
        doc, now = plan.doc, _now()
        if plan.kind == "unchanged" and not plan.to_embed and not plan.to_summarize:
            return  # nothing to write: an unchanged document is not touched
        with self.transaction() as conn:
            if plan.kind == "add":
                conn.execute("INSERT INTO documents(doc_id, title, source, sha256, version, acl, metadata, text, "
                             "chunker, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)",
                             (doc.doc_id, doc.title, doc.source, plan.sha, plan.acl_json, plan.meta_json, doc.text,
                              plan.chunker_sig, now, now))
            elif plan.kind != "unchanged":
                version = plan.old_version + (1 if plan.kind == "update" else 0)
                conn.execute("UPDATE documents SET title = ?, source = ?, sha256 = ?, version = ?, acl = ?, "
                             "metadata = ?, text = CASE WHEN ? THEN ? ELSE text END, chunker = ?, updated_at = ? "
                             "WHERE doc_id = ?",
                             (doc.title, doc.source, plan.sha, version, plan.acl_json, plan.meta_json,
                              plan.kind in ("update", "rechunk"), doc.text, plan.chunker_sig, now, doc.doc_id))
            if plan.kind in ("update", "rechunk"):
                keep = [c.chunk_id for c in plan.chunks]
                conn.execute("CREATE TEMP TABLE IF NOT EXISTS _keep (chunk_id TEXT PRIMARY KEY)")
                conn.execute("DELETE FROM _keep")
                conn.executemany("INSERT OR IGNORE INTO _keep VALUES (?)", [(k,) for k in keep])
                conn.execute("DELETE FROM chunks WHERE doc_id = ? AND chunk_id NOT IN (SELECT chunk_id FROM _keep)",
                             (doc.doc_id,))
                conn.execute("DELETE FROM _keep")
            if plan.kind in ("add", "update", "rechunk"):
                # Surviving ids (same seq and text) keep their row, summary and embeddings; spans may move.
                conn.executemany(
                    'INSERT INTO chunks(chunk_id, doc_id, seq, start, "end", text, summary) VALUES (?, ?, ?, ?, ?, ?, ?) '
                    'ON CONFLICT(chunk_id) DO UPDATE SET start = excluded.start, "end" = excluded."end"',
                    [(c.chunk_id, c.doc_id, c.seq, c.start, c.end, c.text, plan.summaries.get(c.chunk_id, c.summary))
                     for c in plan.chunks])
            if plan.to_summarize:
                conn.executemany("UPDATE chunks SET summary = ? WHERE chunk_id = ?",
                                 [(plan.summaries[c.chunk_id], c.chunk_id) for c in plan.to_summarize])
            if embedder is not None and plan.to_embed:
                ids = [c.chunk_id for c in plan.to_embed]
                self._write_vectors(conn, embedder.model_id, ids, np.stack([vectors[i] for i in ids]), sha)


@dataclass
class _Plan:
    """What ingest will write for one document (``kind``: add | update | rechunk | fields | unchanged)."""

    doc: Document
    kind: str
    sha: str
    old_version: int
    acl_json: str
    meta_json: str
    chunks: list[Chunk]
    chunker_sig: str = ""
    summaries: dict[str, str] = field(default_factory=dict)
    to_embed: list[Chunk] = field(default_factory=list)
    to_summarize: list[Chunk] = field(default_factory=list)


def _validate_documents(documents: Iterable[Document], on_error: str
                        ) -> tuple[list[Document], list[str], set[str]]:
    """Check the whole input before any write: types, ids, duplicates, text, JSON metadata."""
    if on_error not in ("raise", "skip"):
        raise DataError(f"on_error must be 'raise' or 'skip', found {on_error!r}.")
    docs: list[Document] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise DataError(f"item {i} of the ingest input is a {type(doc).__name__}, expected a Document; "
                            "nothing was written. Fix: wrap it in ragbench.Document(doc_id, text, …).")
        if not isinstance(doc.doc_id, str) or not doc.doc_id.strip():
            raise DataError(f"item {i} has an empty or non-string doc_id {doc.doc_id!r}; nothing was written. "
                            "Fix: give every document a unique id.")
        if doc.doc_id in seen:
            raise DataError(f"duplicate doc id {doc.doc_id!r} in one ingest call; nothing was written. "
                            "Fix: de-duplicate the input (ids must be unique).")
        seen.add(doc.doc_id)
        if not isinstance(doc.text, str):
            raise DataError(f"document {doc.doc_id!r}: text must be str, found {type(doc.text).__name__}; nothing "
                            "was written. Fix: decode it first (ragbench.store.read_text_file).")
        for name in ("title", "source"):
            if not isinstance(getattr(doc, name), str):
                raise DataError(f"document {doc.doc_id!r}: {name} must be str; nothing was written.")
        if not isinstance(doc.acl, Acl):
            raise DataError(f"document {doc.doc_id!r}: acl must be an Acl; nothing was written. Fix: Acl.make(…).")
        try:
            json.dumps(dict(doc.metadata), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DataError(f"document {doc.doc_id!r}: metadata is not JSON-serialisable ({exc}); nothing was "
                            "written. Fix: keep metadata to str/number/bool/list/dict values.") from None
        if not doc.text.strip():
            msg = f"document {doc.doc_id!r} is empty or whitespace-only"
            if on_error == "skip":
                errors.append(msg + "; skipped")
                continue
            raise DataError(msg + "; nothing was written. Fix: drop it, or pass on_error='skip'.")
        docs.append(doc)
    return docs, errors, seen


def _check_chunks(doc: Document, chunks: Sequence[Chunk]) -> None:
    """A chunker's output must point into the document with unique ids and seqs 0..n-1."""
    if not chunks:
        raise DataError(f"the chunker returned no chunks for document {doc.doc_id!r}. Fix: check the chunker.")
    ids: set[str] = set()
    for i, c in enumerate(chunks):
        if c.doc_id != doc.doc_id or c.seq != i or c.chunk_id in ids or not 0 <= c.start <= c.end <= len(doc.text):
            raise DataError(f"the chunker returned an invalid chunk {c!r} for document {doc.doc_id!r} (expected "
                            f"doc_id {doc.doc_id!r}, seq {i}, a unique id and a span inside 0..{len(doc.text)}). "
                            "Fix: correct the chunker.")
        ids.add(c.chunk_id)
