"""Exact dense retrieval: cosine similarity as one matrix product over L2-normalised float32 vectors.

The principal's ACL mask selects the readable rows first; only those rows enter the product.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import DataError, ModelError
from ..schema import Acl, Chunk, Hit, Principal
from .base import Embedder, Retriever
from .chunk_table import ChunkTable, check_k, top_k
from .vectors import normalize_rows


_BLAS: Any = None


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` with BLAS limited to one thread.

    A matrix-vector product is memory-bound: extra BLAS threads add only synchronisation, and on a shared CPU
    they wait for each other (measured 4-10x slower than one thread for 5,000 x 384 under load)."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS = ThreadpoolController()
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
            _BLAS = False
    if _BLAS is False:
        return matrix @ vector
    with _BLAS.limit(limits=1, user_api="blas"):
        return matrix @ vector


class DenseRetriever(Retriever):
    """Brute-force cosine search over chunk embeddings from ``embedder``."""

    name = "dense"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.table = ChunkTable()
        self.vectors = np.empty((0, 0), dtype=np.float32)

    # ------------------------------------------------------------------------------------------- indexing

    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False,
              vectors: np.ndarray | None = None) -> "DenseRetriever":
        """Index ``chunks`` from scratch; ``vectors`` (one row per chunk) skips embedding them again."""
        chunks = list(chunks)
        ChunkTable().validate_new(chunks)
        new = self._vectors_for(chunks, vectors, show_progress)  # embed before dropping the old index
        self.table = ChunkTable()
        self.vectors = np.empty((0, new.shape[1]), dtype=np.float32)
        self._on_reset()
        return self._append(chunks, new, acls, titles)

    def add(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
            titles: Mapping[str, str] | None = None, show_progress: bool = False,
            vectors: np.ndarray | None = None) -> "DenseRetriever":
        """Append ``chunks`` (embedding only them)."""
        chunks = list(chunks)
        self.table.validate_new(chunks)
        new = self._vectors_for(chunks, vectors, show_progress)
        if len(self.table) and new.shape[1] != self.vectors.shape[1]:
            raise DataError(f"vectors have dimension {new.shape[1]}, the index has {self.vectors.shape[1]}. "
                            "Fix: use the same embedder for every add().")
        return self._append(chunks, new, acls, titles)

    def _append(self, chunks: list[Chunk], new: np.ndarray, acls: Mapping[str, Acl] | None,
                titles: Mapping[str, str] | None) -> "DenseRetriever":
        self.vectors = np.concatenate([self.vectors.reshape(-1, new.shape[1]), new]) if len(self.table) else new
        self.table.add(chunks, acls, titles)
        self._on_vectors_added(len(chunks))
        return self

    def _on_reset(self) -> None:
        """Hook: the index was emptied by :meth:`index`."""

    def _on_vectors_added(self, count: int) -> None:
        """Hook for subclasses that keep a structure over the vectors (LSH buckets)."""

    def _vectors_for(self, chunks: list[Chunk], vectors: np.ndarray | None, show_progress: bool) -> np.ndarray:
        dim = int(getattr(self.embedder, "dim", 0) or 0)
        if vectors is None:
            if not chunks:
                return np.empty((0, dim), dtype=np.float32)
            vectors = self.embedder.embed([c.text for c in chunks], show_progress=show_progress)
        v = np.asarray(vectors)
        if v.ndim != 2 or v.shape[0] != len(chunks):
            raise DataError(f"expected a ({len(chunks)}, dim) matrix of chunk vectors, found shape {v.shape}. "
                            "Fix: give one vector per chunk.")
        if not np.isfinite(v).all():
            raise ModelError("chunk vectors contain NaN or infinity. Fix: check the embedder's output.")
        return normalize_rows(v)

    def embed_query(self, query: str) -> np.ndarray:
        q = np.asarray(self.embedder.embed([query]), dtype=np.float32).reshape(-1)
        if len(self.table) and q.shape[0] != self.vectors.shape[1]:
            raise ModelError(f"query vector has dimension {q.shape[0]}, the index has {self.vectors.shape[1]}. "
                             "Fix: search with the embedder the index was built with.")
        return normalize_rows(q[None, :])[0]

    # ------------------------------------------------------------------------------------------- scoring

    def readable_rows(self, principal: Principal | None) -> np.ndarray | None:
        mask = self.table.mask(principal)
        return None if mask is None else np.flatnonzero(mask)

    def score_rows(self, qvec: np.ndarray, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosine)`` of every readable chunk."""
        rows = self.readable_rows(principal)
        if rows is None:
            return np.arange(len(self.table)), matvec(self.vectors, qvec)
        return rows, matvec(self.vectors[rows], qvec)

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> Sequence[Hit]:
        """The top ``k`` (a lazy :class:`~ragbench.retrieval.hits.Hits` for exact search)."""
        check_k(k)
        if not query.strip() or len(self.table) == 0:
            return self.table.hits(np.empty(0, dtype=np.int64), np.empty(0))
        return self.search_vector(self.embed_query(query), k, principal)

    def search_vector(self, qvec: np.ndarray, k: int = 10, principal: Principal | None = None) -> Sequence[Hit]:
        """Search with an already embedded (unit) query vector."""
        check_k(k)
        if len(self.table) == 0:
            return self.table.hits(np.empty(0, dtype=np.int64), np.empty(0))
        rows, scores = self.score_rows(np.asarray(qvec, dtype=np.float32), principal)
        rows, scores = top_k(rows, scores.astype(np.float64), k)
        return self.table.hits(rows, scores)
