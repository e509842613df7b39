"""A pilot: does rewriting a refused question into the documents' plain wording with the local LLM recover it?

    python benchmarks/answer_rewrite.py --data data/golden data/golden_* --memo rewrites.json   # ~1 h on 2 cores

The default answer system (dense retrieval, extractive reader, text check) answers every golden question that is
not a chat turn. Each one it refuses on the coverage and similarity thresholds (``decided_by`` = check:thresholds)
is rewritten by the local Qwen2.5-Coder-1.5B (``make install-llm``) at temperature 0 with :data:`PROMPT` ("rewrite
… in the plain wording a handbook or price list would use; keep every name, number and qualifier; do not answer"),
and the rewritten question is asked again as the same principal, through the same service. Printed per set and
pooled: how many refused questions were answerable and how many should be refused, and after the rewrite how many
of the answerable ones are answered with their golden fact, answered without it, or still refused, and how many of
the ones to refuse are now answered. It is Rewrite-Retrieve-Read (a question rewritten before retrieval) applied
only where the text check gave up, measured before anything is built into the service (docs/answers.md, session 40).
Chat turns are left out: a rewrite would have to carry the chain's subject, which the service's own rewriter does.
``--memo FILE`` keeps the rewrites (JSON, by prompt version and question) so a rerun makes no model calls.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, score_answers
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names
from ragbench.schema import Message

PROMPT = ("You rewrite questions that customers and staff ask an organisation's assistant. Rewrite the question in "
          "the plain, standard wording that the organisation's handbook, policy or price list would use: replace "
          "slang, idioms and roundabout phrasing with the usual terms. Keep every name, number, place, date and "
          "qualifier. Do not answer the question and do not add anything it does not ask. Reply with the rewritten "
          "question only, on one line.")
PROMPT_VERSION = "rewrite@" + hashlib.sha256(PROMPT.encode()).hexdigest()[:8]


def rewrite(model: object, question: str, memo: dict[str, str]) -> str:
    """The LLM's rewrite of ``question`` (from ``memo`` when known; the first line, quotes stripped)."""
    key = f"{PROMPT_VERSION}|{question}"
    if key not in memo:
        reply = model.complete([Message("system", PROMPT), Message("user", question)])  # type: ignore[attr-defined]
        lines = [ln.strip() for ln in reply.text.splitlines() if ln.strip()]
        memo[key] = (lines[0] if lines else question).strip('"“”')
    return memo[key]


def outcome(row: dict[str, object], should_refuse: bool) -> str:
    """One question's outcome after the rewrite."""
    if should_refuse:
        return "refused (right)" if row["refused"] else "answered (wrong)"
    if row["refused"]:
        return "still refused"
    return "answered with fact" if row.get("FactInAnswer") == 1.0 else "answered without fact"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", required=True, help="golden folders")
    ap.add_argument("--memo", type=Path, help="JSON file of rewrites, read and extended")
    ap.add_argument("--show", action="store_true", help="print each question, its rewrite and the outcome")
    args = ap.parse_args()
    from ragbench.llm.factory import make_chat_model
    from ragbench.retrieval.embedding import make_embedder

    memo: dict[str, str] = json.loads(args.memo.read_text()) if args.memo and args.memo.exists() else {}
    cfg = answer_config(None, "dense")
    embedder = make_embedder(cfg.embedding)
    llm = make_chat_model("llama", max_tokens=80)
    pooled: Counter[str] = Counter()
    try:
        for name, folder in zip(set_names(args.data), args.data, strict=True):
            golden = load_golden(folder)
            store = build_store(golden, cfg, embedder)
            chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
            service = build_service(golden, cfg, "dense", embedder, store=store)
            single = [q.qid for q in golden.questions if q.chain_id is None]
            answers, _ = answer_golden(service, golden, single)
            refused = [q for q in golden.questions if q.qid in answers
                       and answers[q.qid].decided_by == "check:thresholds"]
            if not refused:
                continue
            new = {q.qid: rewrite(llm, q.question, memo) for q in refused}
            asked = replace(golden, questions=tuple(replace(q, question=new[q.qid]) if q.qid in new else q
                                                    for q in golden.questions))
            again, prompts = answer_golden(service, asked, list(new))
            rows = score_answers("answer", asked, again, prompts, chunk_doc)
            wide = rows.pivot_table(index="qid", columns="measure", values="value", aggfunc="first")
            counts: Counter[str] = Counter()
            for q in refused:
                row = {"refused": again[q.qid].refused, "FactInAnswer": wide.loc[q.qid].get("FactInAnswer")}
                kind = "to refuse" if q.should_refuse else "answerable"
                out = outcome(row, q.should_refuse)
                counts[f"{kind}: {out}"] += 1
                if args.show:
                    print(f"{name} {q.qid} [{kind}: {out}] {q.question!r} -> {new[q.qid]!r}")
            pooled.update(counts)
            print(f"{name}: {dict(sorted(counts.items()))}", file=sys.stderr, flush=True)
    finally:
        if args.memo:
            args.memo.write_text(json.dumps(memo, indent=1, sort_keys=True))
    print(json.dumps({"prompt_version": PROMPT_VERSION, "pooled": dict(sorted(pooled.items()))}, indent=1))


if __name__ == "__main__":
    main()
