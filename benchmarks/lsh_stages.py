"""Where an LSH search spends its time: each candidate-generation stage of ``LshRetriever`` timed against the
alternative it replaced (or was chosen over), on the same index and queries, interleaved query by query so both
see the same background load. Milliseconds per query, single thread.

Stages (tables × bits × multiprobe as given; every variant yields the same rows):
* bucket lookup: binary search of the probe keys in the sorted key array vs the CSR offsets array (bits ≤ 16);
* de-duplication of the gathered ids: an n-sized boolean mask + ``flatnonzero`` vs ``np.unique``;
* Hamming pre-rank to ``--rerank``: int64 codes per table + ``argsort`` vs packed uint64 words + ``partition``;
* exact re-scoring of the kept rows and the whole ``search_vector`` (for scale).

    python benchmarks/lsh_stages.py --n 100000 --queries 200
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from lsh_bench import NoEmbedder, clustered  # noqa: E402

from ragbench.retrieval.dense import DenseRetriever, matvec  # noqa: E402
from ragbench.retrieval.lsh import LshRetriever  # noqa: E402
from ragbench.schema import Chunk  # noqa: E402


def ranges(rows: np.ndarray, lo: np.ndarray, lens: np.ndarray) -> np.ndarray:
    total = int(lens.sum())
    return rows[np.repeat(lo - (np.cumsum(lens) - lens), lens) + np.arange(total)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--lsh", default="32,12,4", help="'tables,bits,multiprobe' (bits ≤ 16)")
    ap.add_argument("--rerank", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tables, bits, probe = (int(v) for v in args.lsh.split(","))
    allx = clustered(args.n + args.queries, 384, 1000, 1.0, args.seed)
    x, q = allx[: args.n], allx[args.n:]
    chunks = [Chunk(str(i), str(i), 0, 0, 0, "") for i in range(args.n)]
    lsh = LshRetriever(NoEmbedder(), tables=tables, bits=bits, multiprobe=probe, rerank=args.rerank).index(
        chunks, vectors=x)
    exact = DenseRetriever(NoEmbedder()).index(chunks, vectors=x)
    starts, rows = lsh._buckets()
    lsh._packed_codes()  # built before timing, as a first search would
    # the structure the bucket lookup used before: every entry's key, sorted, with its row
    keys = ((np.arange(tables, dtype=np.int64)[None, :] << bits) | lsh.codes).T.reshape(-1)
    order = np.argsort(keys, kind="stable")
    sorted_keys, sorted_rows = keys[order], (order % args.n).astype(np.int64)
    table_ids = np.arange(tables, dtype=np.int64)[None, :] << bits

    def search_sorted(codes):
        p = np.sort(table_ids | codes, axis=None)
        lo = np.searchsorted(sorted_keys, p, side="left")
        return ranges(sorted_rows, lo, np.searchsorted(sorted_keys, p, side="right") - lo)

    def search_csr(codes):
        p = (table_ids | codes).reshape(-1)
        lo = starts[p]
        return ranges(rows, lo, starts[p + 1] - lo)

    def dedupe_mask(found):
        hit = np.zeros(args.n, dtype=bool)
        hit[found] = True
        return np.flatnonzero(hit)

    def hamming_int64(cand, codes):
        ham = np.bitwise_count(lsh.codes[cand] ^ codes[0]).sum(axis=1)
        return np.sort(cand[np.argsort(ham, kind="stable")[: args.rerank]])

    stages = {
        "bucket lookup: searchsorted on sorted keys": lambda c, f, d, v: search_sorted(c),
        "bucket lookup: CSR offsets": lambda c, f, d, v: search_csr(c),
        "dedupe: boolean mask": lambda c, f, d, v: dedupe_mask(f),
        "dedupe: np.unique": lambda c, f, d, v: np.unique(f),
        "Hamming pre-rank: int64 codes + argsort": lambda c, f, d, v: hamming_int64(d, c),
        "Hamming pre-rank: packed uint64 + partition": lambda c, f, d, v: lsh.hamming_nearest(d, c[0], args.rerank),
        "exact re-score of the kept rows": lambda c, f, d, v: matvec(x[d[: args.rerank]], v),
        "whole LSH search_vector": lambda c, f, d, v: lsh.search_vector(v, 10),
        "exact search_vector (all rows)": lambda c, f, d, v: exact.search_vector(v, 10),
    }
    spent = dict.fromkeys(stages, 0.0)
    names = list(stages)
    sizes = []
    for i, v in enumerate(q):
        codes = lsh.probe_codes(v)
        found = search_csr(codes)
        cand = dedupe_mask(found)
        assert np.array_equal(np.sort(search_sorted(codes)), np.sort(found))
        assert np.array_equal(np.unique(found), cand)
        assert np.array_equal(hamming_int64(cand, codes), lsh.hamming_nearest(cand, codes[0], args.rerank))
        sizes.append((len(found), len(cand)))
        rot = i % len(names)
        for name in names[rot:] + names[:rot]:
            t = time.perf_counter()
            stages[name](codes, found, cand, v)
            spent[name] += time.perf_counter() - t
    ids, distinct = np.mean(sizes, axis=0)
    print(f"\n{args.n:,} vectors × 384, LSH {tables} × {bits} bits, multiprobe {probe}, pre-rank → {args.rerank}; "
          f"{args.queries} queries: {ids:,.0f} bucket entries gathered, {distinct:,.0f} distinct candidates")
    print("\n| stage | ms / query |\n|---|---:|")
    for name in names:
        print(f"| {name} | {1000 * spent[name] / len(q):.3f} |")


if __name__ == "__main__":
    main()
