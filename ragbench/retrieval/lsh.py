"""Random-hyperplane LSH (the EE-RAG source's EmbeddingDatabaseNew index, seed-behaviour 1.7/1.9), re-scored exactly.

* ``tables`` × ``bits`` Gaussian hyperplanes drawn from ``np.random.default_rng(seed)`` (the source uses .NET's
  ``System.Random(42)``, which numpy cannot reproduce; the properties are the same).
* A table's code packs its bits MSB first (bit j set when the projection on hyperplane j is > 0), as the source.
* Multi-probe (``multiprobe = m > 0``): per table, the m bits whose projections are closest to 0 (smallest
  |projection|, the least confident ones) are flipped in every combination, so each table probes 2^m buckets
  (the query's own included). The source probes only the query's bucket (m = 0).
* Candidates (union over tables and probes) are filtered by the principal's ACL mask, then re-scored by exact
  cosine; :attr:`LshRetriever.last_candidates_scored` is the share of indexed vectors the last search scored.
  Unlike the source, every candidate is re-scored (the source kept only the first topK·2 candidate ids).
* Hamming pre-ranking (``rerank = r > 0``): when there are more than r candidates, they are first ranked by the
  Hamming distance between their tables × bits sign bits and the query's (SimHash: the share of differing bits
  estimates angle / π), and only the r closest are re-scored by exact cosine. The codes are packed into
  ceil(tables·bits / 64) uint64 words per row, so a candidate's distance gathers e.g. 48 bytes (32 × 12 bits)
  instead of its dim × 4-byte vector; the r nearest are chosen by partition, not a full sort.
* Buckets: with bits ≤ 16 every table's bucket is a slice of one row array through a CSR offsets array
  (2^bits + 1 offsets per table, built with an O(n) radix sort of the 16-bit codes), so a probe is two reads;
  wider codes fall back to binary search in the sorted keys. Candidates are de-duplicated through an n-sized mask.
* Defaults are the source's 10 × 8 without multi-probe. On 100,000 clustered 384-d vectors, 32 tables × 12 bits
  with multiprobe 4 reach recall@10 0.965 while scoring 12.4 % of the vectors, and with ``rerank`` 250 the same
  recall scoring 0.25 %, several times faster than exact search (docs/benchmarks.md, "LSH"); on
  5,183 MiniLM SciFact vectors LSH saves little over exact search (their query–document cosines are low and
  close together), so use ``dense`` there.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..schema import Principal
from .base import Embedder
from .dense import DenseRetriever, matvec

#: codes up to this many bits index their buckets directly (2^bits + 1 offsets per table) instead of by search
_DIRECT_BITS = 16


class LshRetriever(DenseRetriever):
    """Approximate cosine search: hash into ``tables`` bucket maps, re-score the candidates exactly."""

    name = "lsh"

    def __init__(self, embedder: Embedder, tables: int = 10, bits: int = 8, multiprobe: int = 0,
                 seed: int = 42, rerank: int = 0) -> None:
        super().__init__(embedder)
        self.tables = tables
        self.bits = bits
        self.multiprobe = multiprobe
        self.seed = seed
        self.rerank = rerank
        self.planes: np.ndarray | None = None
        self.codes = np.empty((0, 0), dtype=np.int64)  # (n, tables)
        # search structures, rebuilt lazily after indexing/adding: (bucket starts or sorted keys, rows) and the
        # codes' bits packed into uint64 words per row (for the Hamming pre-rank)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        self._packed: np.ndarray | None = None
        self.last_candidates_scored = 0.0

    def _check_params(self) -> None:
        for name, value, lo, hi in (("tables", self.tables, 1, 1024), ("bits", self.bits, 1, 48),
                                    ("multiprobe", self.multiprobe, 0, min(self.bits, 12)),
                                    ("rerank", self.rerank, 0, 2**31)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
                raise ConfigError(f"lsh {name} must be an integer in [{lo}, {hi}], found {value!r}. "
                                  f"Fix: e.g. tables=10, bits=8, multiprobe between 0 and bits.")

    def index(self, chunks, acls=None, titles=None, show_progress=False, vectors=None) -> "LshRetriever":
        self._check_params()
        return super().index(chunks, acls, titles, show_progress, vectors)  # type: ignore[return-value]

    def add(self, chunks, acls=None, titles=None, show_progress=False, vectors=None) -> "LshRetriever":
        self._check_params()
        return super().add(chunks, acls, titles, show_progress, vectors)  # type: ignore[return-value]

    # ------------------------------------------------------------------------------------------- hashing

    def _ensure_planes(self, dim: int) -> np.ndarray:
        if self.planes is None or self.planes.shape[1] != dim:
            rng = np.random.default_rng(self.seed)
            self.planes = rng.standard_normal((self.tables * self.bits, dim)).astype(np.float32)
        return self.planes

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """Projections on every hyperplane, shaped ``(n, tables, bits)``."""
        planes = self._ensure_planes(vectors.shape[1])
        return (vectors @ planes.T).reshape(len(vectors), self.tables, self.bits)

    def _bits_to_codes(self, bits: np.ndarray) -> np.ndarray:
        """``(..., bits)`` booleans → ``(...)`` int64 codes, the first bit most significant."""
        codes = np.zeros(bits.shape[:-1], dtype=np.int64)
        for j in range(self.bits):  # shift-or per bit: no (..., bits) int64 temporary
            codes <<= 1
            codes |= bits[..., j]
        return codes

    def hash(self, vectors: np.ndarray, block: int = 16384) -> np.ndarray:
        """Bucket code of each vector in each table, ``(n, tables)`` int64 (in blocks of rows, so the
        projections of a million vectors never sit in memory at once)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        out = np.empty((len(vectors), self.tables), dtype=np.int64)
        for start in range(0, len(vectors), block):
            out[start:start + block] = self._bits_to_codes(self.project(vectors[start:start + block]) > 0)
        return out

    def _on_reset(self) -> None:
        self.planes = None
        self.codes = np.empty((0, self.tables), dtype=np.int64)
        self._sorted = self._packed = None

    def _on_vectors_added(self, count: int) -> None:
        new = self.vectors[len(self.vectors) - count:]
        if len(self.codes) == 0:
            self.codes = np.empty((0, self.tables), dtype=np.int64)
        self.codes = np.concatenate([self.codes, self.hash(new)])
        self._sorted = self._packed = None  # rebuilt lazily on the next search

    def _buckets(self) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, rows)``: ``rows`` lists every table's rows grouped by bucket (tables in order, codes
        ascending within a table, rows ascending within a bucket). With ``bits`` ≤ 16, ``starts`` is a CSR offsets
        array: bucket ``key = table << bits | code`` is ``rows[starts[key]:starts[key + 1]]``, so a probe is two
        array reads. Wider codes would need 2^bits offsets per table; ``starts`` is then the sorted key of every
        entry of ``rows``, searched by binary search."""
        if self._sorted is None:
            n = len(self.codes)
            row_type = np.int32 if n < 2**31 else np.int64  # halves the memory moved per candidate
            if self.bits <= _DIRECT_BITS:
                rows = np.empty(n * self.tables, dtype=row_type)
                counts = np.empty((self.tables, 1 << self.bits), dtype=np.int64)
                for t in range(self.tables):
                    code = self.codes[:, t].astype(np.uint16)
                    # stable (radix) sort of 16-bit codes: rows stay ascending within a bucket, O(n)
                    rows[t * n:(t + 1) * n] = np.argsort(code, kind="stable")
                    counts[t] = np.bincount(code, minlength=1 << self.bits)
                starts = np.concatenate([[0], np.cumsum(counts.reshape(-1))])
                self._sorted = (starts, rows)
            else:
                keys = (np.arange(self.tables, dtype=np.int64)[None, :] << self.bits) | self.codes  # (n, tables)
                keys = keys.T.reshape(-1)  # table-major: entry j is row j % n of table j // n
                order = np.argsort(keys, kind="stable")
                self._sorted = (keys[order], (order % max(n, 1)).astype(row_type))
        return self._sorted

    def pack(self, codes: np.ndarray) -> np.ndarray:
        """Each row's ``tables × bits`` code bits, concatenated into ceil(tables·bits / 64) uint64 words
        (table t's code at bit offset t·bits), so a Hamming distance is a few XOR + popcount words."""
        words = -(-self.tables * self.bits // 64)
        out = np.zeros((len(codes), words), dtype=np.uint64)
        c = codes.astype(np.uint64)
        for t in range(self.tables):
            w, shift = divmod(t * self.bits, 64)
            out[:, w] |= c[:, t] << np.uint64(shift)  # bits shifted past 64 spill into the next word below
            if shift + self.bits > 64:
                out[:, w + 1] |= c[:, t] >> np.uint64(64 - shift)
        return out

    def _packed_codes(self) -> np.ndarray:
        if self._packed is None:
            self._packed = self.pack(self.codes)
        return self._packed

    def probe_codes(self, qvec: np.ndarray) -> np.ndarray:
        """``(2**multiprobe, tables)`` bucket codes to visit; row 0 is the query's own bucket in each table."""
        proj = self.project(qvec[None, :])[0]  # (tables, bits)
        base = self._bits_to_codes(proj > 0)
        m = self.multiprobe
        if m == 0:
            return base[None, :]
        weak = np.argsort(np.abs(proj), axis=1, kind="stable")[:, :m]  # (tables, m) least confident bit positions
        bit_values = np.left_shift(np.int64(1), (self.bits - 1 - weak).astype(np.int64))
        subsets = ((np.arange(2 ** m)[:, None] >> np.arange(m)[None, :]) & 1).astype(np.int64)  # (2^m, m)
        flips = subsets @ bit_values.T  # distinct bits, so the sum is their XOR
        return base[None, :] ^ flips

    def candidate_rows(self, qvec: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
        """Ascending rows sharing a probed bucket with the query in at least one table (``codes``: the query's
        :meth:`probe_codes`, when already computed)."""
        starts, rows = self._buckets()
        codes = self.probe_codes(qvec) if codes is None else codes
        probes = ((np.arange(self.tables, dtype=np.int64)[None, :] << self.bits) | codes).reshape(-1)
        if self.bits <= _DIRECT_BITS:
            lo = starts[probes]
            lens = starts[probes + 1] - lo
        else:
            probes = np.sort(probes)  # distinct keys (distinct flip sets); sorted for cache-friendly search
            lo = np.searchsorted(starts, probes, side="left")
            lens = np.searchsorted(starts, probes, side="right") - lo
        total = int(lens.sum())
        if not total:
            return np.empty(0, dtype=np.int64)
        # concatenate the ranges [lo, lo + len) without a Python loop
        found = rows[np.repeat(lo - (np.cumsum(lens) - lens), lens) + np.arange(total)]
        # de-duplicate through an n-sized mask: one pass over ~tables × candidates ids, where sorting them
        # (np.unique) costs several times more at 100k vectors (docs/benchmarks.md, "LSH")
        hit = np.zeros(len(self.table), dtype=bool)
        hit[found] = True
        return np.flatnonzero(hit)

    def candidates(self, qvec: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of the rows sharing a probed bucket with the query in at least one table
        (``codes``: the query's :meth:`probe_codes`, when already computed)."""
        hit = np.zeros(len(self.table), dtype=bool)
        hit[self.candidate_rows(qvec, codes)] = True
        return hit

    def hamming_nearest(self, rows: np.ndarray, query_codes: np.ndarray, r: int) -> np.ndarray:
        """The ``r`` of the ascending ``rows`` whose codes differ from ``query_codes`` (``(tables,)``) in the
        fewest bits, ascending; ties at the cut go to the lower rows (as a stable sort by distance would)."""
        if len(rows) <= r:
            return rows
        diff = np.bitwise_count(self._packed_codes().take(rows, axis=0) ^ self.pack(query_codes[None, :]))
        dist = diff[:, 0].astype(np.int32)
        for w in range(1, diff.shape[1]):  # a loop over the few words beats sum(axis=1) on a short inner axis
            dist += diff[:, w]
        cut = np.partition(dist, r - 1)[r - 1]  # the r-th smallest distance
        keep = dist < cut
        keep[np.flatnonzero(dist == cut)[: r - int(np.count_nonzero(keep))]] = True
        return rows[keep]

    # ------------------------------------------------------------------------------------------- scoring

    def score_rows(self, qvec: np.ndarray, principal: Principal | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosine)`` of the readable candidates; forbidden rows are removed before re-scoring."""
        codes = self.probe_codes(qvec)
        rows = self.candidate_rows(qvec, codes)
        mask = self.table.mask(principal)
        if mask is not None:
            rows = rows[mask[rows]]  # forbidden rows are dropped before any distance, Hamming or cosine
        if self.rerank:
            rows = self.hamming_nearest(rows, codes[0], self.rerank)
        self.last_candidates_scored = len(rows) / len(self.table) if len(self.table) else 0.0
        return rows, matvec(self.vectors[rows], qvec)
