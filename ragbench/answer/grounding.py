"""Per-sentence support of an answer by the chunks it cites.

The Enterprise source's ``LexicalGroundingChecker`` split the raw answer, so a marker ``[1]`` became the token
``"1"`` and a trailing ``[2]`` after the last full stop became a "sentence" of its own (seed-behaviour 3.7). Here
markers are masked out before splitting (offsets into the answer are kept) and each marker is attached to the
sentence it follows; a full stop ends a sentence only before whitespace, so "£2.4 million" stays one sentence.
A sentence is checked against the chunks *it* cites; a sentence without a marker against every
chunk the answer cites; an answer without any marker against all context chunks.

Support is lexical (``|S ∩ C| / |S|`` on content-word sets, best chunk wins, first on ties) or, with an
:class:`~ragbench.retrieval.base.Embedder`, the cosine similarity of sentence and chunk embeddings.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from ..errors import ConfigError
from ..llm.context import MARKER, answer_sentence_spans
from ..stages import Embedder
from ..text import normalize_whitespace, tokenize

GROUNDING_METHODS = ("lexical", "embedding")


class HasText(Protocol):
    @property
    def chunk_id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class AnswerSentence:
    """A sentence of an answer: ``[start, end)`` into the answer, text without markers, the markers it carries."""

    index: int
    start: int
    end: int
    text: str
    markers: tuple[int, ...]


@dataclass(frozen=True)
class SentenceSupport:
    sentence: AnswerSentence
    chunk_id: str | None
    score: float
    supported: bool


@dataclass(frozen=True)
class GroundingReport:
    sentences: tuple[SentenceSupport, ...]
    support_ratio: float

    @property
    def supporting_chunk_ids(self) -> list[str]:
        """Chunks that support at least one sentence, first-support order."""
        out: list[str] = []
        for s in self.sentences:
            if s.supported and s.chunk_id is not None and s.chunk_id not in out:
                out.append(s.chunk_id)
        return out


def parse_markers(text: str) -> list[int]:
    """Every marker number in order of appearance (``[1, 3]`` gives 1 and 3); no range check."""
    out: list[int] = []
    for m in MARKER.finditer(text):
        out.extend(int(x) for x in m.group(1).split(","))
    return out


def split_answer(answer: str) -> list[AnswerSentence]:
    """Sentences of ``answer`` with markers masked out and attached to the sentence they follow."""
    masked = MARKER.sub(lambda m: " " * len(m.group(0)), answer)
    spans = []
    for a, b in answer_sentence_spans(masked):
        piece = masked[a:b]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((a + lead, a + len(piece.rstrip())))
    owners: list[list[int]] = [[] for _ in spans]
    if spans:
        for m in MARKER.finditer(answer):
            # The owner is the last sentence starting before the marker (the first one for a leading marker).
            idx = max((i for i, (s, _) in enumerate(spans) if s < m.start()), default=0)
            owners[idx].extend(int(x) for x in m.group(1).split(","))
    return [AnswerSentence(i, s, e, normalize_whitespace(masked[s:e]), tuple(owners[i]))
            for i, (s, e) in enumerate(spans)]


def verify(answer: str, chunks: Sequence[HasText], min_support: float = 0.15, method: str = "lexical",
           embedder: Embedder | None = None, min_similarity: float = 0.5) -> GroundingReport:
    """Check every content-bearing sentence of ``answer`` against ``chunks`` (numbered from 1).

    ``support_ratio = supported / (supported + unsupported)``; sentences without content words are ignored;
    no chunks or a blank answer give an empty report with ratio 0."""
    if method not in GROUNDING_METHODS:
        raise ConfigError(f"unknown grounding method {method!r}; expected one of {list(GROUNDING_METHODS)}.")
    if method == "embedding" and embedder is None:
        raise ConfigError("embedding grounding needs an embedder. Fix: pass embedder= or use grounding 'lexical'.")
    if not chunks or not answer.strip():
        return GroundingReport((), 0.0)
    sentences = [s for s in split_answer(answer) if tokenize(s.text, stopwords=True)]
    if not sentences:
        return GroundingReport((), 0.0)
    n = len(chunks)
    cited_anywhere = [c for c in dict.fromkeys(x for s in sentences for x in s.markers) if 1 <= c <= n]
    if method == "lexical":
        scores = _lexical_scores(sentences, chunks)
        threshold = min_support
    else:
        if embedder is None:
            raise ConfigError("grounding method 'embedding' needs an embedder. Fix: pass embedder=, or use "
                              "method='lexical'.")
        scores = _embedding_scores(sentences, chunks, embedder)
        threshold = min_similarity
    results = []
    for s, row in zip(sentences, scores):
        own = [c for c in dict.fromkeys(s.markers) if 1 <= c <= n]
        candidates = own or cited_anywhere or list(range(1, n + 1))
        best_i, best = None, 0.0
        for c in candidates:  # strictly greater: the first chunk wins ties
            if row[c - 1] > best:
                best_i, best = c - 1, float(row[c - 1])
        ok = best_i is not None and best >= threshold
        results.append(SentenceSupport(s, chunks[best_i].chunk_id if best_i is not None else None, best, ok))
    supported = sum(1 for r in results if r.supported)
    return GroundingReport(tuple(results), supported / max(1, len(results)))


def _lexical_scores(sentences: Sequence[AnswerSentence], chunks: Sequence[HasText]) -> list[list[float]]:
    chunk_sets = [set(tokenize(c.text, stopwords=True)) for c in chunks]
    out = []
    for s in sentences:
        toks = set(tokenize(s.text, stopwords=True))
        out.append([len(toks & c) / len(toks) for c in chunk_sets])
    return out


def _embedding_scores(sentences: Sequence[AnswerSentence], chunks: Sequence[HasText],
                      embedder: Embedder) -> list[list[float]]:
    embed = embedder.embed
    sv = np.asarray(embed([s.text for s in sentences]), dtype=np.float32)
    cv = np.asarray(embed([c.text for c in chunks]), dtype=np.float32)
    return (sv @ cv.T).tolist()
