"""Reciprocal rank fusion, its weighted variant, the lexical-overlap re-rank, and the hybrid retriever
(the Enterprise source's HybridRetriever, seed-behaviour 3.6).

* ``rrf``: score(id) = Σ_rankings 1 / (k + rank0 + 1), rank0 counting from 0 (k = 60 as the source).
* ``weighted_rrf``: the same with one weight per ranking.
* ``convex`` (``method="convex"``): Σ_lists weight · min-max-normalised score over that list's candidates (an id
  missing from a list gets 0 from it); unlike RRF it keeps how far apart the scores are, not only their order.
* ``lexical_rerank``: final = fused + weight · |Tok(q) ∩ Tok(chunk)| / |Tok(q)|, token sets with stop words
  removed, 0 when the query has no tokens (source weight 0.1).
Ties keep first-appearance order (rankings scanned in the order given, so the keyword list wins ties, as the
source's ``byId`` map does).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import ConfigError
from ..schema import Acl, Chunk, Hit, Principal
from ..text import overlap_ratio, tokenize
from .base import Retriever
from .chunk_table import check_k, rescored
from .hits import Hits


def weighted_rrf(rankings: Sequence[Sequence[str]], weights: Sequence[float], k: float = 60) -> dict[str, float]:
    """``{id: Σ_i weights[i] / (k + rank0 + 1)}`` ordered best first (ties: first appearance).

    An id repeated inside one ranking counts at its first (best) position only."""
    if len(weights) != len(rankings):
        raise ConfigError(f"weighted_rrf needs one weight per ranking: {len(rankings)} rankings, "
                          f"{len(weights)} weights. Fix: pass matching lists.")
    if not k >= 0:
        raise ConfigError(f"rrf k must be ≥ 0, found {k!r}. Fix: use the usual k = 60.")
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        seen: set[str] = set()
        for rank0, doc in enumerate(ranking):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank0 + 1)
    order = sorted(scores, key=lambda d: -scores[d])  # sorted() is stable: ties keep first appearance
    return {d: scores[d] for d in order}


def convex(lists: Sequence[Sequence[tuple[str, float]]], weights: Sequence[float]) -> dict[str, float]:
    """``{id: Σ_i weights[i] · (score − min_i) / (max_i − min_i)}`` over ``(id, score)`` lists, best first (ties:
    first appearance). A list whose scores are all equal contributes its full weight to each of its ids."""
    if len(weights) != len(lists):
        raise ConfigError(f"convex fusion needs one weight per list: {len(lists)} lists, {len(weights)} weights.")
    fused: dict[str, float] = {}
    for items, w in zip(lists, weights):
        if not items:
            continue
        vals = [s for _, s in items]
        lo, hi = min(vals), max(vals)
        span = hi - lo
        seen: set[str] = set()
        for doc, s in items:
            if doc in seen:
                continue
            seen.add(doc)
            fused[doc] = fused.get(doc, 0.0) + w * ((s - lo) / span if span > 0 else 1.0)
    order = sorted(fused, key=lambda d: -fused[d])
    return {d: fused[d] for d in order}


def rrf(rankings: Sequence[Sequence[str]], k: float = 60) -> dict[str, float]:
    """Reciprocal rank fusion: ``{id: Σ 1/(k + rank0 + 1)}`` ordered best first."""
    return weighted_rrf(rankings, [1.0] * len(rankings), k)


def lexical_rerank(query: str, fused: Mapping[str, float], texts: Mapping[str, str],
                   weight: float = 0.1, token_sets: dict[str, frozenset[str]] | None = None) -> dict[str, float]:
    """Add ``weight`` × the query-token overlap of each item's text; ordered best first (stable).

    ``token_sets`` is an optional cache (id → token set without stop words), filled as items are seen."""
    q = set(tokenize(query, stopwords=True))
    cache = token_sets if token_sets is not None else {}

    def toks(d: str) -> frozenset[str]:
        got = cache.get(d)
        if got is None:
            got = cache[d] = frozenset(tokenize(texts.get(d, ""), stopwords=True))
        return got

    final = {d: s + weight * overlap_ratio(q, toks(d)) for d, s in fused.items()}
    order = sorted(final, key=lambda d: -final[d])
    return {d: final[d] for d in order}


def keyword_coverage(query: str, keyword_hits: Sequence[Hit]) -> float:
    """Share of the query's content words (stop words removed) found in the best keyword hit; 0 without hits.

    Query-adaptive fusion scales the keyword ranking's RRF weight by ``coverage ** adaptive``: when the best BM25
    match shares few of the query's words (a paraphrase), its ranking is mostly noise and should not pull
    the fused list away from the dense one."""
    terms = set(tokenize(query, stopwords=True))
    if not terms or not keyword_hits:
        return 0.0
    return len(terms & set(tokenize(keyword_hits[0].text, stopwords=True))) / len(terms)


class HybridRetriever(Retriever):
    """Fuses a keyword ranking and a vector ranking (exact dense or LSH: ``fusion.dense_part``) with weighted RRF
    (``keyword_weight``, ``dense_weight``), optionally followed by the lexical re-rank.

    Both parts are searched with the principal, so fusion never sees a forbidden chunk."""

    name = "hybrid"

    def __init__(self, keyword: Retriever, vector: Retriever, rrf_k: int = 60, candidate_k: int = 100,
                 rerank: bool = False, rerank_weight: float = 0.1, keyword_weight: float = 1.0,
                 dense_weight: float = 1.0, adaptive: float = 0.0, method: str = "rrf") -> None:
        self.keyword = keyword
        self.vector = vector
        self.rrf_k = rrf_k
        self.candidate_k = candidate_k
        self.rerank = rerank
        self.rerank_weight = rerank_weight
        self.keyword_weight = keyword_weight
        self.dense_weight = dense_weight
        self.adaptive = adaptive
        self.method = method
        self.last_candidates = 0
        self._token_sets: dict[str, frozenset[str]] = {}  # chunk id → tokens, for the re-rank

    def _check_params(self) -> None:
        if isinstance(self.candidate_k, bool) or not isinstance(self.candidate_k, int) or self.candidate_k < 1:
            raise ConfigError(f"fusion candidate_k must be a positive integer, found {self.candidate_k!r}. "
                              "Fix: use e.g. 100.")
        if not (isinstance(self.rrf_k, (int, float)) and self.rrf_k >= 0):
            raise ConfigError(f"fusion rrf_k must be a number ≥ 0, found {self.rrf_k!r}. Fix: use 60.")
        if not (isinstance(self.adaptive, (int, float)) and self.adaptive >= 0):
            raise ConfigError(f"fusion adaptive must be a number ≥ 0, found {self.adaptive!r}. Fix: 0 (off) to 3.")
        for name in ("keyword_weight", "dense_weight"):
            w = getattr(self, name)
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0:
                raise ConfigError(f"fusion.{name} must be a number ≥ 0, found {w!r}. Fix: use e.g. 1.0.")

        if self.method not in ("rrf", "convex"):
            raise ConfigError(f"fusion method must be rrf or convex, found {self.method!r}. Fix: use rrf.")

    @property
    def dense(self) -> Retriever:
        """The vector half (the old name of :attr:`vector`)."""
        return self.vector

    @property
    def weights(self) -> tuple[float, float]:
        """``(keyword_weight, dense_weight)``."""
        return (self.keyword_weight, self.dense_weight)

    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False,
              vectors=None) -> "HybridRetriever":
        """Index both parts; ``vectors`` (precomputed chunk embeddings) go to the dense part."""
        self._check_params()
        chunks = list(chunks)
        self._token_sets = {}
        self.keyword.index(chunks, acls, titles, show_progress=show_progress)
        if vectors is not None:
            self.vector.index(chunks, acls, titles, show_progress=show_progress, vectors=vectors)  # type: ignore[call-arg]
        else:
            self.vector.index(chunks, acls, titles, show_progress=show_progress)
        return self

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> list[Hit]:
        check_k(k)
        self._check_params()
        if not query.strip():
            return []
        cand = max(self.candidate_k, k)
        kw = self.keyword.search(query, cand, principal)
        dn = self.vector.search(query, cand, principal)
        # Fusion needs ids and scores only: lazy Hits give them from their arrays, and only the k fused hits
        # (and the texts the re-rank reads) are ever built.
        kw_ids, dn_ids = _chunk_ids(kw), _chunk_ids(dn)
        where: dict[str, tuple[Sequence[Hit], int]] = {}
        for part, ids in ((kw, kw_ids), (dn, dn_ids)):
            for i, cid in enumerate(ids):
                where.setdefault(cid, (part, i))  # first occurrence, keyword hits first
        self.last_candidates = len(where)
        weights = self.weights
        if self.adaptive > 0:
            weights = (weights[0] * keyword_coverage(query, kw) ** self.adaptive, weights[1])
        if self.method == "convex":
            fused = convex([list(zip(kw_ids, _scores(kw))), list(zip(dn_ids, _scores(dn)))], weights)
        else:
            fused = weighted_rrf([kw_ids, dn_ids], weights, self.rrf_k)
        if self.rerank:
            texts = {cid: part[i].text for cid, (part, i) in where.items()}
            fused = lexical_rerank(query, fused, texts, self.rerank_weight, self._token_sets)
        return rescored((_at(where[cid]), score) for cid, score in list(fused.items())[:k])


def _chunk_ids(hits: Sequence[Hit]) -> list[str]:
    return hits.chunk_ids() if isinstance(hits, Hits) else [h.chunk_id for h in hits]


def _scores(hits: Sequence[Hit]) -> list[float]:
    """The hits' scores (from a Hits' array: the same floats its Hits carry)."""
    return hits.scores.tolist() if isinstance(hits, Hits) else [h.score for h in hits]


def _at(where: tuple[Sequence[Hit], int]) -> Hit:
    return where[0][where[1]]
