"""Persistence of the knowledge store: the connection, transactions, subsystem schemas, and reads and writes of
documents, chunks, summaries and embeddings. Ingest planning (what to chunk, embed and rewrite) is in
:mod:`ragbench.store.ingest`.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Self, Sequence

import numpy as np

from ..errors import DataError, StoreError
from ..schema import Acl, Chunk
from .sqlite_file import utc_now, check_header, in_batches, initialise, qmarks

#: Attempts at initialising a store that other processes are creating at the same moment (~25 s in all).
_INIT_ATTEMPTS = 50


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



class StoreCore:
    """Documents, chunks and embeddings in one SQLite file (WAL mode): persistence only (ingest planning is
    :class:`ragbench.store.KnowledgeStore`). Thread-safe; one connection per store."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._depth = 0  # nesting depth of transaction()

    # ------------------------------------------------------------------------------------------ lifecycle

    @classmethod
    def open(cls, path: str | Path) -> Self:
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
                check_header(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}. Fix: check the path and its permissions.") from exc
        conn.row_factory = sqlite3.Row
        try:
            for attempt in range(_INIT_ATTEMPTS):
                try:
                    initialise(conn, self.path, self.in_memory)
                    break
                except sqlite3.OperationalError as exc:
                    # Creating a store and switching it to WAL take locks for which SQLite may answer "locked"
                    # at once, without waiting, when other processes open the same new store at the same moment.
                    if "locked" not in str(exc) or attempt == _INIT_ATTEMPTS - 1:
                        raise
                    time.sleep(0.02 * (attempt + 1))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"store {self.path} is damaged or unreadable ({exc}). Fix: restore it from a backup "
                             "or delete it and ingest again.") from exc
        except StoreError:
            conn.close()
            raise
        return conn


    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
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
                             (name, version, utc_now()))
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
        for batch in in_batches(ids):
            rows += self.query(sql + f" WHERE c.doc_id IN ({qmarks(len(batch))})", batch)
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
        for batch in in_batches(list(chunk_ids)):
            found.update(r[0] for r in conn.execute(
                f"SELECT chunk_id FROM chunks WHERE chunk_id IN ({qmarks(len(batch))})", tuple(batch)))
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
            for batch in in_batches(list(dict.fromkeys(wanted))):
                got.update((r[0], r[1]) for r in self.query(
                    f"SELECT chunk_id, vector FROM embeddings WHERE model_id = ? AND chunk_id IN "
                    f"({qmarks(len(batch))})", (model_id, *batch)))
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

