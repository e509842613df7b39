"""BM25 quality and speed, side by side in one run: ragbench BM25Retriever vs bm25s (Lucene variant) vs rank-bm25
(BM25Okapi) on a BEIR folder, with the same tokens (the retriever's tokenizer: stop words kept; ``--stemmer``
none by default) and k1 = 1.5, b = 0.75.

Documents are ``title + " " + text``. Quality: nDCG@10 / R@100 of the top-100 run (ragbench.eval.metrics,
trec_eval-equal). Speed: queries per second of one pass over the split's queries, single process, query
tokenisation included for every system, timed in interleaved blocks of 25 queries so that every system sees the
same background load (the CPU is shared); bm25s runs its sequential path (``n_threads=0``). ``search()`` returns a
lazy ``Hits`` (each Hit built on first read), so it is timed as returned, with its first 10 hits read, and with
every hit read (``list(hits)``: what an eager list of Hits cost). ``--hit-costs`` adds a breakdown of a full read
at k = 100 (Hit building, garbage collector).

    python benchmarks/bm25_bench.py /work/shared/data/beir_scifact --split train
"""
from __future__ import annotations

import argparse
import gc
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

from ragbench.eval.beir import beir_documents
from ragbench.eval.datasets import load_beir
from ragbench.eval.metrics import aggregate, evaluate
from ragbench.retrieval.bm25 import BM25Retriever
from ragbench.schema import Chunk

K1, B = 1.5, 0.75


def interleaved_qps(systems: dict, queries: list[str], repeats: int, block: int = 25) -> dict[str, float]:
    """Queries/second of each ``name → fn(list_of_queries)``, timed in alternating blocks of ``block`` queries
    (rotating the order), so every system sees the same background load on a shared CPU."""
    spent = {name: 0.0 for name in systems}
    names = list(systems)
    for rep in range(repeats):
        for i, start in enumerate(range(0, len(queries), block)):
            batch = queries[start:start + block]
            rot = (i + rep) % len(names)
            for name in names[rot:] + names[:rot]:
                t = time.perf_counter()
                systems[name](batch)
                spent[name] += time.perf_counter() - t
    return {name: repeats * len(queries) / spent[name] for name in names}


def run_table(qids, doc_ids, rows_per_query, scores_per_query) -> pd.DataFrame:
    recs = []
    for qid, rows, scores in zip(qids, rows_per_query, scores_per_query):
        for rank, (r, s) in enumerate(zip(rows, scores)):
            recs.append((qid, doc_ids[r] if not isinstance(r, str) else r, float(s), rank))
    return pd.DataFrame(recs, columns=["qid", "docno", "score", "rank"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--split", default="train")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-rank-bm25", action="store_true")
    ap.add_argument("--stemmer", default="none", help="none (the source's tokens) or a Snowball algorithm (english)")
    ap.add_argument("--hit-costs", action="store_true",
                    help="also break a full read of search() at k=100 down: Hit building, garbage collector")
    ap.add_argument("--gc-freeze", action="store_true",
                    help="gc.freeze() once every index is built, before the timing (as a long-running server may)")
    args = ap.parse_args()

    ds = load_beir(args.data_dir, args.split)
    docs = beir_documents(ds.corpus)
    doc_ids = [d.doc_id for d in docs]
    qids, queries = ds.queries["qid"].tolist(), ds.queries["query"].tolist()
    measures = ("nDCG@10", "R@100")
    results: list[dict] = []

    # ---- ragbench
    chunks = [Chunk(d.doc_id, d.doc_id, 0, 0, len(d.text), d.text) for d in docs]
    t = time.perf_counter()
    ours = BM25Retriever(K1, B, stemmer=args.stemmer).index(chunks)
    ours.weights  # noqa: B018 - the weight matrix is built on first use; count it as indexing
    t_index = time.perf_counter() - t
    hits = [ours.search(q, 100) for q in queries]
    m = aggregate(evaluate(run_table(qids, doc_ids, [[h.doc_id for h in hs] for hs in hits],
                                     [[h.score for h in hs] for hs in hits]), ds.qrels, measures))
    results.append({"system": "ragbench BM25Retriever", **m})
    del hits  # 80,900 evaluation Hits kept alive would be scanned by every full garbage collection while timing

    # ---- bm25s (Lucene idf and tf saturation = ours up to the constant (k1 + 1) factor)
    import bm25s

    tokenize = ours.tokenize  # the same tokens (stemmed or not) for every system
    corpus_tokens = [tokenize(d.text) for d in docs]
    ref = bm25s.BM25(k1=K1, b=B, method="lucene")
    t = time.perf_counter()
    ref.index(corpus_tokens, show_progress=False)
    t_index_bm25s = time.perf_counter() - t

    def bm25s_run(batch, k):
        # n_threads=0 is bm25s's sequential path, in this thread; n_threads=1 hands every call to a one-worker
        # thread pool, whose hand-offs cost ~3x under CPU contention (and made bm25s look slower than it is)
        return ref.retrieve([tokenize(q) for q in batch], k=k, show_progress=False, n_threads=0)

    rows, scores = bm25s_run(queries, 100)
    # bm25s fills k with score-0 documents; drop them, as ours ranks only documents sharing a term
    keep = [[(r, s) for r, s in zip(rr, ss) if s > 0] for rr, ss in zip(rows.tolist(), scores.tolist())]
    m = aggregate(evaluate(run_table(qids, doc_ids, [[r for r, _ in x] for x in keep],
                                     [[s for _, s in x] for x in keep]), ds.qrels, measures))
    results.append({"system": f"bm25s {bm25s.__version__} (lucene, numpy backend)", **m})

    # ---- rank-bm25 (Okapi; its idf floors negative idf at 0.25·mean idf, so scores differ slightly)
    corpus_okapi = None
    if not args.skip_rank_bm25:
        from rank_bm25 import BM25Okapi

        corpus_okapi = BM25Okapi(corpus_tokens, k1=K1, b=B)

        def okapi_run(batch, k):
            rows, scores = [], []
            for q in batch:
                s = corpus_okapi.get_scores(tokenize(q))
                top = np.argpartition(-s, k)[:k]
                top = top[np.argsort(-s[top], kind="stable")]
                top = top[s[top] > 0]
                rows.append(top.tolist())
                scores.append(s[top].tolist())
            return rows, scores

        rows, scores = okapi_run(queries, 100)
        m = aggregate(evaluate(run_table(qids, doc_ids, rows, scores), ds.qrels, measures))
        results.append({"system": "rank-bm25 BM25Okapi", **m})

    # ---- speed, interleaved (the load average is printed: on a shared CPU read ratios, not absolute speeds)
    if args.gc_freeze:
        # What a long-running process does once its indexes are built: move every object alive now to the
        # permanent generation, so full collections stop rescanning the libraries, the corpus and both indexes.
        import gc

        gc.collect()
        gc.freeze()
    load_before = os.getloadavg()[0]
    qps: dict[str, dict[str, float]] = {}
    for k in (10, 100):
        qps[str(k)] = interleaved_qps({
            "ours-arrays": lambda b, k=k: [ours.topk(q, k) for q in b],
            "ours-lazy": lambda b, k=k: [ours.search(q, k) for q in b],
            "ours-read10": lambda b, k=k: [[h.chunk_id for h in ours.search(q, k)[:10]] for q in b],
            "ours-list": lambda b, k=k: [list(ours.search(q, k)) for q in b],
            "bm25s": lambda b, k=k: bm25s_run(b, k),
        }, queries, args.repeats)
    okapi_qps = None
    if corpus_okapi is not None:  # far slower: a separate, short measurement
        sample = queries[:100]
        t = time.perf_counter()
        okapi_run(sample, 100)
        okapi_qps = len(sample) / (time.perf_counter() - t)

    print(f"BEIR {ds.name} / {args.split}: {len(docs)} documents, {len(queries)} queries; k1={K1}, b={B}; "
          f"index build: ragbench {t_index:.2f} s, bm25s {t_index_bm25s:.2f} s (tokenised corpus given)")
    print("\n| system | nDCG@10 | R@100 |\n|---|---:|---:|")
    for r in results:
        print(f"| {r['system']} | {r['nDCG@10']:.4f} | {r['R@100']:.4f} |")
    print(f"\n1-minute load average {load_before:.1f} before the timing, {os.getloadavg()[0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    print(f"\n| queries/s (interleaved, {args.repeats} passes) | k=10 | k=100 |\n|---|---:|---:|")
    for name, label in (("ours-arrays", "ragbench BM25Retriever.topk (arrays)"),
                        ("ours-lazy", "ragbench BM25Retriever.search (lazy Hits, as returned)"),
                        ("ours-read10", "ragbench search(), first 10 hits read"),
                        ("ours-list", "ragbench list(search()) (every hit read)"),
                        ("bm25s", "bm25s retrieve (arrays)")):
        print(f"| {label} | {qps['10'][name]:.0f} | {qps['100'][name]:.0f} |")
    print("\nratio to bm25s (k=10 / k=100): " + ", ".join(
        f"{name} {qps['10'][name] / qps['10']['bm25s']:.2f} / {qps['100'][name] / qps['100']['bm25s']:.2f}"
        for name in ("ours-arrays", "ours-lazy", "ours-read10", "ours-list")))
    if okapi_qps is not None:
        print(f"| rank-bm25 get_scores + argpartition (100 queries) | | {okapi_qps:.0f} |")
    if args.hit_costs:
        hit_costs(ours, queries, bm25s_run, args.repeats)


def hit_costs(ours: BM25Retriever, queries: list[str], bm25s_run, repeats: int, k: int = 100) -> None:
    """Where a full read of ``search()`` costs at ``k``: µs per query of the array query, of ``list(search())``, of
    the same rows turned into Hits by the dataclass constructor and into bare 3-tuples (interleaved with bm25s),
    then the time the garbage collector spends during ``list(search())`` (``gc.callbacks``), results kept in blocks
    of 25 as above."""
    from ragbench.schema import Hit

    fields = ours.table._fields

    def plain(rows, scores):
        return [Hit(f[0], f[1], s, rank, f[2], f[3], f[4], f[5])
                for rank, (f, s) in enumerate(zip(map(fields.__getitem__, rows.tolist()), scores.tolist()))]

    def tuples(rows, scores):
        return [(fields[r], s, rank) for rank, (r, s) in enumerate(zip(rows.tolist(), scores.tolist()))]

    qps = interleaved_qps({
        "topk()": lambda b: [ours.topk(q, k) for q in b],
        "list(search())": lambda b: [list(ours.search(q, k)) for q in b],
        "topk() + Hit(...) constructor": lambda b: [plain(*ours.topk(q, k)) for q in b],
        "topk() + 3-tuples": lambda b: [tuples(*ours.topk(q, k)) for q in b],
        "bm25s": lambda b: bm25s_run(b, k),
    }, queries, repeats)
    print(f"\nµs per query at k={k} (interleaved, {repeats} passes): "
          + ", ".join(f"{name} {1e6 / v:.0f}" for name, v in qps.items()))
    spent = [0.0, 0.0, 0.0]
    count = [0, 0, 0]
    started = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[info["generation"]] += time.perf_counter() - started[0]
            count[info["generation"]] += 1

    gc.callbacks.append(on_gc)
    try:
        t = time.perf_counter()
        for _ in range(repeats):
            for start in range(0, len(queries), 25):
                [list(ours.search(q, k)) for q in queries[start:start + 25]]
        total = time.perf_counter() - t
    finally:
        gc.callbacks.remove(on_gc)
    n = repeats * len(queries)
    print(f"list(search()) alone: {1e6 * total / n:.0f} µs per query, of which the garbage collector "
          f"{1e6 * sum(spent) / n:.0f} µs (generations 0/1/2: {count[0]}/{count[1]}/{count[2]} collections, "
          + "/".join(f"{1e6 * x / n:.1f}" for x in spent) + f" µs per query; {len(gc.get_objects())} tracked objects)")


if __name__ == "__main__":
    main()
