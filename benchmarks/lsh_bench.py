"""LSH vs exact search vs faiss HNSW, side by side in one run: recall@10 against exact cosine, share of vectors
scored (LSH), queries per second (single thread for every system), index build time.

Data sets:
* ``synthetic``: N clustered 384-d unit vectors (``--clusters`` Gaussian centres, isotropic noise ``--noise``;
  the default noise 1.0 puts the 10th nearest neighbour of a query at cosine ≈ 0.54, the 1st at ≈ 0.58, similar
  to MiniLM query–passage similarities) and held-out queries drawn from the same clusters;
* ``scifact`` (with ``--store``): the all-MiniLM-L6-v2 document vectors of a BEIR store written by
  ``ragbench eval beir … --retriever dense`` and the split's queries embedded with the (cached) same model.

    python benchmarks/lsh_bench.py --n 100000 --store .ragbench/beir-beir_scifact.sqlite \
        --data /work/shared/data/beir_scifact --split train
"""
from __future__ import annotations

import argparse
import os
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

from ragbench.retrieval.base import Embedder  # noqa: E402
from ragbench.retrieval.dense import DenseRetriever, normalize_rows  # noqa: E402
from ragbench.retrieval.lsh import LshRetriever  # noqa: E402
from ragbench.schema import Chunk  # noqa: E402


class NoEmbedder(Embedder):
    """Vectors are given directly; queries are searched with ``search_vector``."""

    model_id, dim, sha256 = "given-vectors", 0, "0" * 64

    def embed(self, texts, show_progress=False):  # pragma: no cover - never called
        raise RuntimeError("vectors are given")


def clustered(n: int, dim: int, clusters: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    noisy = centres[rng.integers(0, clusters, n)] + noise * rng.standard_normal((n, dim)).astype(np.float32)
    return normalize_rows(noisy)


def scifact_vectors(store_path: str, data: str, split: str, model: str) -> tuple[np.ndarray, np.ndarray]:
    from ragbench.config import EmbeddingConfig
    from ragbench.eval.datasets import load_beir
    from ragbench.retrieval.embedding import make_embedder
    from ragbench.store import KnowledgeStore

    emb = make_embedder(EmbeddingConfig(model=model))
    with KnowledgeStore.open(store_path) as store:
        _, docs = store.embeddings(emb.model_id)
    if len(docs) == 0:
        raise SystemExit(f"no {emb.model_id} vectors in {store_path}; "
                         "run `ragbench eval beir … --retriever dense` first")
    queries = emb.embed(load_beir(data, split).queries["query"].tolist())
    return normalize_rows(docs), normalize_rows(queries)


def timed(fn, queries: np.ndarray) -> tuple[float, list]:
    t = time.perf_counter()
    out = [fn(q) for q in queries]
    return len(queries) / (time.perf_counter() - t), out


def interleaved(systems: dict, q: np.ndarray, block: int = 25) -> tuple[dict[str, float], dict[str, list]]:
    """Queries/s and results of each ``name → fn(vector)``, timed in alternating blocks of ``block`` queries
    (rotating the order), so every system sees the same background load on a shared CPU."""
    spent = {name: 0.0 for name in systems}
    out: dict[str, list] = {name: [] for name in systems}
    names = list(systems)
    for i, start in enumerate(range(0, len(q), block)):
        rot = i % len(names)
        for name in names[rot:] + names[:rot]:
            t = time.perf_counter()
            out[name].extend(systems[name](v) for v in q[start:start + block])
            spent[name] += time.perf_counter() - t
    return {name: len(q) / spent[name] for name in names}, out


def bench(name: str, x: np.ndarray, q: np.ndarray, configs: list[tuple[int, int, int, int]],
          hnsw_ef: list[int]) -> None:
    n = len(x)
    chunks = [Chunk(str(i), str(i), 0, 0, 0, "") for i in range(n)]
    rows: list[tuple[str, float, str, float, float]] = []
    t = time.perf_counter()
    exact = DenseRetriever(NoEmbedder()).index(chunks, vectors=x)
    builds = {"exact": time.perf_counter() - t}
    systems = {"exact": lambda v: exact.search_vector(v, 10)}
    labels = {"exact": "exact cosine (DenseRetriever)"}
    shares: dict[str, list[float]] = {}
    for tables, bits, probe, rerank in configs:
        key = f"{tables},{bits},{probe},{rerank}"
        t = time.perf_counter()
        lsh = LshRetriever(NoEmbedder(), tables=tables, bits=bits, multiprobe=probe, rerank=rerank).index(
            chunks, vectors=x)
        lsh.search_vector(q[0], 10)  # bucket arrays are built on first search: count them as build time
        builds[key] = time.perf_counter() - t
        shares[key] = []

        def one(v, lsh=lsh, key=key):
            hs = lsh.search_vector(v, 10)
            shares[key].append(lsh.last_candidates_scored)
            return hs

        systems[key] = one
        labels[key] = (f"LSH {tables} tables × {bits} bits, multiprobe {probe}"
                       + (f", Hamming pre-rank → {rerank}" if rerank else ""))
    qps, hits = interleaved(systems, q)
    truth = [{h.chunk_id for h in hs} for hs in hits["exact"]]

    def recall(found: list[set[str]]) -> float:
        return float(np.mean([len(f & t) / 10 for f, t in zip(found, truth)]))

    for key in systems:
        share = "100 %" if key == "exact" else f"{100 * np.mean(shares[key]):.1f} %"
        rows.append((labels[key], recall([{h.chunk_id for h in hs} for hs in hits[key]]), share, qps[key],
                     builds[key]))
    exact_qps = qps["exact"]

    if hnsw_ef:
        rows.extend(hnsw_rows(x, q, hnsw_ef, recall))
    print(f"\n{name}: {n} vectors × {x.shape[1]} dims, {len(q)} queries (single thread)")
    print("| system | recall@10 vs exact | vectors scored | queries/s | × exact | build s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, rec, share, speed, build in rows:
        print(f"| {label} | {rec:.3f} | {share} | {speed:.0f} | {speed / exact_qps:.1f} | {build:.1f} |")


def hnsw_rows(x: np.ndarray, q: np.ndarray, hnsw_ef: list[int], recall) -> list[tuple[str, float, str, float, float]]:
    """faiss IndexHNSWFlat (M = 32) rows, timed alone after the interleaved systems."""
    import faiss

    rows = []
    faiss.omp_set_num_threads(1)
    t = time.perf_counter()
    index = faiss.IndexHNSWFlat(x.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    index.add(x)
    build = time.perf_counter() - t
    for ef in hnsw_ef:
        index.hnsw.efSearch = ef
        speed, found = timed(lambda v: index.search(v[None, :], 10)[1][0], q)
        rows.append((f"faiss IndexHNSWFlat M=32, efSearch {ef} (timed alone)",
                     recall([{str(i) for i in h} for h in found]), "n/a", speed, build))
    return rows


def parse_configs(text: str) -> list[tuple[int, int, int, int]]:
    """``"tables,bits,multiprobe[,rerank]"`` items separated by ``;`` (rerank 0 = score every candidate)."""
    out = []
    for c in filter(str.strip, text.split(";")):
        v = [int(x) for x in c.split(",")]
        out.append((v[0], v[1], v[2], v[3] if len(v) > 3 else 0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--noise", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--configs", default="10,8,0;32,12,4;32,12,4,250",
                    help="LSH 'tables,bits,multiprobe[,rerank]' separated by ';'")
    ap.add_argument("--scifact-configs", default="10,8,0;10,8,2;16,10,3")
    ap.add_argument("--ef", default="32,64", help="HNSW efSearch values ('' = no HNSW rows)")
    ap.add_argument("--store", default=None, help="BEIR store with MiniLM vectors (adds the SciFact rows)")
    ap.add_argument("--data", default=None)
    ap.add_argument("--split", default="train")
    ap.add_argument("--model", default="minilm")
    args = ap.parse_args()
    ef = [int(v) for v in filter(None, args.ef.split(","))]
    if args.store:
        x, q = scifact_vectors(args.store, args.data, args.split, args.model)
        bench(f"SciFact ({args.split} queries, MiniLM vectors)", x, q, parse_configs(args.scifact_configs), ef)
    allx = clustered(args.n + args.queries, args.dim, args.clusters, args.noise, args.seed)
    x, q = allx[: args.n], allx[args.n:]
    sims = np.sort(q[:200] @ x.T, axis=1)
    print(f"synthetic: mean cosine of the 1st / 10th nearest neighbour {sims[:, -1].mean():.3f} / "
          f"{sims[:, -10].mean():.3f}")
    bench(f"synthetic clustered ({args.clusters} clusters, noise {args.noise}, seed {args.seed})", x, q,
          parse_configs(args.configs), ef)


if __name__ == "__main__":
    main()
