"""Okapi BM25 over scipy sparse matrices (the Enterprise source's Bm25Index, seed-behaviour 3.5).

score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl)),
idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))   (always > 0).

* Query terms are counted once per occurrence, as in the source: "cell cell" weighs ``cell`` twice. Terms not in
  the vocabulary are skipped. Only chunks sharing at least one term with the query are ranked.
* Tokens come from :func:`ragbench.text.tokenize`; the source keeps stop words (``stopwords=False``), removing
  them is an option.
* The per-term weights are precomputed into a CSC matrix (rows = chunks, columns = terms), so a query is a slice
  of its columns plus a sum (``np.bincount`` over the sliced postings), then ``np.argpartition`` for the top k.
* :meth:`BM25Retriever.add` tokenises only the new chunks and appends their term counts; the weights depend on
  N, df and avgdl, so they are recomputed from the counts (one vectorised pass over the non-zeros) on the next
  search, which is exact BM25 over the whole collection.
* The ACL is applied before scoring: postings of chunks the principal may not read are dropped before the sum.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from ..errors import ConfigError
from ..schema import Acl, Chunk, Hit, Principal
from ..text import tokenize
from .base import Retriever
from .chunk_table import ChunkTable, check_k, top_k


def bm25_idf(n_docs: int, df: np.ndarray) -> np.ndarray:
    """``ln(1 + (N − df + 0.5) / (df + 0.5))`` (the source's, Lucene's and bm25s's default idf)."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


class BM25Retriever(Retriever):
    """Okapi BM25 keyword retriever with incremental ``add`` and ACL-first scoring."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, stopwords: bool = False) -> None:
        self.k1 = k1
        self.b = b
        self.stopwords = stopwords
        self._reset()

    def _reset(self) -> None:
        self.table = ChunkTable()
        self.vocab: dict[str, int] = {}
        self._tf_rows: list[sp.csr_matrix] = []  # appended blocks of term counts, merged lazily
        self._tf: sp.csr_matrix | None = None
        self._weights: sp.csc_matrix | None = None
        self.doc_len = np.empty(0, dtype=np.float64)

    def _check_params(self) -> None:
        if not (isinstance(self.k1, (int, float)) and self.k1 >= 0):
            raise ConfigError(f"bm25 k1 must be a number ≥ 0, found {self.k1!r}. Fix: use e.g. 1.2–2.0.")
        if not (isinstance(self.b, (int, float)) and 0 <= self.b <= 1):
            raise ConfigError(f"bm25 b must be in [0, 1], found {self.b!r}. Fix: use e.g. 0.75.")

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text, stopwords=self.stopwords)

    # ------------------------------------------------------------------------------------------- indexing

    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False) -> "BM25Retriever":
        """Index ``chunks`` from scratch."""
        self._check_params()
        ChunkTable().validate_new(chunks)  # raises before the current index is dropped
        self._reset()
        return self.add(chunks, acls, titles, show_progress=show_progress)

    def add(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
            titles: Mapping[str, str] | None = None, show_progress: bool = False) -> "BM25Retriever":
        """Append ``chunks`` to the index (only they are tokenised); weights refresh on the next search."""
        self._check_params()
        chunks = list(chunks)
        self.table.validate_new(chunks)  # raises before anything changes
        indptr = [0]
        indices: list[int] = []
        counts: list[int] = []
        lengths = np.empty(len(chunks), dtype=np.float64)
        vocab = dict(self.vocab)  # committed only after every chunk tokenised
        for i, c in enumerate(tqdm(chunks, disable=not show_progress, desc="bm25 index", unit="chunk")):
            toks = self.tokenize(c.text)
            lengths[i] = len(toks)
            ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in toks), dtype=np.int64, count=len(toks))
            uniq, cnt = np.unique(ids, return_counts=True)
            indices.extend(uniq.tolist())
            counts.extend(cnt.tolist())
            indptr.append(len(indices))
        block = sp.csr_matrix((np.asarray(counts, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                               np.asarray(indptr, dtype=np.int64)), shape=(len(chunks), max(len(vocab), 1)))
        self.vocab = vocab
        self._tf_rows.append(block)
        self.doc_len = np.concatenate([self.doc_len, lengths])
        self.table.add(chunks, acls, titles)
        self._weights = None
        return self

    def _term_counts(self) -> sp.csr_matrix:
        if self._tf_rows:
            width = max(len(self.vocab), 1)
            blocks = ([self._tf] if self._tf is not None else []) + self._tf_rows
            for blk in blocks:
                blk.resize((blk.shape[0], width))  # earlier blocks knew fewer terms
            self._tf = sp.vstack(blocks, format="csr")
            self._tf_rows = []
        if self._tf is None:
            self._tf = sp.csr_matrix((0, 1))
        return self._tf

    def _build_weights(self) -> sp.csc_matrix:
        tf = self._term_counts()
        n = tf.shape[0]
        self.df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        self.idf = bm25_idf(n, self.df)
        self.avgdl = float(self.doc_len.mean()) if n else 0.0
        # The source divides by max(1e-6, avgdl) so an all-empty corpus does not divide by zero.
        norm = self.k1 * (1.0 - self.b + self.b * self.doc_len / max(1e-6, self.avgdl))
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        t = tf.data
        w = self.idf[tf.indices] * t * (self.k1 + 1.0) / (t + norm[rows])
        self._weights = sp.csr_matrix((w, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        return self._weights

    @property
    def weights(self) -> sp.csc_matrix:
        """Chunk × term BM25 weight matrix (CSC)."""
        return self._weights if self._weights is not None else self._build_weights()

    # ------------------------------------------------------------------------------------------- scoring

    def query_terms(self, query: str) -> np.ndarray:
        """Vocabulary ids of the query's tokens, duplicates kept, unknown tokens dropped."""
        ids = [i for i in map(self.vocab.get, self.tokenize(query)) if i is not None]
        return np.array(ids, dtype=np.int64)

    def score_all(self, query: str, principal: Principal | None = None) -> np.ndarray:
        """BM25 score of every chunk (0 for chunks sharing no term with the query and for forbidden chunks,
        whose postings are dropped before the sum)."""
        w = self.weights
        n = w.shape[0]
        terms = self.query_terms(query)
        if len(terms) == 0 or n == 0:
            return np.zeros(n)
        ptr, indices, data = w.indptr, w.indices, w.data
        # Gather the postings of every query term (a duplicated term is gathered twice, as the source counts it);
        # one concatenate + bincount beats per-term np.add.at for short queries.
        spans = list(zip(ptr[terms].tolist(), ptr[terms + 1].tolist()))
        idx = np.concatenate([indices[a:b] for a, b in spans])
        val = np.concatenate([data[a:b] for a, b in spans])
        mask = self.table.mask(principal)
        if mask is not None:
            keep = mask[idx]  # forbidden chunks are dropped before any score is summed
            idx, val = idx[keep], val[keep]
        return np.bincount(idx, weights=val, minlength=n)

    def score_rows(self, query: str, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of every readable chunk that shares a term with the query (row order)."""
        summed = self.score_all(query, principal)
        # Every weight is > 0 (idf > 0, tf > 0), so a positive sum means "shares a term with the query".
        rows = np.flatnonzero(summed)
        return rows, summed[rows]

    def topk(self, query: str, k: int = 10, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of the top ``k`` matching chunks as arrays (no :class:`Hit` objects); rows index
        ``self.table.chunks``."""
        check_k(k)
        summed = self.score_all(query, principal)
        if np.count_nonzero(summed) <= k:  # only chunks sharing a term are ranked
            rows = np.flatnonzero(summed)
            return top_k(rows, summed[rows], k)
        return top_k(None, summed, k)

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> list[Hit]:
        rows, scores = self.topk(query, k, principal)
        return self.table.hits(rows, scores)
