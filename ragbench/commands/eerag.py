"""``ragbench eerag …``: ``bench FILE`` (the EE-RAG benchmark), ``tokens DATA_DIR`` (token-cost study on BEIR),
``chat --store S`` (an interactive, persisted EE-RAG + DCS conversation), ``audit --store S --conversation ID``
and ``converse FILE`` (LoCoMo conversations replayed through the system; ``commands/eerag_converse.py``).

Grammar (docs/design.md): ``--config FILE``, repeatable ``--set name=value``, ``--retriever``, ``-k``, ``--model``;
progress on stderr (``--quiet`` silences it); with ``--json`` stdout is exactly one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import uuid
from typing import Any

from ..config import RagbenchConfig, load_config, with_overrides
from ..retrieval.retriever import MODES

MODEL_HELP = "chat model: llama (best installed local GGUF), llama:<name> (e.g. llama:qwen2.5-coder-1.5b), openai"


def chat_model(name: str | None) -> Any:
    if not name:
        return None
    from ..llm import make_chat_model

    return make_chat_model(name)


def config_from(args: argparse.Namespace) -> RagbenchConfig:
    """``--config`` + ``--set`` + the option shortcuts (``--retriever``, ``-k``, ``--elector``)."""
    overrides: dict[str, Any] = {}
    for item in getattr(args, "set", None) or []:
        if "=" not in item:
            from ..errors import ConfigError

            raise ConfigError(f"--set expects name=value, found {item!r}. Fix: e.g. --set eerag.top_k=3.")
        name, value = item.split("=", 1)
        overrides[name.strip()] = value
    if getattr(args, "retriever", None):
        overrides["retrieval.mode"] = args.retriever
    if getattr(args, "k", None):
        overrides["eerag.top_k"] = args.k
    if getattr(args, "elector", None):
        overrides["eerag.elector"] = args.elector
    return with_overrides(load_config(args.config), overrides)


def add_grammar(p: argparse.ArgumentParser, k_help: str = "candidates shown in the header (eerag.top_k)") -> None:
    p.add_argument("--config", help="YAML config file")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a config field, e.g. eerag.elect_threshold=0.4 (repeatable)")
    p.add_argument("--retriever", choices=MODES, help="retrieval mode for candidates (retrieval.mode)")
    p.add_argument("-k", type=int, help=k_help)
    p.add_argument("--model", help=MODEL_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="stdout is exactly one JSON line")


# ---------------------------------------------------------------------------------------------- bench / tokens

def _bench(args: argparse.Namespace) -> int:
    from ..eval.eerag_bench import SUMMARY_KEYS, run_bench

    cfg = config_from(args)
    if args.mode:
        cfg = with_overrides(cfg, {"retrieval.mode": args.mode})
    report = run_bench(args.file, cfg=cfg, mode=args.retriever or args.mode or "dense",
                       chat_model=chat_model(args.model), show_progress=not args.quiet)
    s = report.summary
    out = sys.stderr if args.json else sys.stdout
    for _, row in report.cases.iterrows():
        print(f"{row.case_id}  expected={row.expected}  elected={row.elected}  tokens={row.context_tokens}"
              f" (naive {row.naive_context_tokens})  {row.election_status} {row.failure}", file=out)
    for k in SUMMARY_KEYS + ("answer_hint_rate",):
        if k in s:
            print(f"{k:>24}: {s[k]:.3f}", file=out)
    saving = 1 - s["context_tokens"] / s["naive_context_tokens"] if s["naive_context_tokens"] else 0.0
    print(f"{'token saving vs naive':>24}: {saving:.1%}   ({report.info})", file=out)
    if args.json:
        print(json.dumps({**{k: s[k] for k in SUMMARY_KEYS}, **report.info}))
    return 0


def _tokens(args: argparse.Namespace) -> int:
    from ..eval.eerag_tokens import run_token_study

    cfg = config_from(args)
    thresholds = [float(t) for t in args.thresholds.split(",")]
    study = run_token_study(args.data_dir, split=args.split, cfg=cfg, k=args.k or 5, thresholds=thresholds,
                            max_queries=args.max_queries, seed=args.seed, show_progress=not args.quiet)
    print(study.curve.to_string(index=False), file=sys.stderr if args.json else sys.stdout)
    if args.out:
        study.save(args.out)
    if args.json:
        print(json.dumps(study.headline))
    return 0


# ---------------------------------------------------------------------------------------------- chat / audit

def _open_conversation(args: argparse.Namespace) -> Any:
    from ..eerag.conversation import Conversation
    from ..store import KnowledgeStore

    cfg = config_from(args)
    store = KnowledgeStore.open(args.store)
    conversation_id = args.conversation or f"chat-{uuid.uuid4().hex[:8]}"
    try:
        conv = Conversation.open(store, conversation_id, cfg, chat_model(args.model))
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
                print(json.dumps(r.to_dict()))
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
    b.add_argument("--mode", choices=MODES, help="old name of --retriever (default dense)")
    add_grammar(b)
    b.set_defaults(func=_bench)
    t = inner.add_parser("tokens", help="token-cost study: naive top-k vs EE-RAG on a BEIR dataset")
    t.add_argument("data_dir", help="BEIR dataset folder")
    t.add_argument("--split", default="train", help="qrels split (default train)")
    t.add_argument("--thresholds", default="0.2,0.3,0.35,0.4,0.45,0.5,0.55,0.6", help="policy thresholds")
    t.add_argument("--max-queries", type=int, default=None, help="first n queries only")
    t.add_argument("--seed", type=int, default=0, help="random seed")
    t.add_argument("--out", help="folder for the curve CSV and plot")
    add_grammar(t, "candidates per query (default 5)")
    t.set_defaults(func=_tokens)
    c = inner.add_parser("chat", help="interactive EE-RAG + DCS conversation over a store (stdin, one message a line)")
    c.add_argument("--store", required=True, help="knowledge store file")
    c.add_argument("--conversation", help="conversation id to resume (default: a new one)")
    c.add_argument("--elector", choices=["policy", "llm"], help="who elects (eerag.elector; default policy)")
    add_grammar(c)
    c.set_defaults(func=_chat)
    a = inner.add_parser("audit", help="the two-phase audit of a stored conversation")
    a.add_argument("--store", required=True, help="knowledge store file")
    a.add_argument("--conversation", required=True, help="conversation id")
    a.add_argument("--json", action="store_true", help="stdout is exactly one JSON line")
    a.set_defaults(func=_audit)
    parser.set_defaults(func=lambda a: parser.print_help() or 2)
