"""The one way from a config to the retrieval stages: chunkers, embedders and retrievers.

Every caller — the CLI, the evaluations, the tuner, notebooks, the server — builds its stages here, so a knob
cannot be wired in one place and forgotten in another. Constructor arguments carry the config field names
(``BM25Retriever(k1, b, stopwords)``, ``HybridRetriever(..., keyword_weight, dense_weight, adaptive)``), which is
what makes :meth:`ragbench.stages.Params.get_params` comparable with the config.

:class:`IndexedParts` is the cached variant for a fixed corpus: it builds each indexed part once per key of the
config sections it depends on (chunks ← ``chunking``; vectors ← ``chunking`` + ``embedding``; BM25 ← ``chunking``
+ ``bm25``; LSH ← … + ``lsh`` + the seed) and assembles systems through the same :func:`make_retriever`.
"""
from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from ..config import ChunkingConfig, EmbeddingConfig, RagbenchConfig, config_hash
from ..errors import ConfigError
from ..schema import Acl, Chunk, Document
from ..stages import Chunker, Embedder, Retriever
from .bm25 import BM25Retriever
from .chunking import FixedSizeChunker, SentenceChunker, WholeDocumentChunker, WordWindowChunker
from .dense import DenseRetriever
from .embedding_cache import CachedEmbedder
from .fusion import HybridRetriever
from .hashing_embedder import HashingEmbedder
from .lsh import LshRetriever
from .onnx_embedder import OnnxEmbedder

MODES = ("bm25", "dense", "lsh", "ann", "hybrid")
_ALIASES = {"keyword": "bm25"}
#: ``embedding.model`` values; the ``-fp32`` / ``-int8`` suffixes are older spellings of ``embedding.precision``.
EMBEDDING_MODELS = ("minilm", "minilm-fp32", "minilm-int8", "hashing")


def normalize_mode(mode: str) -> str:
    """The canonical mode name; unknown modes raise :class:`ConfigError` listing the valid ones."""
    m = _ALIASES.get(str(mode).strip().lower(), str(mode).strip().lower())
    if m not in MODES:
        raise ConfigError(f"unknown retrieval mode {mode!r}; expected one of {', '.join(MODES)} "
                          "(keyword = bm25). Fix: pick one of those.")
    return m


def needs_embedder(mode: str) -> bool:
    return normalize_mode(mode) != "bm25"


def make_chunker(cfg: ChunkingConfig) -> Chunker:
    """The chunker named by ``cfg.strategy`` (``words`` | ``sentences`` | ``chars`` | ``none``), parameters
    validated."""
    chunker: Chunker
    if cfg.strategy == "words":
        chunker = WordWindowChunker(words=cfg.words, overlap=cfg.overlap)
    elif cfg.strategy == "sentences":
        chunker = SentenceChunker(max_chars=cfg.max_chars, char_overlap=cfg.char_overlap)
    elif cfg.strategy == "chars":
        chunker = FixedSizeChunker(max_chars=cfg.max_chars, char_overlap=cfg.char_overlap)
    elif cfg.strategy in ("none", "document"):
        chunker = WholeDocumentChunker()
    else:
        raise ConfigError(f"chunking.strategy must be one of words, sentences, chars, none; found {cfg.strategy!r}.")
    chunker.validate()
    return chunker


def embedding_precision(cfg: EmbeddingConfig) -> str:
    """``embedding.precision``, or the precision an older ``minilm-fp32`` / ``minilm-int8`` model name asks for."""
    model = cfg.model.strip().lower()
    if model not in EMBEDDING_MODELS:
        raise ConfigError(f"embedding.model must be minilm, minilm-fp32, minilm-int8 or hashing; got {cfg.model!r}. "
                          "Fix: pick one of those.")
    suffix = model.removeprefix("minilm-") if model.startswith("minilm-") else None
    if suffix is not None and cfg.precision not in ("auto", suffix):
        raise ConfigError(f"embedding.model {cfg.model!r} asks for {suffix} but embedding.precision is "
                          f"{cfg.precision!r}. Fix: set embedding.model=minilm and embedding.precision={suffix}.")
    return suffix or cfg.precision


def make_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The embedder a config asks for: ``minilm`` (at ``embedding.precision``) or ``hashing``; wrapped in
    :class:`CachedEmbedder` when ``cfg.cache``. Settings are checked here, before any file is touched."""
    precision = embedding_precision(cfg)
    inner: OnnxEmbedder | HashingEmbedder
    if cfg.model.strip().lower() == "hashing":
        inner = HashingEmbedder(hashing_dim=cfg.hashing_dim)
    else:
        inner = OnnxEmbedder(model_path=cfg.model_path, tokenizer_path=cfg.tokenizer_path, pooling=cfg.pooling,
                             max_length=cfg.max_length, batch_size=cfg.batch_size, intra_threads=cfg.intra_threads,
                             inter_threads=cfg.inter_threads, precision=precision)
    inner.validate()
    return CachedEmbedder(inner, cache_path=cfg.cache_path) if cfg.cache else inner


class Memo:
    """A small LRU cache: expensive objects live while a sweep revisits similar configurations."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return value

    def clear(self) -> None:
        self.items.clear()


_EMBEDDERS = Memo(4)


def shared_embedder(cfg: EmbeddingConfig) -> Embedder:
    """One embedder per embedding section per process (an ONNX session loads once; the disk cache is shared)."""
    return _EMBEDDERS.get(config_hash(cfg), lambda: make_embedder(cfg))


def clear_shared_embedders() -> None:
    """Forget the per-process embedders of :func:`shared_embedder` (benchmarks measuring the disk cache)."""
    _EMBEDDERS.clear()


def lsh_seed(cfg: RagbenchConfig) -> int:
    """The LSH hyperplane seed: ``lsh.seed`` when set, else the config's ``seed``."""
    return cfg.seed if cfg.lsh.seed is None else cfg.lsh.seed


def ann_seed(cfg: RagbenchConfig) -> int:
    """The seed of the ANN index's training sample: ``ann.seed`` when set, else the config's ``seed``."""
    return cfg.seed if cfg.ann.seed is None else cfg.ann.seed


#: ``part(kind)`` → the retriever for one part (``bm25`` | ``dense`` | ``lsh``) of a system.
PartSource = Callable[[str], Retriever]


def make_part(kind: str, cfg: RagbenchConfig, embedder: Embedder | None = None) -> Retriever:
    """An un-indexed single retriever: ``bm25``, ``dense`` or ``lsh`` (vector kinds use ``embedder``, or build one
    from ``cfg.embedding``)."""
    if kind == "bm25":
        return BM25Retriever(**dataclasses.asdict(cfg.bm25))  # constructor arguments = the bm25.* fields
    return _vector_part(kind, cfg, embedder if embedder is not None else make_embedder(cfg.embedding))


def _vector_part(kind: str, cfg: RagbenchConfig, embedder: Embedder) -> DenseRetriever:
    if kind == "dense":
        return DenseRetriever(embedder)
    if kind == "lsh":
        return LshRetriever(embedder, tables=cfg.lsh.tables, bits=cfg.lsh.bits, multiprobe=cfg.lsh.multiprobe,
                            seed=lsh_seed(cfg), rerank=cfg.lsh.rerank)
    if kind == "ann":
        from .ann import AnnRetriever  # faiss is optional: imported only when asked for

        return AnnRetriever(embedder, **{**dataclasses.asdict(cfg.ann), "seed": ann_seed(cfg)})
    raise ConfigError(f"unknown retriever part {kind!r}; expected bm25, dense, lsh or ann.")


def dense_part(cfg: RagbenchConfig) -> str:
    """The hybrid's vector half (``fusion.dense_part``): ``dense`` (exact), ``lsh`` or ``ann`` (faiss)."""
    part = cfg.fusion.dense_part.strip().lower()
    if part not in ("dense", "lsh", "ann"):
        raise ConfigError(f"fusion.dense_part must be dense, lsh or ann, found {cfg.fusion.dense_part!r}.")
    return part


def make_retriever(mode: str, cfg: RagbenchConfig | None = None, embedder: Embedder | None = None,
                   part: PartSource | None = None) -> Retriever:
    """The retriever for ``mode`` (un-indexed unless ``part`` hands out indexed parts). Vector modes use
    ``embedder`` or build one from ``cfg.embedding``; ``hybrid`` fuses ``bm25`` with ``fusion.dense_part``."""
    cfg = cfg or RagbenchConfig()
    mode = normalize_mode(mode)
    if part is None:
        if embedder is None and mode != "bm25":
            embedder = make_embedder(cfg.embedding)

        def part(kind: str) -> Retriever:
            return make_part(kind, cfg, embedder)

    if mode != "hybrid":
        return part(mode)
    f = cfg.fusion
    return HybridRetriever(part("bm25"), part(dense_part(cfg)), rrf_k=f.rrf_k, candidate_k=f.candidate_k,
                           rerank=f.rerank, rerank_weight=f.rerank_weight, keyword_weight=f.keyword_weight,
                           dense_weight=f.dense_weight, adaptive=f.adaptive, method=f.method)


def stage_signatures(cfg: RagbenchConfig, modes: Sequence[str] = (), chunker: bool = False,
                     embedder: Embedder | bool | None = None) -> dict[str, str]:
    """``{name: signature}`` of the stages a run built from ``cfg`` through this factory, for MLflow's
    ``stage.<name>`` params (:func:`ragbench.tracking.record_run` ``stages=``), as ``eval golden`` logs its systems.

    ``chunker``: the run chunked with ``make_chunker(cfg.chunking)``; ``embedder``: the embedder the run used, or
    True for ``make_embedder(cfg.embedding)``, or None for that embedder only when a mode needs one; ``modes``: one
    retriever per mode, under the mode's name. Constructors only store parameters, so nothing is loaded or
    indexed here, and the signatures (from ``get_params()``) are those of the stages the run built from the same
    config (the factory is the only builder; ``tests/test_factory.py``)."""
    from ..stages import stage_signature

    names = [normalize_mode(m) for m in modes]
    emb: Embedder | None
    if isinstance(embedder, Embedder):
        emb = embedder
    elif embedder is True or (embedder is None and any(needs_embedder(m) for m in names)):
        emb = make_embedder(cfg.embedding)
    else:
        emb = None
    stages: dict[str, Any] = {}
    if chunker:
        stages["chunker"] = make_chunker(cfg.chunking)
    if emb is not None:
        stages["embedder"] = emb
    for name in names:
        stages[name] = make_retriever(name, cfg, emb if needs_embedder(name) else None)
    return {k: stage_signature(v) for k, v in stages.items()}


class IndexedParts:
    """Indexed systems for many configurations over one fixed corpus, sharing every part two configurations agree
    on (each part is cached under the hash of the config sections it depends on, in small LRU memos)."""

    def __init__(self, documents: Sequence[Document], acls: Mapping[str, Acl] | None = None,
                 titles: Mapping[str, str] | None = None) -> None:
        self.documents = list(documents)
        self.acls = dict(acls) if acls is not None else {d.doc_id: d.acl for d in self.documents}
        self.titles = dict(titles) if titles is not None else {d.doc_id: d.title for d in self.documents}
        self._chunks, self._vectors, self._parts = Memo(3), Memo(3), Memo(6)

    def chunks(self, cfg: RagbenchConfig) -> list[Chunk]:
        def make() -> list[Chunk]:
            chunker = make_chunker(cfg.chunking)
            return [c for d in self.documents for c in chunker.chunk(d)]

        return self._chunks.get(config_hash(cfg.chunking), make)

    def vectors(self, cfg: RagbenchConfig) -> np.ndarray:
        key = (config_hash(cfg.chunking), config_hash(cfg.embedding))
        return self._vectors.get(key, lambda: shared_embedder(cfg.embedding).embed([c.text for c in self.chunks(cfg)]))

    def part(self, cfg: RagbenchConfig, kind: str) -> Retriever:
        """The indexed part ``kind`` (``bm25`` | ``dense`` | ``lsh``) for ``cfg``."""
        if kind == "bm25":
            key: tuple[Any, ...] = (kind, config_hash(cfg.chunking), config_hash(cfg.bm25))
            return self._parts.get(key, lambda: make_part(kind, cfg).index(self.chunks(cfg), self.acls, self.titles))
        extra = ((config_hash(cfg.lsh), lsh_seed(cfg)) if kind == "lsh" else
                 (config_hash(cfg.ann), ann_seed(cfg)) if kind == "ann" else ())
        key = (kind, config_hash(cfg.chunking), config_hash(cfg.embedding), *extra)

        def make() -> Retriever:
            r = _vector_part(kind, cfg, shared_embedder(cfg.embedding))
            return r.index(self.chunks(cfg), self.acls, self.titles, vectors=self.vectors(cfg))

        return self._parts.get(key, make)

    def system(self, cfg: RagbenchConfig) -> Retriever:
        """The indexed retriever of ``cfg.retrieval.mode``, assembled by :func:`make_retriever`."""
        return make_retriever(cfg.retrieval.mode, cfg, part=lambda kind: self.part(cfg, kind))
