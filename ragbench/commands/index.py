"""``ragbench index PATH... --store S``: ingest text and markdown files (folders are walked) into a knowledge store.

Document id = the file path as given (POSIX form), title = the first markdown ``# heading`` or the file name
(:mod:`ragbench.store.files`). Re-running is cheap: unchanged files are skipped by content hash; changed ones get a
new version. Every ingested document is then scanned by the prompt-injection quarantine
(:mod:`ragbench.llm.quarantine`), so its flags are in the store before the first question."""
from __future__ import annotations

import argparse

from ._common import Output, add_config_options, add_output_options, load_cfg, show_progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="ingest text/markdown files into a knowledge store")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (*.txt, *.md, *.markdown)")
    p.add_argument("--store", required=True, help="knowledge store (SQLite file)")
    p.add_argument("--no-embed", action="store_true", help="skip embeddings (keyword search only)")
    p.add_argument("--roles", default="", help="comma-separated roles allowed to read (default: anyone)")
    p.add_argument("--departments", default="", help="comma-separated departments allowed (default: any)")
    p.add_argument("--classification", default="Public", help="Public | Internal | Confidential | Restricted")
    add_config_options(p)
    add_output_options(p, json_help="print the ingest report as exactly one JSON line on stdout")
    p.set_defaults(func=run)


def _split(value: str) -> list[str]:
    return [v for v in (s.strip() for s in value.split(",")) if v]


def run(args: argparse.Namespace) -> int:
    from ..llm.quarantine import Quarantine
    from ..retrieval.factory import make_chunker
    from ..schema import Acl
    from ..store import KnowledgeStore
    from ..store.files import documents_from_files

    out = Output(args)
    cfg = load_cfg(args)
    acl = Acl.make(_split(args.roles), _split(args.departments), args.classification)
    docs = documents_from_files(args.paths, acl)  # every file is read (and checked) before the store is touched
    chunker = make_chunker(cfg.chunking)
    embedder = None
    if not args.no_embed:
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(args.store) as store:
        report = store.ingest(docs, chunker, embedder, show_progress=show_progress(args))
        total = len(store)
        ids = sorted({d.doc_id for d in docs})
        scanned = Quarantine(store).scan(ids)
        flagged = [r[0] for r in store.query(
            f"SELECT doc_id FROM quarantine_scans WHERE flagged > 0 AND doc_id IN ({', '.join('?' * len(ids))}) "
            "ORDER BY doc_id", ids)] if ids else []
    summary = {"added": report.added, "updated": report.updated, "unchanged": report.unchanged,
               "chunks": report.chunks, "documents": total, "errors": report.errors,
               "quarantine_scanned": scanned, "quarantined_documents": flagged}
    out.json(summary)
    out.text(f"indexed {len(docs)} files into {args.store}: {report.added} added, {report.updated} updated, "
             f"{report.unchanged} unchanged, {report.chunks} new chunks; {total} documents in the store")
    if flagged:
        out.text(f"quarantine: {len(flagged)} of them hold text addressed to an AI, a classification claim or "
                 f"citation markers (redacted before any model sees it): {', '.join(flagged)}")
    return 0
