"""Ingest time of a BEIR corpus (chunk + embed + index), cold and rerun, in one run.

Cold: a new knowledge store and an empty embedding cache; every document is chunked (strategy ``none``: title +
" " + text), embedded with all-MiniLM-L6-v2 (max_length 256) and written, then the dense and BM25 indexes are
built from the store. Rerun: the same store and cache; unchanged documents are skipped by content hash and the
indexes are built from the stored vectors. Wall time and this process's CPU time are both reported, because the
CPU is shared with other work.

    python benchmarks/ingest_bench.py /work/shared/data/beir_scifact
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ragbench.eval.beir import beir_config, beir_documents
from ragbench.eval.datasets import load_beir
from ragbench.retrieval.factory import make_chunker
from ragbench.retrieval.embedding import make_embedder
from ragbench.retrieval.retriever import retriever_from_store
from ragbench.store import KnowledgeStore


def one_pass(docs, cfg, store_path: Path) -> dict[str, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(store_path) as store:
        report = store.ingest(docs, make_chunker(cfg.chunking), embedder, show_progress=False)
        w1 = time.perf_counter()
        retriever_from_store(store, "dense", cfg, embedder)
        retriever_from_store(store, "bm25", cfg)
    return {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "ingest_wall": w1 - w0,
            "added": report.added, "unchanged": report.unchanged, "chunks": report.chunks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--split", default="train", help="any split: only the corpus is used")
    ap.add_argument("--limit", type=int, default=None, help="first N documents only (smoke runs)")
    args = ap.parse_args()
    ds = load_beir(args.data_dir, args.split)
    docs = beir_documents(ds.corpus)[: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = beir_config()
        cfg = replace(cfg, embedding=replace(cfg.embedding, cache_path=str(Path(tmp) / "cache.sqlite")))
        store = Path(tmp) / "store.sqlite"
        cold = one_pass(docs, cfg, store)
        rerun = one_pass(docs, cfg, store)
    print(f"{ds.name}: {len(docs)} documents, chunking {cfg.chunking.strategy}, model {cfg.embedding.model} "
          f"(max_length {cfg.embedding.max_length}, intra_threads {cfg.embedding.intra_threads})")
    print("| pass | documents added / unchanged | ingest wall s | total wall s | process CPU s |")
    print("|---|---:|---:|---:|---:|")
    for name, r in (("cold (new store, empty cache)", cold), ("rerun (same store and cache)", rerun)):
        print(f"| {name} | {r['added']} / {r['unchanged']} | {r['ingest_wall']:.1f} | {r['wall']:.1f} "
              f"| {r['cpu']:.1f} |")


if __name__ == "__main__":
    main()
