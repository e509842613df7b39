"""The Enterprise source's model-free "local-hashed-tfidf-v1" embedder (seed-behaviour 3.4)."""
from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Sequence

import numpy as np
from tqdm.auto import tqdm

from ..errors import ConfigError
from ..stages import Embedder
from ..text import normalize_whitespace, sha256_text, tokenize
from .vectors import check_texts, normalize_rows

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619


def _utf16(s: str) -> str:
    """The string as UTF-16 code units, one Python char each (the source hashes and slices code units)."""
    if all(ord(c) <= 0xFFFF for c in s):
        return s
    b = s.encode("utf-16-le", "surrogatepass")
    return "".join(chr(b[i] | b[i + 1] << 8) for i in range(0, len(b), 2))


def fnv1a_utf16(s: str) -> int:
    """FNV-1a 32-bit over the UTF-16 code units of ``s``."""
    h = _FNV_OFFSET
    for c in _utf16(s):
        h = ((h ^ ord(c)) * _FNV_PRIME) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=1 << 18)
def hash_slot(token: str, dims: int) -> tuple[int, int]:
    """(index, sign): index = (hash >> 1) mod dims; sign = +1 for an even hash, else -1."""
    h = fnv1a_utf16(token)
    return (h >> 1) % dims, (1 if h % 2 == 0 else -1)


class HashingEmbedder(Embedder):
    """Deterministic hashed TF-IDF-like vectors with no model: terms (stop words removed, or kept if nothing else
    remains) weighted ``(1 + ln c)(1 + ln(1 + len))`` plus two 0.4-weighted extra hashes, and 0.25-weighted
    character trigrams of the lower-cased text."""

    VERSION = "local-hashed-tfidf-v1"

    def __init__(self, hashing_dim: int = 384) -> None:
        self.hashing_dim = hashing_dim

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self.hashing_dim

    def validate(self) -> None:
        if not isinstance(self.dim, int) or not 32 <= self.dim <= 4096:
            raise ConfigError(f"embedding.hashing_dim must be an int in [32, 4096] (the source's range); "
                              f"got {self.dim!r}.")

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return f"{self.VERSION}|dim={self.dim}"

    @property
    def sha256(self) -> str:
        return sha256_text(self.model_id)

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = check_texts(texts)
        self.validate()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(tqdm(texts, disable=not show_progress, desc="hash-embed", unit="text")):
            out[i] = self._one(text)
        return normalize_rows(out)

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        tokens = tokenize(text, stopwords=True) or tokenize(text)
        if not tokens:
            return v
        idx: list[int] = []
        val: list[float] = []
        for term, count in Counter(tokens).items():  # Counter keeps first-occurrence order
            w = np.float32((1 + math.log(count)) * (1 + math.log(1 + len(_utf16(term)))))
            for key, scale in ((term, 1.0), (term + "#1", 0.4), (term + "#2", 0.4)):
                i, s = hash_slot(key, self.dim)
                idx.append(i)
                val.append(s * float(w * np.float32(scale)))
        units = _utf16(normalize_whitespace(text).lower())
        for j in range(len(units) - 2):
            tri = units[j:j + 3]
            if " " not in tri:
                i, s = hash_slot("ng3:" + tri, self.dim)
                idx.append(i)
                val.append(s * 0.25)
        # np.add.at adds in order with float32 arithmetic, like the source's float[] accumulation.
        np.add.at(v, np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=np.float32))
        return v

