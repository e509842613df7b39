"""``ragbench research "QUESTION" [--search-url URL] [--max-passes 4] [--out DIR] [--json]``: multi-pass web
research (RAG-DAL). Prints the coverage report with every confidence explained; writes report, entries and the
grounded prompt to ``--out``. With ``--json`` the last line is one JSON object with the keys passes_completed,
sources_used, is_complete, sub_topics, gaps and unresolvable.

``--testweb`` starts the local test web (ragbench.dal.testweb) and researches it; a loopback ``--search-url``
(e.g. a test web started with ``python -m ragbench.dal.testweb``) maps page URLs to that server automatically."""
from __future__ import annotations

import argparse
import contextlib
from typing import Iterator


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("research", help="multi-pass web research with credibility tiers and coverage report")
    p.add_argument("question", metavar="QUESTION")
    p.add_argument("--search-url", default=None, help="DuckDuckGo-style HTML search endpoint (default: dal.search_url)")
    p.add_argument("--url-rewrite", default=None, help="map page URLs, e.g. http://127.0.0.1:8765/site/{host}{path}")
    p.add_argument("--testweb", action="store_true", help="start the local test web and research it")
    p.add_argument("--max-passes", type=int, default=None, help="1–4 (default: dal.max_passes = 4)")
    p.add_argument("--out", default=None, help="folder for report.json/.yaml/.txt, entries.json, prompt.txt")
    p.add_argument("--store", default=None, help="knowledge store holding the hub (reused across sessions)")
    p.add_argument("--as-of", default=None, help="date recency is measured against (default: today)")
    p.add_argument("--embedder", choices=("minilm", "hashing"), default=None, help="default: embedding.model")
    p.add_argument("--chat-model", default=None, help="answer with this chat model (extractive | openai | llama)")
    p.add_argument("--decompose-with", default=None, help="decompose with this chat model instead of the rules")
    p.add_argument("--config", default=None, help="YAML config")
    p.add_argument("--json", action="store_true", help="end the output with one JSON line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


@contextlib.contextmanager
def _maybe_testweb(on: bool) -> Iterator[object | None]:
    if not on:
        yield None
        return
    from ..dal.testweb import TestWeb

    with TestWeb() as web:
        yield web


def run(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..dal.hub import KnowledgeHub
    from ..dal.session import build_researcher, json_line, write_outputs

    overrides: dict[str, object] = {}
    for key, value in (("dal.search_url", args.search_url), ("dal.url_rewrite", args.url_rewrite),
                       ("dal.max_passes", args.max_passes), ("dal.as_of", args.as_of),
                       ("embedding.model", args.embedder)):
        if value is not None:
            overrides[key] = value
    with _maybe_testweb(args.testweb) as web:
        if web is not None:
            overrides.update({"dal.search_url": web.search_url, "dal.url_rewrite": web.url_rewrite,
                              "dal.request_delay": 0.0})
            overrides.setdefault("dal.as_of", "2025-06-01")
        if args.decompose_with:
            overrides["dal.decomposer"] = args.decompose_with
        cfg = load_config(args.config, overrides)
        chat = decomposer = None
        if args.chat_model or args.decompose_with:
            from ..llm import make_chat_model

            chat = make_chat_model(args.chat_model) if args.chat_model else None
            decomposer = make_chat_model(args.decompose_with) if args.decompose_with else None
        store = None
        if args.store:
            from ..store import KnowledgeStore

            store = KnowledgeStore.open(args.store)
        try:
            researcher = build_researcher(cfg, hub=KnowledgeHub(store) if store else None, chat_model=decomposer,
                                          show_progress=not (args.quiet or args.json))
            result = researcher.run(args.question)
        finally:
            if store is not None:
                store.close()
    print(result.report.render())
    if args.out:
        paths = write_outputs(result, args.out, chat)
        print(f"\nwrote {', '.join(str(p) for p in paths.values())}")
    if args.json:
        print(json_line(result))
    return 0
