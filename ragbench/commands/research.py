"""``ragbench research "QUESTION"``: multi-pass web research (RAG-DAL). Prints the coverage report with every
confidence explained; writes report, entries and the grounded prompt to ``--out``; logs an MLflow run (experiment
``ragbench-research``). With ``--json`` stdout is one JSON line with the keys passes_completed, sources_used,
is_complete, sub_topics, gaps, unresolvable, answer (text, refusal, the rule that decided it, sources and the claims
each sentence rests on) and mlflow_run_id. The answer is read like ``ragbench ask`` answers (``--model``, default
the extractive reader).

``--testweb`` starts the local test web (ragbench.dal.testweb) and researches it. Page URLs are fetched as the
search engine returns them (through HTTP_PROXY/HTTPS_PROXY when set) unless ``--url-rewrite`` is given: with a
template, or bare for the test-web convention of the search server (``<server>/site/{host}{path}``).

Exit status 0 on success, 1 when every search failed or ``dal.run_deadline`` cut the run short (the report and the
outputs are still written), 2 on bad input."""
from __future__ import annotations

import argparse
import json

from ._common import Output, add_common_options, add_model_option, load_cfg, show_progress

EXPERIMENT = "ragbench-research"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("research", help="multi-pass web research with credibility tiers and coverage report")
    p.add_argument("question", metavar="QUESTION", help="the research question")
    p.add_argument("--search-url", default=None, help="DuckDuckGo-style HTML search endpoint (default: dal.search_url)")
    p.add_argument("--url-rewrite", nargs="?", const="", default=None, metavar="TEMPLATE",
                   help="fetch pages from another server: a template such as "
                        "http://127.0.0.1:8765/site/{host}{path}, or bare for the test-web convention of "
                        "--search-url (default: fetch the real URLs)")
    p.add_argument("--testweb", action="store_true", help="start the local test web and research it")
    p.add_argument("--max-passes", type=int, default=None, help="1–4 (default: dal.max_passes = 4)")
    p.add_argument("--out", default=None, help="folder for report.json/.yaml/.txt, entries.json, prompt.txt")
    p.add_argument("--store", default=None, help="knowledge store holding the hub (reused across sessions)")
    p.add_argument("--as-of", default=None, help="date recency is measured against (default: today)")
    p.add_argument("--embedder", choices=("minilm", "hashing"), default=None, help="default: embedding.model")
    add_model_option(p, help="answer with this chat model into answer.txt (extractive | openai | llama)")
    p.add_argument("--decompose-with", default=None, metavar="NAME",
                   help="decompose with this chat model instead of the rules")
    add_common_options(p)
    p.set_defaults(func=run)


def _metrics(summary: dict) -> dict[str, float]:
    topics = summary.get("sub_topics") or []
    conf = [float(t["confidence"]) for t in topics if t.get("confidence") is not None]
    return {"passes_completed": summary["passes_completed"], "sources_used": summary["sources_used"],
            "is_complete": float(bool(summary["is_complete"])), "sub_topics": len(topics),
            "mean_confidence": sum(conf) / len(conf) if conf else float("nan"),
            "gaps": len(summary.get("gaps") or []), "unresolvable": len(summary.get("unresolvable") or [])}


def run(args: argparse.Namespace) -> int:
    from ..dal.hub import KnowledgeHub
    from ..dal.session import build_researcher, failed, json_line, site_rewrite, write_outputs
    from ..errors import EXIT_FAILURES, EXIT_OK
    from ..provenance import text_hash
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    out = Output(args)
    overrides: dict[str, object] = {"dal.search_url": args.search_url, "dal.url_rewrite": args.url_rewrite,
                                    "dal.max_passes": args.max_passes, "dal.as_of": args.as_of,
                                    "embedding.model": args.embedder, "dal.decomposer": args.decompose_with}
    from ..dal.testweb import maybe_testweb

    with maybe_testweb(args.testweb) as web:
        if web is not None:
            overrides.update({"dal.search_url": web.search_url, "dal.url_rewrite": web.url_rewrite,
                              "dal.request_delay": 0.0})
            if args.as_of is None:
                overrides["dal.as_of"] = "2025-06-01"
        if overrides.get("dal.url_rewrite") == "":  # bare --url-rewrite: the test-web convention of the search URL
            search_url = load_cfg(args, {**overrides, "dal.url_rewrite": None}).dal.search_url
            overrides["dal.url_rewrite"] = site_rewrite(search_url)
        cfg = load_cfg(args, overrides)
        from ..llm import make_chat_model

        decomposer = make_chat_model(args.decompose_with) if args.decompose_with else None
        store = None
        if args.store:
            from ..store import KnowledgeStore

            store = KnowledgeStore.open(args.store)
        try:
            researcher = build_researcher(cfg, hub=KnowledgeHub(store) if store else None, chat_model=decomposer,
                                          show_progress=show_progress(args))
            result = researcher.run(args.question)
        finally:
            if store is not None:
                store.close()
    # The answer goes through the same reader, grounding and refusal as `ask` (default: the extractive reader).
    from ..dal.answer import render, research_answer

    model_name = args.model or cfg.answer.chat_model
    chat = make_chat_model(model_name, embedder=researcher.embedder) if model_name else None
    answer = research_answer(result, chat, cfg.answer, researcher.embedder) if chat is not None else None
    out.text(result.report.render())
    if answer is not None:
        out.text("", render(answer))
    if args.out:
        paths = write_outputs(result, args.out, chat, answer)
        out.text(f"\nwrote {', '.join(str(p) for p in paths.values())}")
    record = json.loads(json_line(result))
    if answer is not None:
        record["answer"] = answer.to_dict()
    rec = record_run(EXPERIMENT, "research", cfg, _metrics(result.report.summary_dict()),
                     params={"research": {"question": args.question, "model": args.model, "testweb": args.testweb}},
                     artifacts=[args.out], data_hash=text_hash(args.question), enabled=not args.no_mlflow,
                     tags={"dataset": "web"}, stages=stage_signatures(cfg, embedder=researcher.embedder or False))
    out.text(f"mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    if rec.error:
        out.error(rec.error)
    problems = failed(result)  # every search failed, or the run deadline cut it short
    for message in problems:
        out.error(message)
    out.json({**record, "mlflow_run_id": rec.run_id})
    return EXIT_FAILURES if rec.error or problems else EXIT_OK
