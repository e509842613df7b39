"""Choose the BM25 tokenizer and scoring options by k-fold cross-validation on a BEIR split (SciFact train).

Every configuration (stemmer × stop-word list × method × k1 × b, plus RM3 on each tokenizer) is run over every
query once (nDCG@10 per query, ``title + " " + text`` documents); then for each fold the best configuration on the
other folds is scored on that fold (:mod:`ragbench.eval.cv`). The pooled held-out nDCG@10 estimates what the
selection scores on unseen queries of the same distribution (e.g. the SciFact test split).

    python benchmarks/lexical_cv.py /work/shared/data/beir_scifact --split train --folds 5 --out runs/lexical_cv.csv
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pandas as pd

from ragbench.eval.beir import beir_documents
from ragbench.eval.cv import cross_validate, kfold_groups
from ragbench.eval.datasets import load_beir
from ragbench.eval.metrics import evaluate
from ragbench.retrieval.bm25 import BM25Retriever
from ragbench.schema import Chunk

DEFAULT = "stem=none stop=off lucene k1=1.5 b=0.75"


def label(stem: str, stop: str, method: str, k1: float, b: float, rm3: str = "") -> str:
    return f"stem={stem} stop={stop} {method} k1={k1} b={b}" + (f" rm3={rm3}" if rm3 else "")


def per_query(r: BM25Retriever, qids: list[str], queries: list[str], qrels: pd.DataFrame, k: int) -> pd.Series:
    docs = r.table.chunks
    rows = []
    for qid, q in zip(qids, queries):
        idx, scores = r.topk(q, k)
        rows.extend((qid, docs[i].doc_id, float(s), n) for n, (i, s) in enumerate(zip(idx.tolist(), scores.tolist())))
    run = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
    pq = evaluate(run, qrels, ["nDCG@10"])
    return pq.set_index("qid")["value"].reindex(qids).fillna(0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--split", default="train")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stemmers", default="none,english")
    ap.add_argument("--stops", default="off,lucene,source,sklearn")
    ap.add_argument("--methods", default="lucene,robertson,atire,bm25l,bm25+")
    ap.add_argument("--k1", default="0.9,1.2,1.5")
    ap.add_argument("--b", default="0.5,0.75,0.9")
    ap.add_argument("--rm3", default="10,10,0.5;5,20,0.7", help="RM3 docs,terms,weight settings separated by ';'")
    ap.add_argument("--out", default=None, help="write the per-query table (CSV) here")
    args = ap.parse_args()

    ds = load_beir(args.data_dir, args.split)
    docs = beir_documents(ds.corpus)
    chunks = [Chunk(d.doc_id, d.doc_id, 0, 0, len(d.text), d.text) for d in docs]
    qids, queries = ds.queries["qid"].astype(str).tolist(), ds.queries["query"].tolist()
    table: dict[str, pd.Series] = {}
    t0 = time.perf_counter()
    for stem, stop in itertools.product(args.stemmers.split(","), args.stops.split(",")):
        r = BM25Retriever(stopwords=stop != "off", stopword_list=stop if stop != "off" else "source",
                          stemmer=stem).index(chunks)
        for method, k1, b in itertools.product(args.methods.split(","), args.k1.split(","), args.b.split(",")):
            r.method, r.k1, r.b = method, float(k1), float(b)
            table[label(stem, stop, method, float(k1), float(b))] = per_query(r, qids, queries, ds.qrels, 10)
        r.method, r.k1, r.b, r.rm3 = "lucene", 1.5, 0.75, True
        for spec in filter(None, args.rm3.split(";")):
            d, t, w = spec.split(",")
            r.rm3_docs, r.rm3_terms, r.rm3_weight = int(d), int(t), float(w)
            table[label(stem, stop, "lucene", 1.5, 0.75, spec)] = per_query(r, qids, queries, ds.qrels, 10)
        print(f"{stem}/{stop}: {len(table)} configurations, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    scores = pd.DataFrame(table)
    default_first = [DEFAULT] + [c for c in scores.columns if c != DEFAULT]
    scores = scores[default_first]
    if args.out:
        scores.to_csv(args.out)
    groups = kfold_groups(qids, args.folds, args.seed)
    cv = cross_validate(scores, groups)
    means = scores.mean().sort_values(ascending=False)
    print(f"BEIR {ds.name}/{args.split}: {len(qids)} queries, {scores.shape[1]} configurations, "
          f"{args.folds} folds (seed {args.seed})")
    print("\n| configuration (top 10 by in-sample nDCG@10) | nDCG@10 |\n|---|---:|")
    for name, v in means.head(10).items():
        print(f"| {name} | {v:.4f} |")
    print(f"| {DEFAULT} (current default) | {scores[DEFAULT].mean():.4f} |")
    print("\n| fold | chosen on the other folds | fit nDCG@10 | held-out nDCG@10 | queries |\n|---|---|---:|---:|---:|")
    for row in cv.per_fold.itertuples():
        print(f"| {row.fold} | {row.chosen} | {row.fit:.4f} | {row.held_out:.4f} | {row.queries} |")
    default_held = float(pd.concat([scores.loc[groups[groups == f].index, DEFAULT]
                                    for f in sorted(groups.unique())]).mean())
    print(f"\nheld-out nDCG@10 of the selection: {cv.held_out:.4f} (current default on the same queries: "
          f"{default_held:.4f}); in-sample best: {cv.in_sample_best} {cv.in_sample_score:.4f}")


if __name__ == "__main__":
    main()
