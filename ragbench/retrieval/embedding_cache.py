"""A persistent SQLite cache in front of any embedder, so sweeps embed each text once."""
from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import assets
from ..errors import ModelError, StoreError
from ..stages import Embedder
from ..text import sha256_text
from .vectors import check_texts

_DDL = """CREATE TABLE IF NOT EXISTS embedding_cache (
    model_sha TEXT NOT NULL, model_id TEXT NOT NULL, text_sha TEXT NOT NULL,
    dim INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model_sha, model_id, text_sha)) WITHOUT ROWID"""
_LOOKUP_CHUNK = 500  # below SQLite's smallest host-parameter limit (999)


class CachedEmbedder(Embedder):
    """Persistent SQLite cache in front of ``inner``, keyed by (``inner.sha256``, ``inner.model_id``, SHA-256 of
    the text); vectors are float32 little-endian blobs. Lookups are batched; the misses of one call are embedded
    in one ``inner.embed`` call (each distinct text once) and written in one transaction. WAL mode and a busy
    timeout make it safe for several processes. ``hits + misses`` counts every text passed to ``embed``."""

    def __init__(self, inner: Embedder, cache_path: str | Path | None = None) -> None:
        self.inner = inner
        self.cache_path = cache_path
        self.hits = 0
        self.misses = 0
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return self.inner.model_id

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self.inner.dim

    @property
    def sha256(self) -> str:
        return self.inner.sha256

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_conn", "_pid")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _conn=None, _pid=None)

    @property
    def path(self) -> Path:
        return Path(self.cache_path) if self.cache_path is not None else assets.cache_dir() / "embeddings.sqlite"

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        path = self.path  # a forked child opens its own connection; the parent's is left alone
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=60.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_DDL)
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"cannot open the embedding cache {path}: {e}. Fix: it is only a cache: delete the "
                             "file, or set embedding.cache_path to a writable location.") from e
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _lookup(self, conn: sqlite3.Connection, key: tuple[str, str], shas: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(shas), _LOOKUP_CHUNK):
            part = shas[i:i + _LOOKUP_CHUNK]
            rows = conn.execute(
                "SELECT text_sha, dim, vector FROM embedding_cache WHERE model_sha = ? AND model_id = ? "
                f"AND text_sha IN ({','.join('?' * len(part))})", (*key, *part)).fetchall()
            for sha, dim, blob in rows:
                if len(blob) == 4 * dim:  # a damaged row counts as a miss and is overwritten
                    found[sha] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        shas = [sha256_text(t) for t in texts]
        key = (self.inner.sha256, self.inner.model_id)
        with self._lock:
            conn = self._connect()
            try:
                found = self._lookup(conn, key, list(dict.fromkeys(shas)))
            except sqlite3.Error as e:
                raise StoreError(f"embedding cache {self.path} is unreadable: {e}. Fix: delete the file.") from e
            missing = {s: t for s, t in zip(shas, texts) if s not in found}
            hits = sum(1 for s in shas if s in found)
            if missing:
                vecs = np.asarray(self.inner.embed(list(missing.values()), show_progress=show_progress),
                                  dtype=np.float32)
                if vecs.ndim != 2 or vecs.shape[0] != len(missing):
                    raise ModelError(f"{self.inner.model_id} returned shape {vecs.shape} for {len(missing)} "
                                     "texts; expected (n, dim).")
                rows = [(*key, s, vecs.shape[1], v.astype("<f4").tobytes()) for s, v in zip(missing, vecs)]
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?, ?)", rows)
                    conn.execute("COMMIT")
                except sqlite3.Error as e:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise StoreError(f"cannot write the embedding cache {self.path}: {e}. Fix: check disk "
                                     "space and permissions, or delete the file.") from e
                found.update(zip(missing, vecs))
        self.hits += hits
        self.misses += len(texts) - hits
        return np.stack([found[s] for s in shas]).astype(np.float32, copy=False)

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def __enter__(self) -> "CachedEmbedder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

