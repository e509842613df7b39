"""Dense (all-MiniLM-L6-v2) and hybrid (BM25 + dense, RRF k = 60) retrieval on a BEIR split, side by side with
BM25 in one run, against the published MiniLM figure (MTEB SciFact nDCG@10 = 0.645, measured on the TEST split).

Each system goes through ``ragbench.eval.beir.run_beir`` with the BEIR defaults (chunking ``none``: title + " " +
text as one chunk, max_length 256), sharing one store, so the document vectors are embedded once and reused.

    python benchmarks/dense_bench.py /work/shared/data/beir_scifact --split train \
        --store .ragbench/beir-beir_scifact.sqlite
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

from ragbench.eval.beir import MEASURES, beir_config, run_beir

PUBLISHED = {"nDCG@10": 0.64508, "R@100": 0.925}  # HF model card (MTEB), SciFact test split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--split", default="train")
    ap.add_argument("--store", default=None)
    ap.add_argument("--run-dir", default=None, help="folder for the run files (default next to the store)")
    args = ap.parse_args()
    cfg = beir_config()
    systems = [
        ("BM25 (k1 1.5, b 0.75)", "bm25", cfg),
        ("dense all-MiniLM-L6-v2 (exact cosine)", "dense", cfg),
        ("hybrid BM25 + dense (RRF k 60, 100 candidates each)", "hybrid", cfg),
        ("hybrid + lexical re-rank (weight 0.1)", "hybrid",
         replace(cfg, fusion=replace(cfg.fusion, rerank=True))),
    ]
    rows = []
    for label, mode, c in systems:
        t = time.perf_counter()
        run_path = None
        if args.run_dir:
            run_path = f"{args.run_dir}/{mode}{'-rerank' if c.fusion.rerank else ''}.run"
        res = run_beir(args.data_dir, args.split, mode, c, store_path=args.store, run_path=run_path)
        rows.append((label, res.metrics, time.perf_counter() - t, res.queries))
    print(f"BEIR {args.data_dir} / {args.split}: {rows[0][3]} queries")
    print("| system | " + " | ".join(MEASURES) + " | wall s |")
    print("|---|" + "---:|" * (len(MEASURES) + 1))
    for label, m, secs, _ in rows:
        print(f"| {label} | " + " | ".join(f"{m[x]:.4f}" for x in MEASURES) + f" | {secs:.0f} |")
    print("| published all-MiniLM-L6-v2 (MTEB, SciFact **test** split) | "
          f"{PUBLISHED['nDCG@10']:.4f} | {PUBLISHED['R@100']:.4f} | n/a | |")


if __name__ == "__main__":
    main()
