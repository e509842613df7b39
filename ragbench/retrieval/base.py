"""The abstract bases of the retrieval stack. Every implementation keeps these contracts:

* constructors only store parameters (scikit-learn's rule); work happens in ``index()`` or on first use;
* ``Embedder.embed(texts)`` returns float32 ``(n, dim)``, each row L2-normalised (a zero row stays zero);
* ``Retriever.search`` enforces the principal's ACL *before* scoring, so a forbidden chunk never influences
  ranks, normalisation or fusion; ``principal=None`` means an unrestricted caller.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import DataError
from ..schema import Acl, Chunk, Document, Hit, Principal, hits_to_run, validate


class Embedder(ABC):
    """Text → unit vectors."""

    #: Identifies the model and its settings (pooling, max length); embeddings are cached under it.
    model_id: str
    dim: int

    @property
    @abstractmethod
    def sha256(self) -> str:
        """SHA-256 of the model weights (or of the embedder's definition for model-free embedders)."""

    @abstractmethod
    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """float32 ``(len(texts), dim)``, L2-normalised rows."""


class Chunker(ABC):
    @abstractmethod
    def chunk(self, document: Document) -> list[Chunk]:
        """Chunks with character spans into ``document.text`` and stable ids."""


class Retriever(ABC):
    """Ranks indexed chunks for a query."""

    name: str = "retriever"

    @abstractmethod
    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False) -> "Retriever":
        """Index chunks; ``acls`` and ``titles`` map ``doc_id`` to the document's ACL and title
        (a document missing from ``acls`` is visible only to unrestricted callers). Returns ``self``."""

    @abstractmethod
    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> list[Hit]:
        """Top ``k`` chunks the principal may read, best first, ranks from 0."""

    def run(self, queries: Any, k: int = 100, principal: Principal | None = None,
            show_progress: bool = False) -> Any:
        """Run a ``qid, query`` table → a ``qid, docno, score, rank`` table at document level
        (a document's score is its best chunk's)."""
        import pandas as pd
        from tqdm.auto import tqdm

        validate(queries[[c for c in queries.columns if c in ("qid", "query", "conversation_id", "turn")]],
                 "queries")
        rows: list[dict[str, Any]] = []
        it = zip(queries["qid"].astype(str), queries["query"].astype(str))
        for qid, query in tqdm(it, total=len(queries), disable=not show_progress, desc=f"{self.name} run"):
            # Over-fetch chunks so that k distinct documents survive aggregation.
            hits = self.search(query, k=k * 4, principal=principal)
            rows.extend(hits_to_run(qid, hits)[:k])
        return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])


def check_unique_ids(ids: Sequence[str], what: str) -> None:
    """Raise :class:`DataError` naming the first duplicated id."""
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DataError(f"duplicate {what} id {i!r}. Fix: ids must be unique; de-duplicate the input.")
        seen.add(i)
