"""The retrieval contracts (defined in :mod:`ragbench.stages`, re-exported here) and a shared input check.

Every implementation keeps these contracts: constructors only store parameters (scikit-learn's rule) and work
happens in ``index()`` or on first use; ``Embedder.embed`` returns L2-normalised float32 rows;
``Retriever.search`` enforces the principal's ACL *before* scoring.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import DataError
from ..stages import Chunker, Embedder, Retriever

__all__ = ["Chunker", "Embedder", "Retriever", "check_unique_ids"]


def check_unique_ids(ids: Sequence[str], what: str) -> None:
    """Raise :class:`DataError` naming the first duplicated id."""
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DataError(f"duplicate {what} id {i!r}. Fix: ids must be unique; de-duplicate the input.")
        seen.add(i)
