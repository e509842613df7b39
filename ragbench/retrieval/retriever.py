"""Build a retriever from a config: ``bm25`` (alias ``keyword``) | ``dense`` | ``lsh`` | ``hybrid``.

``hybrid`` fuses BM25 with the exact dense retriever (``fusion.dense_part = "lsh"`` swaps in LSH).
:func:`retriever_from_store` indexes a :class:`~ragbench.store.KnowledgeStore`'s chunks with their ACLs and
titles, reusing the store's embeddings for ``embedder.model_id`` instead of embedding again.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import RagbenchConfig
from ..errors import ConfigError
from .base import Embedder, Retriever
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .fusion import HybridRetriever
from .lsh import LshRetriever

if TYPE_CHECKING:
    from ..store import KnowledgeStore

log = logging.getLogger(__name__)

MODES = ("bm25", "dense", "lsh", "hybrid")
_ALIASES = {"keyword": "bm25"}


def normalize_mode(mode: str) -> str:
    """The canonical mode name; unknown modes raise :class:`ConfigError` listing the valid ones."""
    m = _ALIASES.get(str(mode).strip().lower(), str(mode).strip().lower())
    if m not in MODES:
        raise ConfigError(f"unknown retrieval mode {mode!r}; expected one of {', '.join(MODES)} "
                          "(keyword = bm25). Fix: pick one of those.")
    return m


def needs_embedder(mode: str) -> bool:
    return normalize_mode(mode) != "bm25"


def _bm25(cfg: RagbenchConfig) -> BM25Retriever:
    return BM25Retriever(k1=cfg.bm25.k1, b=cfg.bm25.b, stopwords=cfg.bm25.stopwords)


def _lsh(cfg: RagbenchConfig, embedder: Embedder) -> LshRetriever:
    return LshRetriever(embedder, tables=cfg.lsh.tables, bits=cfg.lsh.bits, multiprobe=cfg.lsh.multiprobe,
                        seed=cfg.lsh.seed)


def make_retriever(mode: str, cfg: RagbenchConfig | None = None, embedder: Embedder | None = None) -> Retriever:
    """An un-indexed retriever for ``mode``; vector modes use ``embedder`` or build one from ``cfg.embedding``."""
    cfg = cfg or RagbenchConfig()
    mode = normalize_mode(mode)
    if mode == "bm25":
        return _bm25(cfg)
    if embedder is None:
        from .embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    if mode == "dense":
        return DenseRetriever(embedder)
    if mode == "lsh":
        return _lsh(cfg, embedder)
    part = cfg.fusion.dense_part.strip().lower()
    if part not in ("dense", "lsh"):
        raise ConfigError(f"fusion.dense_part must be dense or lsh, found {cfg.fusion.dense_part!r}.")
    f = cfg.fusion
    return HybridRetriever(_bm25(cfg), DenseRetriever(embedder) if part == "dense" else _lsh(cfg, embedder),
                           rrf_k=f.rrf_k, candidate_k=f.candidate_k, rerank=f.rerank, rerank_weight=f.rerank_weight,
                           weights=(f.keyword_weight, f.dense_weight), adaptive=f.adaptive)


def vector_part(retriever: Retriever) -> DenseRetriever | None:
    """The dense/LSH retriever inside ``retriever`` (itself, or a hybrid's vector half)."""
    if isinstance(retriever, DenseRetriever):
        return retriever
    if isinstance(retriever, HybridRetriever) and isinstance(retriever.dense, DenseRetriever):
        return retriever.dense
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
    return retriever
