"""Split a multi-part question into the questions it asks, so each part retrieves its own passages.

Retrieved as one query, a question that asks two things ("…, and may the locum sign for the controlled drugs
delivery?") gets top passages for whichever part dominates the embedding. :func:`question_parts` (from
:mod:`ragbench.llm.parts`, where the reader uses it too) gives the parts; :func:`interleave` merges their ranked
lists (the whole question's first), one rank at a time, without repeats.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..llm.parts import question_parts
from ..schema import Hit

__all__ = ["interleave", "question_parts"]


def interleave(ranked: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
    """Up to ``k`` hits taken rank by rank across ``ranked`` (first list first at each rank), each chunk once."""
    out: list[Hit] = []
    seen: set[str] = set()
    depth = max((len(r) for r in ranked), default=0)
    for i in range(depth):
        for hits in ranked:
            if i < len(hits) and hits[i].chunk_id not in seen:
                seen.add(hits[i].chunk_id)
                out.append(hits[i])
                if len(out) == k:
                    return out
    return out
