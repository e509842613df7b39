"""``ragbench ask "QUESTION" --as PRINCIPAL``: a grounded, cited answer (or a refusal) as a principal.

By default it answers over the bundled golden corpus (``data/golden``), indexed on first use into
``.ragbench/golden-answers.db`` with sentence chunks and MiniLM embeddings; ``--store`` points at another store
(then ``--principals`` gives its principals file). With ``--json`` the last line is one JSON object with
``answer, refused, refusal_reason, citations [{doc_id, title, chunk_id, start, end}], support_ratio,
prompt_version, model_id`` (plus retrieval_mode, context_tokens, answer_id, error).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..retrieval.retriever import MODES

DEFAULT_STORE = Path(".ragbench") / "golden-answers.db"


def add_common(p: argparse.ArgumentParser) -> None:
    """Options shared by ``ask`` and ``chat``."""
    p.add_argument("--as", dest="principal", required=True, metavar="PRINCIPAL", help="user id to answer as")
    p.add_argument("--json", action="store_true", help="print JSON records")
    p.add_argument("--store", default=None, help=f"knowledge store (default: {DEFAULT_STORE}, golden corpus)")
    p.add_argument("--mode", choices=MODES + ("keyword",), default=None, help="retrieval mode (default: dense)")
    p.add_argument("--model", choices=("extractive", "openai", "llama"), default=None,
                   help="chat model (default: answer.chat_model of the config)")
    p.add_argument("--config", default=None, help="YAML config")
    p.add_argument("--data", default=None, help="golden folder (default: the bundled data/golden)")
    p.add_argument("--principals", default=None, help="principals YAML (default: the golden set's)")
    p.add_argument("--tenant", default=None, help="budget tenant (default: answer.tenant)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer a question with citations, as a principal")
    p.add_argument("question", metavar="QUESTION")
    add_common(p)
    p.set_defaults(func=run)


def open_service(args: argparse.Namespace) -> Any:
    """The answering service the options describe (indexes the golden corpus on first use)."""
    from ..answer import AnsweringService, BudgetLedger, PrincipalRegistry
    from ..config import load_config, with_overrides
    from ..eval.answers import ANSWER_MODE, answer_config, build_store
    from ..eval.golden import DEFAULT_FOLDER, load_golden
    from ..llm import make_chat_model
    from ..retrieval.embedding import make_embedder
    from ..retrieval.retriever import needs_embedder, normalize_mode, retriever_from_store
    from ..store import KnowledgeStore

    mode = normalize_mode(args.mode or ANSWER_MODE)
    cfg = answer_config(load_config(args.config), mode)
    if args.model:
        cfg = with_overrides(cfg, {"answer.chat_model": args.model})
    golden = load_golden(args.data or DEFAULT_FOLDER) if args.store is None or args.principals is None else None
    principals = (PrincipalRegistry.from_yaml(args.principals) if args.principals
                  else PrincipalRegistry(golden.principals))
    principal = principals.get(args.principal)  # unknown → PermissionDenied before any work
    embedder = make_embedder(cfg.embedding) if needs_embedder(mode) or cfg.answer.extractive_semantic else None
    if args.store is None:
        DEFAULT_STORE.parent.mkdir(parents=True, exist_ok=True)
        store = KnowledgeStore.open(DEFAULT_STORE)
        if len(store) == 0:
            store.close()
            build_store(golden, cfg, embedder, path=str(DEFAULT_STORE)).close()
            store = KnowledgeStore.open(DEFAULT_STORE)
    else:
        store = KnowledgeStore.open(args.store)
    retriever = retriever_from_store(store, mode, cfg, embedder)
    a = cfg.answer
    budget = BudgetLedger(store, a.daily_limit_usd, a.daily_request_limit, a.daily_token_limit)
    service = AnsweringService(store, retriever, make_chat_model(a, embedder=embedder), cfg, embedder=embedder,
                               principals=principals, budget=budget, tenant=args.tenant)
    return service, principal


def print_answer(answer: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(answer.to_json(), ensure_ascii=False))
        return
    print(answer.answer)
    if answer.refused:
        print(f"(refused: {answer.refusal_reason}" + (f"; {answer.error}" if answer.error else "") + ")")
    for c in answer.citations:
        print(f"  [{c.n}] {c.title} ({c.doc_id}, chars {c.start}-{c.end})")
    print(f"  prompt {answer.prompt_version} · model {answer.model_id} · {answer.retrieval_mode} · "
          f"support {answer.support_ratio:.2f}")


def run(args: argparse.Namespace) -> int:
    service, principal = open_service(args)
    try:
        print_answer(service.answer(args.question, principal), args.json)
    finally:
        service.store.close()
    return 0
