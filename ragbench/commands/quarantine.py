"""``ragbench quarantine --store S [--json]``: what the prompt-injection quarantine flags in a knowledge store.

Scans every document that changed since its last scan (or whose detector version is older), forgets documents that
are gone, and lists each flagged paragraph with its reasons, so a researcher can audit what no model will read
(docs/answers.md, "Prompt-injection quarantine"). ``--suspects`` adds what the learned detector
(:mod:`ragbench.llm.injection_model`) suspects and the rules pass: not redacted, listed for a person to read."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ._common import Output, add_output_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("quarantine", help="list the paragraphs the prompt-injection quarantine flags in a store")
    p.add_argument("--store", required=True, help="knowledge store (SQLite file)")
    p.add_argument("--doc", action="append", default=None, metavar="DOC_ID",
                   help="only this document (repeatable; default: every document)")
    p.add_argument("--suspects", action="store_true",
                   help="also list the paragraphs the learned detector suspects and the rules pass (not redacted: "
                        "for a person to read; docs/answers.md)")
    add_output_options(p, json_help="print the scan and every flagged paragraph as exactly one JSON line on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..llm.quarantine import DETECTOR_VERSION, Quarantine
    from ..store import KnowledgeStore

    out = Output(args)
    if not Path(args.store).is_file():
        raise StoreError(f"store {args.store} does not exist. Fix: create it with `ragbench index PATH --store "
                         f"{args.store}`.")
    with KnowledgeStore.open(args.store) as store:
        known = set(store.doc_ids())
        wanted = sorted(set(args.doc)) if args.doc else sorted(known)
        unknown = [d for d in wanted if d not in known]
        if unknown:
            raise StoreError(f"no document {unknown[0]!r} in {args.store}. Fix: pass an id that `ragbench search` "
                             "shows, or leave out --doc to list every document.")
        q = Quarantine(store)
        scanned = q.scan(wanted) if args.doc else q.refresh()
        flagged: list[dict[str, Any]] = []
        for doc_id in q.flagged(wanted):
            flags = q.flags(doc_id)
            doc = store.get_document(doc_id)
            text = doc.text if doc is not None else ""
            flagged += [{"doc_id": doc_id, "start": f.start, "end": f.end, "reasons": list(f.reasons),
                         "text": text[f.start:f.end]} for f in flags]
        suspected = _suspects(store, wanted) if args.suspects else []
    docs = sorted({f["doc_id"] for f in flagged})
    record: dict[str, Any] = {"store": args.store, "detector": DETECTOR_VERSION, "documents": len(wanted),
                              "scanned": scanned, "flagged_documents": docs, "flagged": flagged}
    lines = [f"  {f['doc_id']} [{f['start']}:{f['end']}] {','.join(f['reasons'])}\n"
             f"     {' '.join(str(f['text']).split())[:160]}" for f in flagged]
    if args.suspects:
        from ..llm.injection_model import load_model

        model = load_model()
        record.update(learned_detector=model.version, threshold=round(model.threshold, 4), suspects=suspected)
        lines.append(f"{len(suspected)} more paragraphs the learned detector ({model.version}, threshold "
                     f"{model.threshold:.4f}) suspects; they are not redacted, read them:")
        lines += [f"  {x['doc_id']} [{x['start']}:{x['end']}] score {x['score']:.3f} ({', '.join(x['words'])})\n"
                  f"     {' '.join(str(x['text']).split())[:160]}" for x in suspected]
    out.json(record)
    out.text(f"{len(wanted)} documents ({scanned} scanned now, detector {DETECTOR_VERSION}): {len(flagged)} "
             f"paragraphs flagged in {len(docs)} documents; no model or agent is shown them", *lines)
    return 0


def _suspects(store: Any, doc_ids: list[str]) -> list[dict[str, Any]]:
    """What :func:`ragbench.llm.injection_model.suspects` finds in each document (its ACL level as the scan's)."""
    from ..llm.injection_model import suspects

    out: list[dict[str, Any]] = []
    for doc_id in doc_ids:
        doc = store.get_document(doc_id)
        if doc is None:
            continue
        out += [{"doc_id": doc_id, "start": x.start, "end": x.end, "score": x.score, "words": list(x.words),
                 "text": doc.text[x.start:x.end]} for x in suspects(doc.text, doc.acl.classification)]
    return out
