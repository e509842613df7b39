"""``ragbench search "QUERY" --store S --retriever {bm25,dense,lsh,hybrid} -k K [--json]``.

Searches every chunk of the store as an unrestricted caller, or as ``--user`` with roles, departments and a
maximum classification (the ACL is applied before scoring)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import StoreError
from ._common import (Output, add_config_options, add_k_option, add_output_options, add_principal_options,
                      add_retriever_option, load_cfg, principal_from)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="search a knowledge store")
    p.add_argument("query", metavar="QUERY", help="the search text")
    p.add_argument("--store", required=True, help="knowledge store (SQLite file)")
    add_retriever_option(p)
    add_k_option(p, help="results (default: retrieval.k of the config)")
    add_principal_options(p, "search")
    add_config_options(p)
    add_output_options(p, json_help="print the hits as exactly one JSON line on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..retrieval.chunk_table import check_k
    from ..retrieval.retriever import retriever_from_store
    from ..store import KnowledgeStore

    out = Output(args)
    cfg = load_cfg(args)
    mode = args.retriever or cfg.retrieval.mode
    k = args.k if args.k is not None else cfg.retrieval.k
    check_k(k)
    if not Path(args.store).is_file():
        raise StoreError(f"store {args.store} does not exist. Fix: create it with `ragbench index PATH --store "
                         f"{args.store}`.")
    principal = principal_from(args)
    with KnowledgeStore.open(args.store) as store:
        retriever = retriever_from_store(store, mode, cfg)
    hits = retriever.search(args.query, k, principal)
    if out.as_json:
        out.json({"query": args.query, "mode": mode, "hits": [
            {"rank": h.rank, "score": h.score, "doc_id": h.doc_id, "chunk_id": h.chunk_id, "title": h.title,
             "start": h.start, "end": h.end, "text": h.text} for h in hits]})
        return 0
    out.text(*(f"{h.rank + 1:>3}. {h.score:.4f}  {h.doc_id}  {h.title}\n     {' '.join(h.text.split())[:160]}"
               for h in hits) if hits else ["no results"])
    return 0
