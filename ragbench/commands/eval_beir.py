"""``ragbench eval beir DATA_DIR --split SPLIT --retriever MODE [--json] [--config YAML]``.

Prints nDCG@10, R@100 and RR@10; with ``--json`` the last line of output is one JSON object with exactly the keys
``nDCG@10``, ``R@100``, ``RR@10`` and ``queries``."""
from __future__ import annotations

import argparse
import json

from ..retrieval.retriever import MODES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("beir", help="retrieval scores on a BEIR folder (nDCG@10, R@100, RR@10)")
    p.add_argument("data_dir", metavar="DATA_DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    p.add_argument("--split", default="test", help="qrels split (default: test)")
    p.add_argument("--retriever", choices=MODES, default="bm25", help="retrieval mode (default: bm25)")
    p.add_argument("--config", default=None, help="YAML config (chunking defaults to 'none' for BEIR)")
    p.add_argument("--store", default=None, help="knowledge store path (default .ragbench/beir-<name>.sqlite)")
    p.add_argument("--run", default=None, help="TREC run file to write (default next to the store)")
    p.add_argument("-k", type=int, default=100, help="results per query (default 100)")
    p.add_argument("--json", action="store_true", help="end the output with one JSON line of the scores")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..eval.beir import MEASURES, beir_config, run_beir

    cfg = beir_config(args.config)
    res = run_beir(args.data_dir, args.split, args.retriever, cfg, store_path=args.store, run_path=args.run,
                   k=args.k, show_progress=not args.quiet and not args.json)
    print(f"BEIR {res.dataset} / {res.split} / {res.mode}: {res.queries} queries "
          f"(ingest: {res.ingest['added']} added, {res.ingest['unchanged']} unchanged; run {res.run_path})")
    for m in MEASURES:
        print(f"  {m:<8} {res.metrics[m]:.4f}")
    if args.json:
        print(json.dumps({**{m: res.metrics[m] for m in MEASURES}, "queries": res.queries}))
    return 0
