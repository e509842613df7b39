"""Approximate dense retrieval with faiss (optional ``ann`` extra): HNSW graph or IVF inverted lists over the
same unit vectors as :class:`~ragbench.retrieval.dense.DenseRetriever`, inner product = cosine.

* ``kind="hnsw"``: ``IndexHNSWFlat`` (``m`` links per node, ``ef_construction``, ``ef_search``); ``kind="ivf"``:
  ``IndexIVFFlat`` with ``nlist`` k-means cells (0 = √n) trained on a seeded sample, ``nprobe`` cells searched.
* **ACL.** The principal's readable rows become a faiss ``IDSelectorBitmap`` passed in the search parameters, so a
  forbidden vector is never put into the result: IVF skips it before computing its distance; HNSW may still walk
  through it (the graph's edges are shared) but only selected ids enter the result heap. When the principal can
  read fewer than ``exact_below`` of the vectors, or faiss returns fewer than ``min(k, readable)`` hits (a very
  selective filter can strand an HNSW walk), the search falls back to exact cosine over the readable rows only —
  which is cheap precisely because they are few. Per-ACL-group indexes would avoid the walk-through but multiply
  memory by the number of distinct ACLs and need merging for principals in several groups.
* **Persistence.** :meth:`AnnRetriever.save` writes ``<store>.ann-<signature>.faiss``; the signature hashes the
  model id, the index parameters, the chunk ids in row order and the vector bytes, so a sidecar made from other
  vectors is never loaded: :func:`ragbench.retrieval.retriever.retriever_from_store` rebuilds it instead (and
  deletes older sidecars of the same store).
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..schema import Principal
from .base import Embedder
from .dense import DenseRetriever, matvec

log = logging.getLogger(__name__)

KINDS = ("hnsw", "ivf")


def _faiss() -> Any:
    from ..errors import require_extra

    return require_extra("faiss", "ann", "dense ANN search (--retriever ann)")


class AnnRetriever(DenseRetriever):
    """faiss HNSW / IVF search with exact-cosine fallback for selective ACLs."""

    name = "ann"

    def __init__(self, embedder: Embedder, kind: str = "hnsw", m: int = 32, ef_construction: int = 40,
                 ef_search: int = 64, nlist: int = 0, nprobe: int = 16, exact_below: float = 0.05,
                 threads: int = 1, seed: int = 42) -> None:
        super().__init__(embedder)
        self.kind = kind
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.nlist = nlist
        self.nprobe = nprobe
        self.exact_below = exact_below
        self.threads = threads
        self.seed = seed
        self.faiss_index: Any = None
        self.last_exact = False  # whether the last search fell back to exact cosine

    def _check_params(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"ann kind must be one of {', '.join(KINDS)}, found {self.kind!r}. Fix: use hnsw.")
        for name in ("m", "ef_construction", "ef_search", "nprobe", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"ann {name} must be a positive integer, found {v!r}.")
        if isinstance(self.nlist, bool) or not isinstance(self.nlist, (int, np.integer)) or self.nlist < 0:
            raise ConfigError(f"ann nlist must be an integer ≥ 0 (0 = √n), found {self.nlist!r}.")
        if not (isinstance(self.exact_below, (int, float)) and 0 <= self.exact_below <= 1):
            raise ConfigError(f"ann exact_below must be in [0, 1], found {self.exact_below!r}. Fix: e.g. 0.05.")

    def params(self) -> dict[str, Any]:
        """The parameters that shape the index structure (part of the sidecar signature)."""
        return {"kind": self.kind, "m": self.m, "ef_construction": self.ef_construction, "nlist": self.nlist,
                "seed": self.seed}

    def index(self, chunks, acls=None, titles=None, show_progress=False, vectors=None) -> "AnnRetriever":
        self._check_params()
        return super().index(chunks, acls, titles, show_progress, vectors)  # type: ignore[return-value]

    def add(self, chunks, acls=None, titles=None, show_progress=False, vectors=None) -> "AnnRetriever":
        self._check_params()
        return super().add(chunks, acls, titles, show_progress, vectors)  # type: ignore[return-value]

    # ------------------------------------------------------------------------------------------- structure

    def _on_reset(self) -> None:
        self.faiss_index = None

    def _on_vectors_added(self, count: int) -> None:
        # built lazily (a persisted sidecar may make the build unnecessary); once built, new rows are appended
        if self.faiss_index is not None:
            self.faiss_index.add(np.ascontiguousarray(self.vectors[len(self.vectors) - count:]))

    def ensure_index(self) -> Any:
        """The faiss index over every indexed vector, built now if needed."""
        if self.faiss_index is None and len(self.table):
            self.faiss_index = self._build(self.vectors)
        return self.faiss_index

    def _build(self, x: np.ndarray) -> Any:
        faiss = _faiss()
        faiss.omp_set_num_threads(int(self.threads))
        x = np.ascontiguousarray(x, dtype=np.float32)
        n, dim = x.shape
        if self.kind == "hnsw":
            idx = faiss.IndexHNSWFlat(dim, int(self.m), faiss.METRIC_INNER_PRODUCT)
            idx.hnsw.efConstruction = int(self.ef_construction)
        else:
            nlist = int(self.nlist) or max(1, int(np.sqrt(n)))
            nlist = min(nlist, n)
            idx = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            # k-means on a seeded sample (faiss's own sampling is seeded too; this keeps training time bounded)
            rng = np.random.default_rng(self.seed)
            sample = x if n <= 64 * nlist else x[np.sort(rng.choice(n, 64 * nlist, replace=False))]
            idx.cp.seed = int(self.seed)
            idx.train(sample)
        idx.add(x)
        return idx

    def signature(self) -> str:
        """SHA-256 (first 16 hex) of the model id, index parameters, chunk ids in row order and vector bytes."""
        h = hashlib.sha256()
        h.update(repr((getattr(self.embedder, "model_id", ""), sorted(self.params().items()))).encode())
        for c in self.table.chunks:
            h.update(c.chunk_id.encode("utf-8") + b"\0")
        h.update(np.ascontiguousarray(self.vectors, dtype=np.float32).tobytes())
        return h.hexdigest()[:16]

    def save(self, path: str | Path) -> Path:
        """Write the faiss index to ``path`` (atomically: a temporary file renamed into place)."""
        faiss = _faiss()
        p = Path(path)
        tmp = p.with_name(p.name + ".tmp")
        faiss.write_index(self.ensure_index(), str(tmp))
        tmp.replace(p)
        return p

    def load(self, path: str | Path) -> bool:
        """Replace the built structure by the index in ``path`` when it holds exactly our vectors' count;
        returns whether it was used."""
        faiss = _faiss()
        try:
            idx = faiss.read_index(str(path))
        except RuntimeError as exc:
            log.warning("ANN sidecar %s unreadable (%s); rebuilding", path, exc)
            return False
        if idx.ntotal != len(self.table) or idx.d != self.vectors.shape[1]:
            return False
        self.faiss_index = idx
        return True

    # ------------------------------------------------------------------------------------------- scoring

    def _search_params(self, selector: Any) -> Any:
        faiss = _faiss()
        if self.kind == "hnsw":
            return faiss.SearchParametersHNSW(sel=selector, efSearch=int(self.ef_search))
        return faiss.SearchParametersIVF(sel=selector, nprobe=int(self.nprobe))

    def search_vector(self, qvec: np.ndarray, k: int = 10, principal: Principal | None = None):
        from .chunk_table import check_k, top_k

        check_k(k)
        n = len(self.table)
        if n == 0:
            return []
        q = np.ascontiguousarray(np.asarray(qvec, dtype=np.float32).reshape(1, -1))
        mask = self.table.mask(principal)
        readable = n if mask is None else int(mask.sum())
        self.last_exact = False
        if readable == 0:
            return []
        if mask is not None and readable < self.exact_below * n:
            return self._exact(q[0], mask, k)
        index = self.ensure_index()
        faiss = _faiss()
        selector = None
        if mask is not None:
            bits = np.packbits(mask, bitorder="little")
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
        # the bitmap must outlive the search: keep a reference in this frame
        scores, ids = index.search(q, int(min(k, n)), params=self._search_params(selector))
        found = ids[0] >= 0
        rows, sc = ids[0][found].astype(np.int64), scores[0][found].astype(np.float64)
        if len(rows) < min(k, readable):
            return self._exact(q[0], mask, k)
        rows, sc = top_k(rows, sc, k)  # faiss orders by score; this only fixes the tie order
        return self.table.hits(rows, sc)

    def _exact(self, qvec: np.ndarray, mask: np.ndarray | None, k: int):
        from .chunk_table import top_k

        self.last_exact = True
        rows = np.arange(len(self.table)) if mask is None else np.flatnonzero(mask)
        rows, sc = top_k(rows, matvec(self.vectors[rows], qvec).astype(np.float64), k)
        return self.table.hits(rows, sc)


def sidecar_path(store_path: str | Path, signature: str) -> Path:
    """``<store>.ann-<signature>.faiss`` next to the store file."""
    p = Path(store_path)
    return p.with_name(f"{p.name}.ann-{signature}.faiss")


def attach_sidecar(retriever: AnnRetriever, store_path: str | Path) -> tuple[Path, bool]:
    """Load the store's sidecar for this retriever's signature, or write it (removing stale sidecars of the
    store). Returns ``(path, loaded)``."""
    path = sidecar_path(store_path, retriever.signature())
    if path.exists() and retriever.load(path):
        return path, True
    if retriever.ensure_index() is not None:
        for old in path.parent.glob(f"{Path(store_path).name}.ann-*.faiss"):
            if old != path:
                old.unlink(missing_ok=True)
        retriever.save(path)
    return path, False
