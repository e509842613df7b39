"""``ragbench eerag bench FILE`` (the EE-RAG benchmark) and ``ragbench eerag tokens DATA_DIR`` (the token-cost
study on a BEIR dataset)."""
from __future__ import annotations

import argparse
import json
from typing import Any

from ..config import load_config


def _chat_model(name: str | None) -> Any:
    if not name:
        return None
    from ..llm import make_chat_model  # type: ignore[attr-defined]

    return make_chat_model(name)


def _bench(args: argparse.Namespace) -> int:
    from ..eval.eerag_bench import SUMMARY_KEYS, run_bench

    cfg = load_config(args.config, dict(o.split("=", 1) for o in args.set or []))
    report = run_bench(args.file, elector=args.elector, cfg=cfg, mode=args.mode,
                       chat_model=_chat_model(args.model), show_progress=not args.json)
    s = report.summary
    for _, row in report.cases.iterrows():
        print(f"{row.case_id}  expected={row.expected}  elected={row.elected}  tokens={row.context_tokens}"
              f" (naive {row.naive_context_tokens})")
    print()
    for k in SUMMARY_KEYS + ("answer_hint_rate",):
        if k in s:
            print(f"{k:>24}: {s[k]:.3f}")
    saving = 1 - s["context_tokens"] / s["naive_context_tokens"] if s["naive_context_tokens"] else 0.0
    print(f"{'token saving vs naive':>24}: {saving:.1%}")
    if args.json:
        print(json.dumps({k: s[k] for k in SUMMARY_KEYS}))
    return 0


def _tokens(args: argparse.Namespace) -> int:
    from ..eval.eerag_tokens import run_token_study

    cfg = load_config(args.config)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    study = run_token_study(args.data_dir, split=args.split, cfg=cfg, k=args.k, thresholds=thresholds,
                            max_queries=args.max_queries, seed=args.seed, show_progress=not args.json)
    print(study.curve.to_string(index=False))
    if args.out:
        study.save(args.out)
    if args.json:
        print(json.dumps(study.headline))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eerag", help="Elective Ephemeral RAG benchmarks")
    inner = parser.add_subparsers(dest="eerag_command", metavar="COMMAND")
    b = inner.add_parser("bench", help="run the EE-RAG benchmark file")
    b.add_argument("file")
    b.add_argument("--elector", choices=["policy", "llm"], default="policy")
    b.add_argument("--model", help="chat model for --elector llm: openai | llama")
    b.add_argument("--mode", default="dense", help="retrieval mode for candidates (default dense)")
    b.add_argument("--config", help="YAML config")
    b.add_argument("--set", action="append", help="override a config field, e.g. eerag.elect_threshold=0.4")
    b.add_argument("--json", action="store_true", help="last line: one JSON object")
    b.set_defaults(func=_bench)
    t = inner.add_parser("tokens", help="token-cost study: naive top-k vs EE-RAG on a BEIR dataset")
    t.add_argument("data_dir")
    t.add_argument("--split", default="train")
    t.add_argument("-k", type=int, default=5)
    t.add_argument("--thresholds", default="0.2,0.3,0.35,0.4,0.45,0.5,0.55,0.6")
    t.add_argument("--max-queries", type=int, default=None)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", help="folder for the curve CSV and plot")
    t.add_argument("--config")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_tokens)
    parser.set_defaults(func=lambda a: parser.print_help() or 2)
