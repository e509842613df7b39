"""Small vector helpers shared by the embedders and the vector retrievers."""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from ..errors import DataError


def embedding_hash(vector: Any) -> str:
    """First 8 hex digits of the SHA-256 of the vector as float32 little-endian bytes (a short fingerprint)."""
    data = np.ascontiguousarray(np.asarray(vector, dtype="<f4")).tobytes()
    return hashlib.sha256(data).hexdigest()[:8]



def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list, or :class:`DataError` for a bare string or a non-string item."""
    if isinstance(texts, str):
        raise DataError("embed() expects a sequence of strings, got one str. Fix: wrap it: embed([text]).")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise DataError(f"text #{i} is {type(t).__name__}, expected str. Fix: pass strings only.")
    return out



def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """float32 copy with unit-length rows (zero rows stay zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)
