"""Sentence embedders (built from a config by :func:`ragbench.retrieval.factory.make_embedder`).

* :class:`OnnxEmbedder` (:mod:`.onnx_embedder`) runs a BERT-style ONNX sentence encoder with onnxruntime;
* :class:`HashingEmbedder` (:mod:`.hashing_embedder`) is the Enterprise source's model-free baseline;
* :class:`CachedEmbedder` (:mod:`.embedding_cache`) puts a persistent SQLite cache in front of either.

Every ``embed`` returns float32 ``(n, dim)`` with L2-normalised rows (a zero row stays zero). The names below stay
importable from here.
"""
from __future__ import annotations

from ..assets import file_sha256
from .embedding_cache import CachedEmbedder
from .factory import make_embedder
from .hashing_embedder import HashingEmbedder, fnv1a_utf16, hash_slot
from .onnx_embedder import MINILM_NAME, OnnxEmbedder
from .vectors import embedding_hash, normalize_rows

__all__ = ["MINILM_NAME", "CachedEmbedder", "HashingEmbedder", "OnnxEmbedder", "embedding_hash", "file_sha256",
           "fnv1a_utf16", "hash_slot", "make_embedder", "normalize_rows"]
