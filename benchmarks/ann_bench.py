"""Dense search at scale: exact cosine vs LSH vs faiss HNSW / IVF (ragbench.retrieval.ann.AnnRetriever) on N seeded
synthetic clustered 384-d unit vectors (the generator of benchmarks/lsh_bench.py): build time, index memory,
recall@10 against exact cosine, queries/s. Every search is single-threaded and goes through the retriever's
``search_vector`` (Hit records included); builds use ``--build-threads`` faiss threads.

Memory: "index MB" is the size of the structure beyond the float32 vectors every system keeps (faiss: the
serialised index minus n·d·4 bytes; LSH: codes and bucket arrays), "RSS +MB" the growth of the process's
resident set during the build (includes the retriever's own copy of the vectors).

    python benchmarks/ann_bench.py --n 1000000 --queries 200 --exact-queries 30

Systems are chosen by their options: an empty ``--lsh``, ``--hnsw`` or ``--ivf`` leaves that system out (exact
search always runs: it is the reference of the × exact column).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from lsh_bench import NoEmbedder, clustered  # noqa: E402

from ragbench.retrieval.dense import DenseRetriever  # noqa: E402
from ragbench.retrieval.lsh import LshRetriever  # noqa: E402
from ragbench.schema import Chunk  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def exact_truth(x: np.ndarray, q: np.ndarray, k: int = 10, block: int = 100_000) -> np.ndarray:
    """Row ids of the exact top k of every query (blocked matrix products)."""
    best_s = np.full((len(q), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(q), k), dtype=np.int64)
    for start in range(0, len(x), block):
        s = q @ x[start:start + block].T
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        cand_s = np.concatenate([best_s, np.take_along_axis(s, top, 1)], axis=1)
        cand_i = np.concatenate([best_i, top + start], axis=1)
        keep = np.argsort(-cand_s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(cand_s, keep, 1), np.take_along_axis(cand_i, keep, 1)
    return best_i


def measure(search, q: np.ndarray, truth: np.ndarray, k: int = 10) -> tuple[float, float]:
    """Recall@k and queries/s of ``search(vector, k) → hits`` over the queries ``q``."""
    t = time.perf_counter()
    found = [search(v, k) for v in q]
    qps = len(q) / (time.perf_counter() - t)
    rec = np.mean([len({int(h.chunk_id) for h in hs} & set(tr.tolist())) / k for hs, tr in zip(found, truth)])
    return float(rec), qps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="indexed vectors")
    ap.add_argument("--dim", type=int, default=384, help="vector dimension")
    ap.add_argument("--clusters", type=int, default=1000, help="Gaussian centres of the synthetic data")
    ap.add_argument("--noise", type=float, default=1.0, help="isotropic noise around the centres")
    ap.add_argument("--queries", type=int, default=200, help="held-out queries (recall and queries/s)")
    ap.add_argument("--exact-queries", type=int, default=30, help="queries timed for exact search (slow at 1M)")
    ap.add_argument("--seed", type=int, default=0, help="data seed")
    ap.add_argument("--lsh", default="32,12,4,250",
                    help="LSH 'tables,bits,multiprobe[,rerank]' separated by ';' ('' = none; rerank 0 = off)")
    ap.add_argument("--hnsw", default="16,40", help="HNSW 'M,efConstruction' separated by ';' ('' = none)")
    ap.add_argument("--ef", default="32,64,128", help="HNSW efSearch values swept on each HNSW index")
    ap.add_argument("--ivf", default="0", help="IVF nlist values (0 = √n; '' = none)")
    ap.add_argument("--nprobe", default="8,16,32", help="IVF nprobe values swept on each IVF index")
    ap.add_argument("--build-threads", type=int, default=2, help="faiss threads while building")
    args = ap.parse_args()

    t = time.perf_counter()
    allx = clustered(args.n + args.queries, args.dim, args.clusters, args.noise, args.seed)
    x, q = allx[: args.n], allx[args.n:]
    del allx
    truth = exact_truth(x, q)
    chunks = [Chunk(str(i), str(i), 0, 0, 0, "") for i in range(args.n)]
    print(f"data: {args.n} × {args.dim}, {args.queries} queries, seed {args.seed}; generated + exact truth in "
          f"{time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    rows: list[tuple] = []

    def report(label, rec, qps, build, index_mb, rss):
        rows.append((label, rec, qps, build, index_mb, rss))
        print(f"| {label} | {rec:.3f} | {qps:.1f} | {build:.1f} | {index_mb} | {rss} |", file=sys.stderr, flush=True)

    base = rss_mb()
    t = time.perf_counter()
    exact = DenseRetriever(NoEmbedder()).index(chunks, vectors=x)
    build = time.perf_counter() - t
    rec, qps = measure(exact.search_vector, q[: args.exact_queries], truth[: args.exact_queries])
    exact_qps = qps
    report("exact cosine (DenseRetriever)", rec, qps, build, "0", f"{rss_mb() - base:.0f}")
    del exact
    gc.collect()

    for spec in filter(None, args.lsh.split(";")):
        tables, bits, probe, *more = (int(v) for v in spec.split(","))
        rerank = more[0] if more else 0
        base = rss_mb()
        t = time.perf_counter()
        lsh = LshRetriever(NoEmbedder(), tables=tables, bits=bits, multiprobe=probe, rerank=rerank).index(
            chunks, vectors=x)
        lsh.search_vector(q[0], 10)  # the bucket arrays (and packed codes) are built on the first search
        build = time.perf_counter() - t
        starts, rows_ = lsh._buckets()
        extra = (lsh.codes.nbytes + starts.nbytes + rows_.nbytes
                 + (lsh._packed_codes().nbytes if rerank else 0)) / 2**20
        shares = []

        def one(v, k=10, lsh=lsh, shares=shares):
            hs = lsh.search_vector(v, k)
            shares.append(lsh.last_candidates_scored)
            return hs

        rec, qps = measure(one, q, truth)
        label = f"LSH {tables} × {bits} bits, multiprobe {probe}" + (f", Hamming pre-rank → {rerank}" if rerank
                                                                      else "")
        report(f"{label} (scored {100 * np.mean(shares):.2f} %)", rec, qps, build, f"{extra:.0f}",
               f"{rss_mb() - base:.0f}")
        del lsh, starts, rows_
        gc.collect()

    import faiss

    from ragbench.retrieval.ann import AnnRetriever

    def faiss_rows(label: str, make, sweep: str, values: list[int]) -> None:
        base = rss_mb()
        t = time.perf_counter()
        ann = make()
        ann.ensure_index()
        build = time.perf_counter() - t
        faiss.omp_set_num_threads(1)  # searches are single-threaded, like every other system's
        extra = (faiss.serialize_index(ann.faiss_index).nbytes - x.nbytes) / 2**20
        rss = rss_mb() - base
        for v in values:
            setattr(ann, sweep, v)
            rec, qps = measure(ann.search_vector, q, truth)
            report(f"{label}, {sweep} {v}", rec, qps, build, f"{extra:.0f}", f"{rss:.0f}")
        del ann
        gc.collect()

    for nlist in filter(None, args.ivf.split(",")):
        n_list = int(nlist) or int(np.sqrt(args.n))
        faiss_rows(f"faiss IVF-Flat nlist {n_list}", lambda n_list=n_list: AnnRetriever(
            NoEmbedder(), kind="ivf", nlist=n_list, threads=args.build_threads).index(chunks, vectors=x),
            "nprobe", [int(v) for v in args.nprobe.split(",")])
    for spec in filter(None, args.hnsw.split(";")):
        m, efc = (int(v) for v in spec.split(","))
        faiss_rows(f"faiss HNSW M={m}, efConstruction {efc}", lambda m=m, efc=efc: AnnRetriever(
            NoEmbedder(), kind="hnsw", m=m, ef_construction=efc, threads=args.build_threads).index(chunks, vectors=x),
            "ef_search", [int(v) for v in args.ef.split(",")])
    faiss.omp_set_num_threads(1)

    print(f"\nsynthetic clustered ({args.clusters} clusters, noise {args.noise}, seed {args.seed}): "
          f"{args.n:,} vectors × "
          f"{args.dim} dims, {args.queries} queries ({args.exact_queries} for exact search); single-thread search, "
          f"{args.build_threads}-thread faiss build")
    print("\n| system | recall@10 | queries/s | × exact | build s | index MB (beyond vectors) | RSS +MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, rec, qps, build, index_mb, rss in rows:
        print(f"| {label} | {rec:.3f} | {qps:,.1f} | {qps / exact_qps:,.1f} | {build:.1f} | {index_mb} | {rss} |")


if __name__ == "__main__":
    main()
