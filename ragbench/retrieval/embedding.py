"""Sentence embedders and the config → embedder factory.

* :class:`OnnxEmbedder` (:mod:`.onnx_embedder`) runs a BERT-style ONNX sentence encoder with onnxruntime;
* :class:`HashingEmbedder` (:mod:`.hashing_embedder`) is the Enterprise source's model-free baseline;
* :class:`CachedEmbedder` (:mod:`.embedding_cache`) puts a persistent SQLite cache in front of either.

Every ``embed`` returns float32 ``(n, dim)`` with L2-normalised rows (a zero row stays zero). The names below stay
importable from here.
"""
from __future__ import annotations

from ..assets import file_sha256
from ..config import EmbeddingConfig
from ..errors import ConfigError
from ..stages import Embedder
from .embedding_cache import CachedEmbedder
from .hashing_embedder import HashingEmbedder, fnv1a_utf16, hash_slot
from .onnx_embedder import MINILM_NAME, OnnxEmbedder
from .vectors import embedding_hash, normalize_rows

__all__ = ["MINILM_NAME", "CachedEmbedder", "HashingEmbedder", "OnnxEmbedder", "embedding_hash", "file_sha256",
           "fnv1a_utf16", "hash_slot", "make_embedder", "normalize_rows"]


def make_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The embedder a config asks for: ``minilm`` (``minilm-fp32`` / ``minilm-int8`` force a precision) or
    ``hashing``; wrapped in :class:`CachedEmbedder` when ``cfg.cache``. Settings are checked here."""
    model = cfg.model.strip().lower()
    inner: OnnxEmbedder | HashingEmbedder
    if model == "hashing":
        inner = HashingEmbedder(cfg.hashing_dim)
    elif model in ("minilm", "minilm-fp32", "minilm-int8"):
        inner = OnnxEmbedder(cfg.model_path, cfg.tokenizer_path, pooling=cfg.pooling, max_length=cfg.max_length,
                             batch_size=cfg.batch_size, intra_threads=cfg.intra_threads,
                             inter_threads=cfg.inter_threads,
                             precision={"minilm": "auto"}.get(model, model.removeprefix("minilm-")))
    else:
        raise ConfigError(f"embedding.model must be minilm, minilm-fp32, minilm-int8 or hashing; got {cfg.model!r}.")
    inner.validate()
    return CachedEmbedder(inner, cfg.cache_path) if cfg.cache else inner
