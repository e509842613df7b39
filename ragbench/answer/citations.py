"""Citations from the ``[n]`` markers of an answer (Enterprise source ``BuildCitations``, seed-behaviour 3.7).

Markers are parsed in order of appearance; numbers outside ``1..len(context)`` and anything that is not a number
(``[xyz]``) are ignored; repeats collapse to the first. When the model wrote no valid marker, the chunks that
support some sentence (in retrieval order) are cited instead. Unlike the source there is no last-resort "cite the
first chunk": a citation that nothing supports would be a fabricated attribution.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..schema import Hit
from .grounding import GroundingReport, parse_markers


@dataclass(frozen=True)
class Citation:
    """A cited chunk: its marker number ``n`` (1-based context position), document and ``[start, end)`` span."""

    n: int
    doc_id: str
    title: str
    chunk_id: str
    start: int
    end: int
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "title": self.title, "chunk_id": self.chunk_id,
                "start": self.start, "end": self.end}


def valid_markers(answer: str, n_context: int) -> list[int]:
    """Distinct in-range marker numbers in first-appearance order."""
    return list(dict.fromkeys(x for x in parse_markers(answer) if 1 <= x <= n_context))


def cite(hit: Hit, n: int) -> Citation:
    return Citation(n, hit.doc_id, hit.title, hit.chunk_id, int(hit.start), int(hit.end), float(hit.score))


def build_citations(answer: str, context: Sequence[Hit], report: GroundingReport | None = None) -> list[Citation]:
    """Citations of the marked chunks; without markers, of the supporting chunks in context order."""
    marked = valid_markers(answer, len(context))
    if marked:
        return [cite(context[n - 1], n) for n in marked]
    if report is None:
        return []
    supporting = set(report.supporting_chunk_ids)
    return [cite(h, i + 1) for i, h in enumerate(context) if h.chunk_id in supporting]
