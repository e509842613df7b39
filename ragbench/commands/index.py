"""``ragbench index PATH... --store S``: ingest text and markdown files (folders are walked) into a knowledge store.

Document id = the file path as given (POSIX form), title = the front matter's ``title``, the first markdown
``# heading`` or the file name (:mod:`ragbench.store.files`). Re-running is cheap: unchanged files are skipped by
content hash; changed ones get a new version. A markdown file's YAML front matter is metadata, not text, and its
``acl`` is the document's ACL unless ``--roles``/``--departments``/``--classification`` are given. Every ingested
document is then scanned by the prompt-injection quarantine (:mod:`ragbench.llm.quarantine`), so its flags are in the
store before the first question."""
from __future__ import annotations

import argparse

from ._common import Output, add_config_options, add_output_options, load_cfg, show_progress, split_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="ingest text/markdown files into a knowledge store")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (*.txt, *.md, *.markdown)")
    p.add_argument("--store", required=True, help="knowledge store (SQLite file)")
    p.add_argument("--no-embed", action="store_true", help="skip embeddings (keyword search only)")
    p.add_argument("--roles", default=None,
                   help="comma-separated roles allowed to read (default: the front matter's acl, else anyone)")
    p.add_argument("--departments", default=None,
                   help="comma-separated departments allowed (default: the front matter's acl, else any)")
    p.add_argument("--classification", default=None,
                   help="Public | Internal | Confidential | Restricted (default: the front matter's acl, else Public)")
    add_config_options(p)
    add_output_options(p, json_help="print the ingest report as exactly one JSON line on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..llm.injection_model import suspects
    from ..llm.quarantine import Quarantine
    from ..retrieval.factory import make_chunker
    from ..schema import Acl
    from ..store import KnowledgeStore
    from ..store.files import documents_from_files, front_matter_acl

    out = Output(args)
    cfg = load_cfg(args)
    explicit = any(v is not None for v in (args.roles, args.departments, args.classification))
    acl = (Acl.make(split_names(args.roles or ""), split_names(args.departments or ""), args.classification or "Public")
           if explicit else None)
    docs = documents_from_files(args.paths, acl)  # every file is read (and checked) before the store is touched
    overridden = [d.doc_id for d in docs if acl is not None
                  and (declared := front_matter_acl(d.metadata.get("front_matter") or {}, d.doc_id)) is not None
                  and declared != acl]
    chunker = make_chunker(cfg.chunking)
    embedder = None
    if not args.no_embed:
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(args.store) as store:
        report = store.ingest(docs, chunker, embedder, show_progress=show_progress(args))
        total = len(store)
        quarantine = Quarantine(store)
        scanned = quarantine.scan(d.doc_id for d in docs)
        flagged = quarantine.flagged(d.doc_id for d in docs)
    # The learned detector only reports (docs/answers.md): what it suspects and the rules pass, to read.
    suspected = sorted(d.doc_id for d in docs if suspects(d.text, d.acl.classification))
    summary = {"added": report.added, "updated": report.updated, "unchanged": report.unchanged,
               "chunks": report.chunks, "documents": total, "errors": report.errors,
               "quarantine_scanned": scanned, "quarantined_documents": flagged,
               "suspected_documents": suspected, "front_matter_acl_overridden": overridden}
    out.json(summary)
    out.text(f"indexed {len(docs)} files into {args.store}: {report.added} added, {report.updated} updated, "
             f"{report.unchanged} unchanged, {report.chunks} new chunks; {total} documents in the store")
    if overridden:
        out.text(f"acl: {len(overridden)} files declare another acl in their front matter; the command line's was "
                 f"used for them (leave out --roles/--departments/--classification to use theirs): "
                 f"{', '.join(overridden)}")
    if flagged:
        out.text(f"quarantine: {len(flagged)} of them hold text addressed to an AI, a classification claim or "
                 f"citation markers (redacted before any model sees it): {', '.join(flagged)}")
    if suspected:
        out.text(f"suspects: {len(suspected)} of them hold paragraphs a learned detector takes for prompt injections "
                 f"and the rules pass (not redacted; read them with `ragbench quarantine --store {args.store} "
                 f"--suspects`): {', '.join(suspected)}")
    return 0
