"""RM3 pseudo-relevance feedback for :class:`~ragbench.retrieval.bm25.BM25Retriever` (Lavrenko & Croft's
relevance model, interpolated with the query as in Anserini / Pyserini's RM3).

1. First pass: the query's top ``rm3_docs`` readable chunks by BM25 (the principal's ACL applies, so a forbidden
   chunk never contributes expansion terms).
2. Relevance model: P(w | R) ∝ Σ_d score(d) / Σ score · tf(w, d) / |d| over those chunks.
3. The ``rm3_terms`` most probable terms, function words excluded (the :data:`~ragbench.text.STOP_WORDS` and
   Lucene lists, tokenised like the index), renormalised to sum 1.
4. Final query weights: ``rm3_weight`` · (count of the term in the query / query length) + (1 − ``rm3_weight``) ·
   P(w | R); the second pass scores Σ_t weight(t) · BM25 weight(t, d).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError
from ..schema import Principal
from ..text import LUCENE_STOP_WORDS, STOP_WORDS

if TYPE_CHECKING:
    from .bm25 import BM25Retriever


def check_rm3(r: "BM25Retriever") -> None:
    """Typed errors for out-of-range RM3 settings."""
    for name, value in (("rm3_docs", r.rm3_docs), ("rm3_terms", r.rm3_terms)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"bm25 {name} must be a positive integer, found {value!r}. Fix: use e.g. 10.")
    if not (isinstance(r.rm3_weight, (int, float)) and 0 <= r.rm3_weight <= 1):
        raise ConfigError(f"bm25 rm3_weight must be in [0, 1], found {r.rm3_weight!r}. "
                          "Fix: 0.5 (Anserini's default); 1 = no expansion.")


def _function_word_ids(r: "BM25Retriever") -> np.ndarray:
    ids = {r.vocab.get(t) for w in STOP_WORDS | LUCENE_STOP_WORDS for t in r.tokenize(w)}
    return np.array(sorted(i for i in ids if i is not None), dtype=np.int64)


def rm3_expand(r: "BM25Retriever", terms: np.ndarray, principal: Principal | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(term ids, weights)`` of the expanded query for the query term ids ``terms`` (duplicates allowed)."""
    first = r.score_terms(terms, None, principal)
    matched = np.flatnonzero(first)
    uniq, counts = np.unique(terms, return_counts=True)
    original = np.zeros(len(r.vocab) or 1)
    original[uniq] = counts / counts.sum()
    if len(matched) == 0:
        return uniq, original[uniq]
    take = min(r.rm3_docs, len(matched))
    top = matched[np.argsort(-first[matched], kind="stable")[:take]]
    doc_weight = first[top] / first[top].sum()
    tf = r._term_counts()[top]  # (docs, terms) counts of the feedback chunks
    lengths = np.maximum(r.doc_len[top], 1.0)
    rel = np.asarray(tf.multiply((doc_weight / lengths)[:, None]).sum(axis=0)).ravel()
    rel = np.pad(rel, (0, len(original) - len(rel)))
    rel[_function_word_ids(r)] = 0.0
    best = np.argsort(-rel, kind="stable")[: r.rm3_terms]
    best = best[rel[best] > 0]
    feedback = np.zeros_like(original)
    if len(best):
        feedback[best] = rel[best] / rel[best].sum()
    mixed = r.rm3_weight * original + (1.0 - r.rm3_weight) * feedback
    ids = np.flatnonzero(mixed)
    return ids, mixed[ids]
