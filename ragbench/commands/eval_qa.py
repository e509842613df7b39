"""``ragbench eval qa FILE``: the DCS-EE-RAG source's QA benchmark (:mod:`ragbench.eval.qa`) with the chat model of
``--model`` / ``llm.model`` at ``llm.temperature``, logged to MLflow (experiment ``ragbench-qa``).

Prints each reply's outcome and the outcome rates against the source's thresholds; saves ``per_item.csv`` and
``rates.json`` in ``--out`` (default ``runs/qa/<timestamp>``). With ``--json`` stdout is one line with the rates,
``passed``, ``model_id``, ``run_dir`` and ``mlflow_run_id``. A FAIL verdict is a result, not an error: exit 0."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._common import Output, add_common_options, add_model_option, load_cfg, show_progress

EXPERIMENT = "ragbench-qa"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("qa", help="QA benchmark: few-shot questions graded Correct / Possibly / Wrong")
    p.add_argument("file", metavar="FILE", help="QA JSON Lines file (e.g. the bundled data/qa/sample.jsonl)")
    add_model_option(p, help="chat model (sets llm.model): extractive | openai | llama[:<name>]")
    p.add_argument("--few-shot", type=int, default=3, help="similar items shown as examples (default 3; 0: none)")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions (default: all)")
    p.add_argument("--out", default=None, metavar="DIR", help="run folder (default: runs/qa/<timestamp>)")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..eval.golden_run import default_run_dir
    from ..eval.qa import OUTCOMES, THRESHOLDS, load_qa, run_qa
    from ..llm import chat_model_for
    from ..provenance import data_hash
    from ..retrieval.embedding import make_embedder
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    out = Output(args)
    if args.few_shot < 0 or (args.limit is not None and args.limit < 1):
        raise ConfigError("--few-shot must be ≥ 0 and --limit ≥ 1. Fix: e.g. --few-shot 3 --limit 10.")
    cfg = load_cfg(args, {"llm.model": args.model})
    items = load_qa(args.file)[: args.limit]
    embedder = make_embedder(cfg.embedding) if args.few_shot else None
    model = chat_model_for(cfg, None, embedder)
    res = run_qa(items, model, embedder, args.few_shot, show_progress(args))
    run_dir = Path(args.out) if args.out else default_run_dir("qa")
    run_dir.mkdir(parents=True, exist_ok=True)
    res.per_item.to_csv(run_dir / "per_item.csv", index=False)
    record = {**{o: res.rates[o] for o in OUTCOMES}, "QaScore": res.rates["QaScore"], "passed": res.passed,
              "questions": len(items), "model_id": res.model_id, "run_dir": str(run_dir)}
    (run_dir / "rates.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    lines = [f"{r.qid:<8} {r.outcome:<16} {' '.join(str(r.reply).split())[:90]}" for r in res.per_item.itertuples()]
    lines.append("")
    for o, kind, t in THRESHOLDS:
        sign = "≥" if kind == "min" else "≤"
        lines.append(f"{o:>16}: {res.rates[o]:5.1f} %  (threshold {sign} {t:g}: "
                     f"{'PASS' if res.verdict[o] else 'FAIL'})")
    lines.append(f"{'QaScore':>16}: {res.rates['QaScore']:.3f}   model {res.model_id}, "
                 f"temperature {cfg.llm.temperature:g}, {len(items)} questions -> {'PASS' if res.passed else 'FAIL'}")
    rec = record_run(EXPERIMENT, f"qa-{Path(args.file).stem}", cfg,
                     {**{o: res.rates[o] for o in OUTCOMES}, "QaScore": res.rates["QaScore"],
                      "passed": float(res.passed), "questions": len(items)},
                     params={"eval": {"file": str(args.file), "few_shot": args.few_shot, "limit": args.limit,
                                      "model_id": res.model_id}},
                     artifacts=[run_dir / "per_item.csv", run_dir / "rates.json"], data_hash=data_hash(args.file),
                     model_sha256=getattr(embedder, "sha256", None), enabled=not args.no_mlflow,
                     tags={"dataset": f"qa:{Path(args.file).stem}"},
                     stages=stage_signatures(cfg, embedder=embedder or False))
    lines.append(f"run folder: {run_dir}; mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    out.text(*lines)
    if rec.error:
        out.error(rec.error)
    out.json({**record, "mlflow_run_id": rec.run_id})
    return 1 if rec.error else 0
