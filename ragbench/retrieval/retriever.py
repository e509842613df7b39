"""Retrievers over a knowledge store (built by :mod:`ragbench.retrieval.factory`, whose ``make_retriever``,
``normalize_mode``, ``needs_embedder`` and ``MODES`` stay importable from here).

:func:`retriever_from_store` indexes a :class:`~ragbench.store.KnowledgeStore`'s chunks with their ACLs and
titles, reusing the store's embeddings for ``embedder.model_id`` instead of embedding again.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import RagbenchConfig
from .base import Embedder, Retriever
from .dense import DenseRetriever
from .factory import MODES, make_retriever, needs_embedder, normalize_mode
from .fusion import HybridRetriever

if TYPE_CHECKING:
    from ..store import KnowledgeStore

log = logging.getLogger(__name__)

__all__ = ["MODES", "make_retriever", "needs_embedder", "normalize_mode", "retriever_from_store", "store_vectors",
           "vector_part"]

def vector_part(retriever: Retriever) -> DenseRetriever | None:
    """The dense/LSH retriever inside ``retriever`` (itself, or a hybrid's vector half)."""
    if isinstance(retriever, DenseRetriever):
        return retriever
    if isinstance(retriever, HybridRetriever) and isinstance(retriever.vector, DenseRetriever):
        return retriever.vector
    return None


def store_vectors(store: "KnowledgeStore", chunk_ids: list[str], embedder: Embedder, texts: list[str],
                  show_progress: bool = False) -> np.ndarray:
    """Vectors for ``chunk_ids``: the store's for ``embedder.model_id`` where present, the rest embedded now and
    written back to the store (so the next run reuses them). Stored vectors made with other weights are ignored."""
    model = store.embedding_models().get(embedder.model_id)
    stale = model is not None and model.get("sha256") and model["sha256"] != embedder.sha256
    if stale:
        log.warning("store vectors of %s were made with other weights; embedding again", embedder.model_id)
        found: dict[str, np.ndarray] = {}
    else:
        ids, mat = store.embeddings(embedder.model_id, chunk_ids)
        found = dict(zip(ids, mat))
    missing = [i for i, cid in enumerate(chunk_ids) if cid not in found]
    if missing:
        new = np.asarray(embedder.embed([texts[i] for i in missing], show_progress=show_progress), dtype=np.float32)
        if not stale:
            store.put_embeddings(embedder.model_id, [chunk_ids[i] for i in missing], new)
        found.update((chunk_ids[i], new[j]) for j, i in enumerate(missing))
    if not chunk_ids:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack([found[c] for c in chunk_ids]).astype(np.float32, copy=False)


def retriever_from_store(store: "KnowledgeStore", mode: str, cfg: RagbenchConfig | None = None,
                         embedder: Embedder | None = None, show_progress: bool = False) -> Retriever:
    """A retriever of ``mode`` indexed over every chunk of ``store`` (with document ACLs and titles)."""
    retriever = make_retriever(mode, cfg, embedder)
    chunks = store.chunks()
    acls, titles = store.acls(), store.titles()
    vec = vector_part(retriever)
    kwargs: dict[str, Any] = {}
    if vec is not None:
        kwargs["vectors"] = store_vectors(store, [c.chunk_id for c in chunks], vec.embedder,
                                          [c.text for c in chunks], show_progress)
    retriever.index(chunks, acls, titles, show_progress=show_progress, **kwargs)
    if vec is not None and vec.name == "ann" and not store.in_memory:
        from .ann import attach_sidecar

        path, loaded = attach_sidecar(vec, store.path)  # type: ignore[arg-type]
        log.info("ANN index %s %s", "loaded from" if loaded else "built and saved to", path)
    return retriever
