"""Choose the hybrid fusion (RRF / query-adaptive / convex combination) by held-out confirmation: k folds of a BEIR
split (SciFact train) and every golden set given, each as its own held-out check.

Every configuration runs through :class:`ragbench.retrieval.fusion.HybridRetriever` over memoised BM25 and dense
candidate lists (both parts are searched once per query and principal; fusing is what varies). SciFact: one chunk
per document (``title + " " + text``), MiniLM vectors read from a store written by ``ragbench eval beir …
--retriever dense``; nDCG@10 per query, then :func:`ragbench.eval.cv.cross_validate` (select on k − 1 folds,
score on the last). Golden sets: the default chunking, each question asked as its principal, nDCG@5.

    python benchmarks/fusion_cv.py /work/shared/data/beir_scifact --store .ragbench/beir-beir_scifact.sqlite \
        --golden data/golden --out runs/fusion_cv
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.eval.cv import cross_validate, kfold_groups
from ragbench.eval.metrics import evaluate
from ragbench.retrieval.base import Retriever
from ragbench.retrieval.fusion import HybridRetriever
from ragbench.schema import hits_to_run

BASELINE = "rrf k60"


def configurations() -> dict[str, dict[str, Any]]:
    """Fusion settings (``fusion.*`` fields); the first is the baseline (listed first: it wins ties)."""
    out: dict[str, dict[str, Any]] = {BASELINE: {}}
    for k in (20, 60, 100):
        for p in (0, 1, 2):
            out[f"rrf k{k}" + (f" adaptive {p}" if p else "")] = {"rrf_k": k, "adaptive": float(p)}
    out["rrf k60 dense×1.5"] = {"dense_weight": 1.5}
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        for p in (0, 1):
            out[f"convex α={alpha}" + (f" adaptive {p}" if p else "")] = {
                "method": "convex", "keyword_weight": round(1 - alpha, 2), "dense_weight": alpha,
                "adaptive": float(p)}
    return out


class Memo(Retriever):
    """A retriever whose results are computed once per (query, principal) at ``depth`` and sliced after."""

    def __init__(self, inner: Retriever, depth: int) -> None:
        self.inner, self.depth, self.name = inner, depth, inner.name
        self.cache: dict[tuple[str, Any], list] = {}

    def index(self, chunks, acls=None, titles=None, show_progress=False):  # pragma: no cover - pre-indexed
        raise NotImplementedError

    def search(self, query, k=10, principal=None):
        key = (query, None if principal is None else principal.user_id)
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = self.inner.search(query, max(k, self.depth), principal)
        return got[:k]


def per_query(kw: Memo, dn: Memo, cfg: RagbenchConfig, queries: pd.DataFrame, qrels: pd.DataFrame, k: int,
              measure: str, principals: dict[str, Any] | None = None) -> pd.Series:
    f = cfg.fusion
    hyb = HybridRetriever(kw, dn, rrf_k=f.rrf_k, candidate_k=f.candidate_k, keyword_weight=f.keyword_weight,
                          dense_weight=f.dense_weight,
                          adaptive=f.adaptive, method=f.method)
    rows = []
    for qid, q in zip(queries["qid"].astype(str), queries["query"].astype(str)):
        hits = hyb.search(q, k * 4, (principals or {}).get(qid))
        rows.extend(hits_to_run(qid, hits)[:k])
    run = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
    pq = evaluate(run, qrels, [measure]).set_index("qid")["value"]
    return pq.reindex(queries["qid"].astype(str)).fillna(0.0)


def scifact_parts(data: str, split: str, store_path: str, cfg: RagbenchConfig) -> tuple[Memo, Memo, Any]:
    from ragbench.eval.datasets import load_beir
    from ragbench.retrieval.dense import DenseRetriever
    from ragbench.retrieval.embedding import make_embedder
    from ragbench.retrieval.retriever import make_retriever
    from ragbench.store import KnowledgeStore

    ds = load_beir(data, split)
    emb = make_embedder(cfg.embedding)
    with KnowledgeStore.open(store_path) as store:
        chunks = store.chunks()
        ids, vectors = store.embeddings(emb.model_id, [c.chunk_id for c in chunks])
    if len(ids) != len(chunks) or len(chunks) != len(ds.corpus):
        raise SystemExit(f"{store_path} holds {len(ids)} {emb.model_id} vectors for {len(chunks)} chunks of "
                         f"{len(ds.corpus)} documents; run `ragbench eval beir … --retriever dense --store …` first")
    order = {c: i for i, c in enumerate(ids)}
    vectors = vectors[[order[c.chunk_id] for c in chunks]]
    bm25 = make_retriever("bm25", cfg).index(chunks)
    dense = DenseRetriever(emb).index(chunks, vectors=vectors)
    return Memo(bm25, cfg.fusion.candidate_k), Memo(dense, cfg.fusion.candidate_k), ds


def golden_parts(folder: str, cfg: RagbenchConfig) -> tuple[Memo, Memo, Any]:
    from ragbench.eval.golden_run import build_retrievers
    from ragbench.eval.golden import load_golden

    golden = load_golden(folder)
    r = build_retrievers(golden, cfg, ["bm25", "dense"])
    return Memo(r["bm25"], cfg.fusion.candidate_k), Memo(r["dense"], cfg.fusion.candidate_k), golden


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--split", default="train")
    ap.add_argument("--store", required=True, help="BEIR store with the MiniLM document vectors")
    ap.add_argument("--golden", action="append", default=[], help="golden set folder (repeatable)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[],
                    help="config override for the parts, e.g. bm25.stemmer=english")
    ap.add_argument("--out", default=None, help="folder for the per-query tables (CSV)")
    args = ap.parse_args()
    base = with_overrides(RagbenchConfig(), dict(s.split("=", 1) for s in args.set))
    configs = configurations()

    kw, dn, ds = scifact_parts(args.data_dir, args.split, args.store, base)
    sci: dict[str, pd.Series] = {}
    for name, fields in configs.items():
        cfg = with_overrides(base, {f"fusion.{k}": v for k, v in fields.items()})
        sci[name] = per_query(kw, dn, cfg, ds.queries, ds.qrels, 100, "nDCG@10")
        print(f"scifact {name}: {sci[name].mean():.4f}", file=sys.stderr, flush=True)
    # the parts alone, for reference
    for label, part in (("bm25", kw), ("dense", dn)):
        rows = []
        for qid, q in zip(ds.queries["qid"].astype(str), ds.queries["query"].astype(str)):
            rows.extend(hits_to_run(qid, part.search(q, 100))[:100])
        pq = evaluate(pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"]), ds.qrels, ["nDCG@10"])
        print(f"scifact {label} alone: nDCG@10 {pq['value'].sum() / len(ds.queries):.4f}")
    table = pd.DataFrame(sci)
    if args.out:  # written now: the golden part below takes a while
        Path(args.out).mkdir(parents=True, exist_ok=True)
        table.to_csv(Path(args.out) / "scifact.csv")
    groups = kfold_groups(table.index.tolist(), args.folds, args.seed)
    cv = cross_validate(table, groups)

    gold: dict[str, pd.DataFrame] = {}
    for folder in args.golden:
        gkw, gdn, golden = golden_parts(folder, base)
        principals = {q.qid: golden.principal(q.qid) for q in golden.questions}
        queries = golden.queries_df(answerable_only=True)
        gold[Path(folder).name] = pd.DataFrame({
            name: per_query(gkw, gdn, with_overrides(base, {f"fusion.{k}": v for k, v in fields.items()}),
                            queries, golden.qrels_df(), 5, "nDCG@5", principals)
            for name, fields in configs.items()})

    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        table.to_csv(Path(args.out) / "scifact.csv")
        for name, t in gold.items():
            t.to_csv(Path(args.out) / f"{name}.csv")
    overrides = " ".join(args.set) or "defaults"
    print(f"\nparts: {overrides}; SciFact {args.split} {len(table)} queries, {args.folds} folds (seed {args.seed})")
    header = "| fusion | SciFact nDCG@10 (all) | " + " | ".join(f"{g} nDCG@5" for g in gold) + " |"
    print("\n" + header + "\n|---|---:|" + "---:|" * len(gold))
    order = table.mean().sort_values(ascending=False).index
    for name in [BASELINE] + [n for n in order if n != BASELINE]:
        cells = [f"{table[name].mean():.4f}"] + [f"{t[name].mean():.3f}" for t in gold.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n| fold | chosen on the other folds | fit | held-out | baseline on the fold | "
          + " | ".join(f"{g} (chosen / baseline)" for g in gold) + " |")
    print("|---|---|---:|---:|---:|" + "---|" * len(gold))
    for row in cv.per_fold.itertuples():
        inside = groups[groups == row.fold].index
        cells = [f"{t[row.chosen].mean():.3f} / {t[BASELINE].mean():.3f}" for t in gold.values()]
        print(f"| {row.fold} | {row.chosen} | {row.fit:.4f} | {row.held_out:.4f} | "
              f"{table.loc[inside, BASELINE].mean():.4f} | " + " | ".join(cells) + " |")
    print(f"\npooled held-out nDCG@10 of the selection: {cv.held_out:.4f}; baseline {table[BASELINE].mean():.4f}; "
          f"in-sample best {cv.in_sample_best} {cv.in_sample_score:.4f}")
    if np.isfinite(cv.held_out):
        pass


if __name__ == "__main__":
    main()
