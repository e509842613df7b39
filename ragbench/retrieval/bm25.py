"""Okapi BM25 over scipy sparse matrices (the Enterprise source's Bm25Index, seed-behaviour 3.5), with the BM25
variants of bm25s (Kamphuis et al., ECIR 2020) and optional RM3 pseudo-relevance feedback.

Default (``method="lucene"``, the source's formula):
score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl)),
idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))   (always > 0).

``method`` (names as bm25s): ``robertson`` (idf ln((N − df + 0.5)/(df + 0.5)) floored at 0), ``lucene``,
``atire`` (idf ln(N/df)), ``bm25l`` (idf ln((N+1)/(df+0.5)), tf normalised first and shifted by ``delta``),
``bm25+`` (idf ln((N+1)/df), ``delta`` added to the tf part). Scores equal bm25s's for atire, bm25l and bm25+;
robertson and lucene keep the source's constant (k1 + 1) factor, which bm25s leaves out (rankings are identical).
bm25l and bm25+ give every query term a score even in documents without it (idf · tf-part(0)); that part is the
same for every document, so it is added to the returned scores, and only documents sharing a term are ranked.

* Query terms are counted once per occurrence, as in the source: "cell cell" weighs ``cell`` twice. Terms not in
  the vocabulary are skipped. Only chunks sharing at least one term with a positive weight are ranked.
* Tokens come from :class:`ragbench.text.Tokenizer`: the source keeps stop words (``stopwords=False``) and does
  not stem (``stemmer="none"``); both are options (``stopword_list``, ``stemmer``).
* The per-term weights are precomputed into a CSC matrix (rows = chunks, columns = terms), so a query is a slice
  of its columns plus a sum, then ``np.partition`` for the top k. The most frequent terms (in ≥ 1/8 of the
  chunks: "the", "of", …, most of a query's postings) are also kept as dense columns, added with one vector
  add instead of a scatter over thousands of postings (at most half as many dense entries as the matrix has
  non-zeros). Terms are summed one at a time in query order, so every score has the same bits as one sum over
  all the query's postings.
* :meth:`BM25Retriever.add` tokenises only the new chunks and appends their term counts; the weights depend on
  N, df and avgdl, so they are recomputed from the counts (one vectorised pass over the non-zeros) on the next
  search, which is exact BM25 over the whole collection.
* The ACL is applied before scoring: postings of chunks the principal may not read are dropped before the sum,
  and RM3 draws its feedback only from readable chunks (:mod:`ragbench.retrieval.rm3`).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from ..errors import ConfigError
from ..schema import Acl, Chunk, Principal
from ..text import Tokenizer
from .base import Retriever
from .chunk_table import ChunkTable, check_k, top_k
from .hits import Hits


METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")

#: A term found in at least this share of the chunks is also stored as a dense column (see ``score_terms``).
DENSE_SHARE = 0.125


def bm25_idf(n_docs: int, df: np.ndarray, method: str = "lucene") -> np.ndarray:
    """Inverse document frequency of ``method``; the default is ``ln(1 + (N − df + 0.5) / (df + 0.5))`` (the
    source's, Lucene's and bm25s's default idf)."""
    df = np.asarray(df, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if method == "robertson":
            return np.log(np.maximum(1.0, (n_docs - df + 0.5) / (df + 0.5)))
        if method == "atire":
            return np.log(n_docs / np.maximum(df, 1.0))
        if method == "bm25l":
            return np.log((n_docs + 1.0) / (df + 0.5))
        if method == "bm25+":
            return np.log((n_docs + 1.0) / np.maximum(df, 1.0))
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def bm25_tf_part(tf: np.ndarray, norm: np.ndarray, k1: float, method: str, delta: float) -> np.ndarray:
    """The term-frequency part of ``method`` for counts ``tf`` and length factors ``norm = 1 − b + b·|d|/avgdl``,
    minus its value at tf = 0 (bm25l, bm25+), so that a document without the term gets 0 here."""
    if method == "bm25l":
        c = tf / norm
        return (k1 + 1.0) * (c + delta) / (k1 + c + delta) - (k1 + 1.0) * delta / (k1 + delta)
    # bm25+ adds delta to every term's tf part, present or not: the difference to tf = 0 is the plain part
    return tf * (k1 + 1.0) / (tf + k1 * norm)


def bm25_absent_part(k1: float, method: str, delta: float) -> float:
    """The tf part at tf = 0 (non-zero only for bm25l and bm25+)."""
    if method == "bm25l":
        return (k1 + 1.0) * delta / (k1 + delta)
    if method == "bm25+":
        return delta
    return 0.0


def dense_columns(w: sp.csc_matrix) -> tuple[np.ndarray, dict[int, int]]:
    """``(matrix, {term: row})``: the columns of ``w`` with at least :data:`DENSE_SHARE` · n non-zeros as dense rows,
    most frequent first, at most half as many dense entries in all as ``w`` has non-zeros (8 bytes each against 12
    for a CSC entry: at most a third more memory).

    A dense row is added with one streaming vector add; a posting list costs a gather and a scatter per posting,
    so the few common terms that hold most of a query's postings are much cheaper dense."""
    n = w.shape[0]
    if n == 0:
        return np.zeros((0, 0)), {}
    df = np.diff(w.indptr)
    frequent = np.flatnonzero(df >= max(1.0, DENSE_SHARE * n))
    frequent = frequent[np.argsort(-df[frequent], kind="stable")][: w.nnz // (2 * n)]
    dense = np.zeros((len(frequent), n))
    for j, t in enumerate(frequent.tolist()):
        a, b = w.indptr[t], w.indptr[t + 1]
        dense[j, w.indices[a:b]] = w.data[a:b]
    return dense, {t: j for j, t in enumerate(frequent.tolist())}


class BM25Retriever(Retriever):
    """Okapi BM25 keyword retriever with incremental ``add`` and ACL-first scoring."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, stopwords: bool = False, stopword_list: str = "source",
                 stemmer: str = "none", method: str = "lucene", delta: float = 0.5, rm3: bool = False,
                 rm3_docs: int = 10, rm3_terms: int = 10, rm3_weight: float = 0.5) -> None:
        self.k1 = k1
        self.b = b
        self.stopwords = stopwords
        self.stopword_list = stopword_list
        self.stemmer = stemmer
        self.method = method
        self.delta = delta
        self.rm3 = rm3
        self.rm3_docs = rm3_docs
        self.rm3_terms = rm3_terms
        self.rm3_weight = rm3_weight
        self._tokenizer: Tokenizer | None = None
        self._reset()

    def _reset(self) -> None:
        self.table = ChunkTable()
        self.vocab: dict[str, int] = {}
        self._tf_rows: list[sp.csr_matrix] = []  # appended blocks of term counts, merged lazily
        self._tf: sp.csr_matrix | None = None
        self._weights: sp.csc_matrix | None = None
        self._dense = np.zeros((0, 0))  # row j = the weights of term t (every chunk) for {t: j} in _dense_slot
        self._dense_slot: dict[int, int] = {}
        self.doc_len = np.empty(0, dtype=np.float64)
        self._index_tokenizer: tuple[bool, str, str] | None = None
        self._weights_for: tuple | None = None

    def _check_params(self) -> None:
        if not (isinstance(self.k1, (int, float)) and self.k1 >= 0):
            raise ConfigError(f"bm25 k1 must be a number ≥ 0, found {self.k1!r}. Fix: use e.g. 1.2–2.0.")
        if not (isinstance(self.b, (int, float)) and 0 <= self.b <= 1):
            raise ConfigError(f"bm25 b must be in [0, 1], found {self.b!r}. Fix: use e.g. 0.75.")
        if self.method not in METHODS:
            raise ConfigError(f"bm25 method must be one of {', '.join(METHODS)}, found {self.method!r}. "
                              "Fix: use lucene (the default).")
        if not (isinstance(self.delta, (int, float)) and self.delta >= 0):
            raise ConfigError(f"bm25 delta must be a number ≥ 0, found {self.delta!r}. Fix: use 0.5.")
        from .rm3 import check_rm3

        check_rm3(self)

    @property
    def tokenizer(self) -> Tokenizer:
        """The index's tokenizer (built on first use from ``stopwords``, ``stopword_list``, ``stemmer``)."""
        spec = (self.stopwords, self.stopword_list, self.stemmer)
        tok = self._tokenizer
        if tok is None or (tok.stopwords, tok.stopword_list, tok.stemmer) != spec:
            tok = self._tokenizer = Tokenizer(*spec)
        return tok

    def tokenize(self, text: str) -> list[str]:
        return self.tokenizer(text)

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
        if self.table.chunks and self._index_tokenizer != (self.stopwords, self.stopword_list, self.stemmer):
            raise ConfigError("bm25 tokenizer settings changed since index(): the new chunks would be tokenised "
                              "differently. Fix: call index() again with the new settings.")
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
        self._index_tokenizer = (self.stopwords, self.stopword_list, self.stemmer)
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
        self.idf = bm25_idf(n, self.df, self.method)
        self.avgdl = float(self.doc_len.mean()) if n else 0.0
        # The source divides by max(1e-6, avgdl) so an all-empty corpus does not divide by zero.
        norm = 1.0 - self.b + self.b * self.doc_len / max(1e-6, self.avgdl)
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        w = self.idf[tf.indices] * bm25_tf_part(tf.data, norm[rows], self.k1, self.method, self.delta)
        self.absent = self.idf * bm25_absent_part(self.k1, self.method, self.delta)
        m = sp.csr_matrix((w, tf.indices.copy(), tf.indptr.copy()), shape=tf.shape)  # copies: tf stays intact
        m.eliminate_zeros()  # zero idf (robertson, atire): such a term matches nothing
        self._weights = w_csc = m.tocsc()
        self._dense, self._dense_slot = dense_columns(w_csc)
        self._weights_for = (self.k1, self.b, self.method, self.delta)
        return w_csc

    @property
    def weights(self) -> sp.csc_matrix:
        """Chunk × term BM25 weight matrix (CSC), rebuilt when ``k1``, ``b``, ``method`` or ``delta`` changed."""
        if self._weights is not None and self._weights_for == (self.k1, self.b, self.method, self.delta):
            return self._weights
        self._check_params()
        return self._build_weights()

    # ------------------------------------------------------------------------------------------- scoring

    def query_terms(self, query: str) -> np.ndarray:
        """Vocabulary ids of the query's tokens, duplicates kept, unknown tokens dropped."""
        vocab = self.vocab
        ids = [i for i in map(vocab.get, self.tokenize(query)) if i is not None]
        return np.array(ids, dtype=np.int64)

    def score_terms(self, terms: np.ndarray, term_weights: np.ndarray | None = None,
                    principal: Principal | None = None) -> np.ndarray:
        """Σ over ``terms`` (× ``term_weights``) of each chunk's BM25 weight, without the bm25l / bm25+ absent-term
        part; 0 for chunks sharing no term and for forbidden chunks (their postings are dropped before the sum)."""
        w = self.weights
        n = w.shape[0]
        if len(terms) == 0 or n == 0:
            return np.zeros(n)
        mask = self.table.mask(principal)
        indices, data, dense, slot = w.indices, w.data, self._dense, self._dense_slot
        tw = None if term_weights is None else np.asarray(term_weights, dtype=np.float64).tolist()
        add_at = np.add.at
        out = np.zeros(n)
        # One term at a time, in query order (a duplicated term counts again, as in the source): each chunk's sum
        # is then formed in the same order, to the same bits, as one bincount over all the query's postings.
        for i, (t, a, b) in enumerate(zip(terms.tolist(), w.indptr[terms].tolist(), w.indptr[terms + 1].tolist())):
            j = slot.get(t)
            if j is not None:  # a frequent term: one dense add
                col = dense[j] if tw is None else dense[j] * tw[i]
                if mask is None:
                    out += col
                else:  # forbidden chunks are never added to
                    np.add(out, col, out=out, where=mask)
                continue
            idx, val = indices[a:b], data[a:b]
            if tw is not None:
                val = val * tw[i]
            if mask is not None:
                keep = mask[idx]  # forbidden chunks are dropped before any score is summed
                idx, val = idx[keep], val[keep]
            add_at(out, idx, val)  # a column's rows are distinct: a plain scatter-add
        return out

    def _query(self, query: str, principal: Principal | None) -> tuple[np.ndarray, np.ndarray | None, float]:
        """``(terms, term weights or None, absent-term part)`` of the query to score, expanded by RM3 if on."""
        terms = self.query_terms(query)
        weights: np.ndarray | None = None
        if self.rm3 and len(terms):
            from .rm3 import rm3_expand

            terms, weights = rm3_expand(self, terms, principal)
        w = self.weights  # noqa: F841 - builds self.absent
        if self.method not in ("bm25l", "bm25+"):  # the only variants that score absent terms
            return terms, weights, 0.0
        absent = float(self.absent[terms].sum() if weights is None else (self.absent[terms] * weights).sum())
        return terms, weights, absent

    def score_all(self, query: str, principal: Principal | None = None) -> np.ndarray:
        """The summed BM25 weights of every chunk (0 for chunks sharing no term with the query and for forbidden
        chunks); the bm25l / bm25+ absent-term part, equal for every chunk, is left out."""
        terms, weights, _ = self._query(query, principal)
        return self.score_terms(terms, weights, principal)

    def score_rows(self, query: str, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of every readable chunk that shares a term with the query (row order)."""
        terms, weights, absent = self._query(query, principal)
        summed = self.score_terms(terms, weights, principal)
        # Every stored weight is > 0, so a positive sum means "shares a term with the query".
        rows = np.flatnonzero(summed)
        return rows, summed[rows] + absent

    def topk(self, query: str, k: int = 10, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)`` of the top ``k`` matching chunks as arrays (no :class:`Hit` objects); rows index
        ``self.table.chunks``."""
        check_k(k)
        terms, weights, absent = self._query(query, principal)
        summed = self.score_terms(terms, weights, principal)
        # Every stored weight is > 0, so only chunks sharing a term with the query have a positive sum.
        rows, scores = top_k(None, summed, k, positive=True)
        return rows, (scores + absent if absent else scores)

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> Hits:
        """The top ``k`` as a lazy :class:`~ragbench.retrieval.hits.Hits`: :meth:`topk`'s arrays, each Hit built
        on first read (``.rows`` / ``.scores`` give the arrays)."""
        rows, scores = self.topk(query, k, principal)
        return self.table.hits(rows, scores)
