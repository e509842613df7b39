"""``ragbench eval beir DATA_DIR --split SPLIT --retriever MODE``: nDCG@10, R@100 and RR@10 on a BEIR folder
(the run itself: :func:`ragbench.eval.beir.run_beir`), logged to MLflow (experiment ``ragbench-beir``).

With ``--json`` stdout is one line with the keys ``nDCG@10``, ``R@100``, ``RR@10``, ``queries`` and
``mlflow_run_id``."""
from __future__ import annotations

import argparse

from ._common import Output, add_common_options, add_k_option, add_retriever_option, load_cfg, show_progress

EXPERIMENT = "ragbench-beir"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("beir", help="retrieval scores on a BEIR folder (nDCG@10, R@100, RR@10)")
    p.add_argument("data_dir", metavar="DATA_DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    p.add_argument("--split", default="test", help="qrels split (default: test)")
    add_retriever_option(p, default="bm25")
    add_k_option(p, default=100, help="results per query (default 100)")
    p.add_argument("--store", default=None, help="knowledge store path (default .ragbench/beir-<name>.sqlite)")
    p.add_argument("--run", default=None, help="TREC run file to write (default next to the store)")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..eval.beir import MEASURES, beir_config, run_beir
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    out = Output(args)
    cfg = load_cfg(args, base=beir_config)
    res = run_beir(args.data_dir, args.split, args.retriever, cfg, store_path=args.store, run_path=args.run,
                   k=args.k, show_progress=show_progress(args))
    meta_file = res.run_path.with_name(res.run_path.name + ".meta.json")
    rec = record_run(EXPERIMENT, f"beir-{res.dataset}-{res.split}-{res.mode}", cfg,
                     {**res.metrics, "queries": res.queries, **{f"seconds.{k}": v for k, v in res.seconds.items()}},
                     params={"eval": {"dataset": res.dataset, "split": res.split, "retriever": res.mode,
                                      "k": args.k}},
                     artifacts=[res.run_path, meta_file], data_hash=res.meta.get("data_hash"),
                     model_sha256=res.meta.get("model_sha256"), tags={"dataset": f"beir:{res.dataset}"},
                     enabled=not args.no_mlflow, stages=stage_signatures(cfg, [res.mode], chunker=True))
    out.text(f"BEIR {res.dataset} / {res.split} / {res.mode}: {res.queries} queries "
             f"(ingest: {res.ingest['added']} added, {res.ingest['unchanged']} unchanged; run {res.run_path})",
             *(f"  {m:<8} {res.metrics[m]:.4f}" for m in MEASURES),
             f"mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    if rec.error:
        out.error(rec.error)
    out.json({**{m: res.metrics[m] for m in MEASURES}, "queries": res.queries, "mlflow_run_id": rec.run_id})
    return 1 if rec.error else 0
