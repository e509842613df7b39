"""``ragbench search "QUERY" --store S --mode {bm25,dense,lsh,hybrid} -k K [--json]``.

Searches every chunk of the store as an unrestricted caller, or as ``--user`` with roles, departments and a
maximum classification (the ACL is applied before scoring)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import StoreError
from ..retrieval.retriever import MODES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="search a knowledge store")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--store", required=True, help="knowledge store (SQLite file)")
    p.add_argument("--mode", choices=MODES + ("keyword",), default=None, help="default: retrieval.mode of the config")
    p.add_argument("-k", type=int, default=None, help="results (default: retrieval.k of the config)")
    p.add_argument("--config", default=None, help="YAML config")
    p.add_argument("--user", default=None, help="search as this user (with --roles/--departments/--classification)")
    p.add_argument("--roles", default="")
    p.add_argument("--departments", default="")
    p.add_argument("--classification", default="Public", help="the user's maximum classification")
    p.add_argument("--json", action="store_true", help="print one JSON object with the hits")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..retrieval.chunk_table import check_k
    from ..retrieval.retriever import retriever_from_store
    from ..schema import Principal
    from ..store import KnowledgeStore

    cfg = load_config(args.config)
    mode = args.mode or cfg.retrieval.mode
    k = args.k if args.k is not None else cfg.retrieval.k
    check_k(k)
    if not Path(args.store).is_file():
        raise StoreError(f"store {args.store} does not exist. Fix: create it with `ragbench index PATH --store "
                         f"{args.store}`.")
    principal = None
    if args.user:
        split = lambda v: [s.strip() for s in v.split(",") if s.strip()]  # noqa: E731
        principal = Principal.make(args.user, split(args.roles), split(args.departments), args.classification)
    with KnowledgeStore.open(args.store) as store:
        retriever = retriever_from_store(store, mode, cfg)
    hits = retriever.search(args.query, k, principal)
    if args.json:
        print(json.dumps({"query": args.query, "mode": mode, "hits": [
            {"rank": h.rank, "score": h.score, "doc_id": h.doc_id, "chunk_id": h.chunk_id, "title": h.title,
             "start": h.start, "end": h.end, "text": h.text} for h in hits]}, ensure_ascii=False))
        return 0
    if not hits:
        print("no results")
    for h in hits:
        snippet = " ".join(h.text.split())[:160]
        print(f"{h.rank + 1:>3}. {h.score:.4f}  {h.doc_id}  {h.title}\n     {snippet}")
    return 0
