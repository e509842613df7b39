"""``ragbench eerag …``: ``bench FILE`` (the EE-RAG benchmark), ``tokens DATA_DIR`` (token-cost study on BEIR),
``chat --store S`` (an interactive, persisted EE-RAG + DCS conversation), ``audit --store S --conversation ID``
and ``converse FILE`` (LoCoMo conversations replayed through the system; ``commands/eerag_converse.py``).
``bench`` and ``tokens`` log an MLflow run (experiment ``ragbench-eerag``).

Grammar (docs/design.md, helpers in ``commands/_common.py``): ``--config FILE``, repeatable ``--set name=value``,
``--retriever``, ``-k``, ``--model``; progress on stderr (``--quiet`` silences it); with ``--json`` stdout is
exactly one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from ._eerag_common import add_grammar, chat_model, config_from, track
from ._common import (
    Output,
    add_output_options,
    add_principal_options,
    add_tracking_option,
    json_line,
    principal_from,
    show_progress,
)

def _bench(args: argparse.Namespace) -> int:
    from ..eval.eerag_bench import SUMMARY_KEYS, run_bench

    out = Output(args)
    cfg = config_from(args)
    report = run_bench(args.file, cfg=cfg, mode=args.retriever or "dense", chat_model=chat_model(args.model, cfg),
                       show_progress=show_progress(args), answer=not args.elect_only)
    s = report.summary
    lines = [f"{row.case_id}  expected={row.expected}  elected={row.elected}  tokens={row.context_tokens}"
             f" (naive {row.naive_context_tokens})  {row.election_status} {row.failure}"
             for _, row in report.cases.iterrows()]
    lines += [f"{k:>24}: {s[k]:.3f}" for k in SUMMARY_KEYS + ("answer_hint_rate",) if k in s]
    saving = 1 - s["context_tokens"] / s["naive_context_tokens"] if s["naive_context_tokens"] else 0.0
    lines.append(f"{'token saving vs naive':>24}: {saving:.1%}   ({report.info})")
    out.text(*lines)
    folder = Path(args.out) if args.out else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        report.cases.to_json(folder / "cases.jsonl", orient="records", lines=True)
        report.per_query.to_csv(folder / "per_query.csv", index=False)
    run_id, status = track(args, out, cfg, f"bench-{cfg.eerag.elector}", dict(s),
                            {"file": str(args.file), "retriever": args.retriever or "dense", **report.info},
                            args.file, [folder], modes=(args.retriever or "dense",))
    out.json({**{k: s[k] for k in SUMMARY_KEYS}, **report.info, "mlflow_run_id": run_id})
    return status


def _tokens(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..eval.eerag_tokens import run_token_study

    out = Output(args)
    cfg = config_from(args)
    try:
        thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    except ValueError:
        raise ConfigError(f"--thresholds expects comma-separated numbers, found {args.thresholds!r}. "
                          "Fix: e.g. --thresholds 0.3,0.4,0.5") from None
    study = run_token_study(args.data_dir, split=args.split, cfg=cfg, k=args.k or 5, thresholds=thresholds,
                            max_queries=args.max_queries, seed=args.seed, show_progress=show_progress(args))
    out.text(study.curve.to_string(index=False))
    if args.out:
        study.save(args.out)
    metrics = {k: v for k, v in study.headline.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    run_id, status = track(args, out, cfg, f"tokens-{Path(args.data_dir).name}-{args.split}", metrics,
                            {"data": str(args.data_dir), "split": args.split, "k": args.k or 5,
                             "thresholds": args.thresholds, "max_queries": args.max_queries, "seed": args.seed},
                            args.data_dir, [args.out], modes=("dense",))
    out.json({**study.headline, "mlflow_run_id": run_id})
    return status


def _digest(args: argparse.Namespace) -> int:
    from ..eval.eerag_digest import digest_study

    out = Output(args)
    cfg = config_from(args)
    model = chat_model(args.model or "llama")
    pq, summary = digest_study(args.data_dir, model, cfg, split=args.split, n=args.queries, k=args.k or 5,
                               seed=args.seed, show_progress=show_progress(args))
    folder = Path(args.out) if args.out else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        pq.to_csv(folder / "digest_per_query.csv", index=False)
    out.text(*[f"{k:>24}: {v:.3f}" if isinstance(v, float) else f"{k:>24}: {v}" for k, v in summary.items()])
    metrics = {k: v for k, v in summary.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    run_id, status = track(args, out, cfg, f"digest-{Path(args.data_dir).name}-{args.split}", metrics,
                            {"data": str(args.data_dir), "split": args.split, "n": args.queries, "k": args.k or 5,
                             "seed": args.seed, "model_id": summary["model_id"], "prompt": summary["prompt"]},
                            args.data_dir, [folder], modes=("dense",))
    out.json({**summary, "mlflow_run_id": run_id})
    return status


# ---------------------------------------------------------------------------------------------- chat / audit

def _open_conversation(args: argparse.Namespace) -> Any:
    from ..eerag.conversation import Conversation
    from ..store import KnowledgeStore

    cfg = config_from(args)
    principal = principal_from(args)
    store = KnowledgeStore.open(args.store)
    conversation_id = args.conversation or f"chat-{uuid.uuid4().hex[:8]}"
    try:
        conv = Conversation.open(store, conversation_id, cfg, chat_model(args.model, cfg), principal=principal)
    except BaseException:
        store.close()
        raise
    return store, conv


def _chat(args: argparse.Namespace) -> int:
    store, conv = _open_conversation(args)
    interactive = sys.stdin.isatty()
    print(f"conversation {conv.conversation_id} ({len(conv.memory)} stored turns; elector {conv.config.eerag.elector}"
          f", model {conv.model.model_id}) — resume with --conversation {conv.conversation_id}", file=sys.stderr)
    try:
        while True:
            if interactive:
                print("> ", end="", flush=True, file=sys.stderr)
            line = sys.stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            r = conv.send(line.strip())
            if args.json:
                print(json_line(r.to_dict()))
            else:
                print(r.reply)
                docs = [store.get_chunk(c).doc_id if store.get_chunk(c) else c for c in r.elected_ids]
                print(f"  [{r.election_status}{': ' + r.failure if r.failure else ''}] elected {docs or '-'} · "
                      f"tags {r.tags or '-'} · {r.context_tokens} context tokens · {r.model_calls} model call(s)")
            sys.stdout.flush()
    finally:
        store.close()
    return 0


def _audit(args: argparse.Namespace) -> int:
    from ..eerag.conversation import conversation_audit
    from ..store import KnowledgeStore

    with KnowledgeStore.open(args.store) as store:
        rows = conversation_audit(store, args.conversation)
    if args.json:
        print(json.dumps({"conversation": args.conversation, "turns": rows}))
        return 0
    for r in rows:
        print(f"{r['request_id']}  {r['election_status']:<8} {r['failure']}")
        print(f"  Q: {r['question'][:100]}")
        print("  surfaced: " + ", ".join(f"[{n}] {doc}" for n, _, doc in r["surfaced"]))
        print("  elected:  " + (", ".join(f"[{n}] {cid} [RAG:{tag}]" for n, cid, tag in r["elected"]) or "-")
              + (f"   rejected ids {r['rejected']}" if r["rejected"] else ""))
        print(f"  model {r['model_id']} · prompts {r['prompts']} · {r['context_tokens']} context tokens · "
              f"{r['model_calls']} call(s) · {r['surfaced_at']} → {r['elected_at']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eerag", help="Elective Ephemeral RAG: benchmarks, conversations, audit")
    inner = parser.add_subparsers(dest="eerag_command", metavar="COMMAND")
    b = inner.add_parser("bench", help="run the EE-RAG benchmark file")
    b.add_argument("file", help="benchmark JSON (eedag_benchmark_v1.json format)")
    b.add_argument("--elector", choices=["policy", "llm"], help="who elects (eerag.elector; default policy)")
    b.add_argument("--out", default=None, metavar="DIR", help="folder for cases.jsonl and per_query.csv")
    b.add_argument("--elect-only", action="store_true",
                   help="score the election only: no answer call (a slow local model then costs one call a case)")
    add_grammar(b)
    add_tracking_option(b)
    b.set_defaults(func=_bench)
    t = inner.add_parser("tokens", help="token-cost study: naive top-k vs EE-RAG on a BEIR dataset")
    t.add_argument("data_dir", help="BEIR dataset folder")
    t.add_argument("--split", default="train", help="qrels split (default train)")
    t.add_argument("--thresholds", default="0.2,0.3,0.35,0.4,0.45,0.5,0.55,0.6", help="policy thresholds")
    t.add_argument("--max-queries", type=int, default=None, help="first n queries only")
    t.add_argument("--seed", type=int, default=0, help="random seed")
    t.add_argument("--out", help="folder for the curve CSV and plot")
    add_grammar(t, "candidates per query (default 5)")
    add_tracking_option(t)
    t.set_defaults(func=_tokens)
    d = inner.add_parser("digest", help="Layer 5: LLM digestion vs truncation on a slice of a BEIR dataset")
    d.add_argument("data_dir", help="BEIR dataset folder")
    d.add_argument("--split", default="train", help="qrels split (default train)")
    d.add_argument("--queries", type=int, default=60, help="queries with an election to digest (default 60)")
    d.add_argument("--seed", type=int, default=0, help="sampling seed")
    d.add_argument("--out", help="folder for digest_per_query.csv")
    add_grammar(d, "candidates per query (default 5)")
    add_tracking_option(d)
    d.set_defaults(func=_digest)
    c = inner.add_parser("chat", help="interactive EE-RAG + DCS conversation over a store (stdin, one message a line)")
    c.add_argument("--store", required=True, help="knowledge store file")
    c.add_argument("--conversation", help="conversation id to resume (default: a new one)")
    c.add_argument("--elector", choices=["policy", "llm"], help="who elects (eerag.elector; default policy)")
    add_principal_options(c, "converse")
    add_grammar(c)
    c.set_defaults(func=_chat)
    a = inner.add_parser("audit", help="the two-phase audit of a stored conversation")
    a.add_argument("--store", required=True, help="knowledge store file")
    a.add_argument("--conversation", required=True, help="conversation id")
    add_output_options(a)
    a.set_defaults(func=_audit)
    from . import eerag_converse  # its own module, registered as an eerag sub-command

    eerag_converse.register(inner, add_grammar)
    parser.set_defaults(func=lambda a: parser.print_help() or 2)
