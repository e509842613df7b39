"""``ragbench dal watch PATH|URL… [--store S] [--once]``: the DAL ingestion pipeline. Folders are watched for new,
changed and deleted files; URLs ending in .rss/.atom/.xml (or containing "feed", or given with --feed) are feeds;
other URLs are pages. Each round re-processes only what changed; Ctrl-C stops. Exit status 1 when a source failed
(an unreachable feed, an unreadable file: listed in the output), 2 on bad input."""
from __future__ import annotations

import argparse
import time
from dataclasses import asdict

from ..errors import EXIT_FAILURES, EXIT_OK
from ._common import Output, add_config_options, add_output_options, load_cfg, show_progress

DEFAULT_STORE = ".ragbench/dal.sqlite"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dal", help="RAG-DAL ingestion pipeline")
    inner = p.add_subparsers(dest="dal_command", metavar="ACTION")
    w = inner.add_parser("watch", help="watch folders, feeds and URLs and index their deltas")
    w.add_argument("sources", nargs="+", metavar="PATH|URL", help="folders to watch, feed URLs or page URLs")
    w.add_argument("--feed", action="append", default=[], help="treat this URL as an RSS/Atom feed")
    w.add_argument("--store", default=DEFAULT_STORE, help=f"knowledge store (default {DEFAULT_STORE})")
    w.add_argument("--once", action="store_true", help="one round, then exit")
    w.add_argument("--interval", type=float, default=60.0, help="seconds between rounds (default 60)")
    w.add_argument("--embedder", choices=("minilm", "hashing", "none"), default=None,
                   help="default: embedding.model; none indexes chunks without vectors")
    w.add_argument("--url-rewrite", default=None, help="map page URLs, e.g. to a local mirror")
    add_config_options(w)
    add_output_options(w, json_help="print one JSON line per round on stdout (with --once: exactly one)")
    w.set_defaults(func=watch)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def watch(args: argparse.Namespace) -> int:
    from ..dal.pipeline import IngestionPipeline
    from ..dal.watchers import watchers_for
    from ..store import KnowledgeStore

    overrides = {}
    if args.embedder and args.embedder != "none":
        overrides["embedding.model"] = args.embedder
    if args.url_rewrite:
        overrides["dal.url_rewrite"] = args.url_rewrite
    out = Output(args)
    cfg = load_cfg(args, overrides)
    watchers = watchers_for(args.sources, args.feed, cfg)
    embedder = None
    if args.embedder != "none":
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(args.store) as store:
        pipe = IngestionPipeline(store, embedder, show_progress=show_progress(args))
        while True:
            rep = pipe.run(watchers)
            d = asdict(rep)
            d["reprocessed"] = len(rep.reprocessed)
            out.json(d)
            out.text(f"added {rep.added}, updated {rep.updated}, unchanged {rep.unchanged}, deleted {rep.deleted}, "
                     f"duplicates {rep.duplicates}, chunks {rep.chunks}, errors {len(rep.errors)}, "
                     f"quarantined {len(rep.quarantined)}",
                     *(f"  [{e.stage}/{e.kind}] {e.source}: {e.message}" for e in rep.errors),
                     *(f"  [quarantine] {d}: text addressed to an AI, a classification claim or citation markers "
                       "(redacted before any model sees it)" for d in rep.quarantined),
                     *(f"  [suspect] {d}: a paragraph a learned detector takes for a prompt injection and the rules "
                       "pass (not redacted; ragbench quarantine --suspects lists it)" for d in rep.suspected))
            # Exit status 1 when a source failed in the (last) round: its errors are printed above.
            status = EXIT_FAILURES if any(e.fatal for e in rep.errors) else EXIT_OK
            if args.once:
                return status
            try:
                time.sleep(args.interval)
            except KeyboardInterrupt:
                return status
