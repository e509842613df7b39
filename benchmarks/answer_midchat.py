"""Questions that should be refused, asked in the middle of a conversation: does the chat still refuse them?

    python benchmarks/answer_midchat.py --data data/golden data/golden_*

The golden sets ask every refuse-acl and refuse-unanswerable question on its own, and their follow-up chains hold no
refusal (the loader forbids one), so no golden run shows what a conversation does to a question that should be
refused. Here each such question is asked twice by its own principal with the default `answer` system: alone, and as
the second turn of a chat session whose first turn is another question of the same set and asker (the first
answerable question in file order; a question whose asker has none is skipped). The chat rewrites the second turn as
a follow-up when it reads as one (a pronoun, "and …"), carrying the first turn's subject. Printed per set and pooled:
how many are refused alone and in the conversation, and which change, with the rewritten query.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ragbench.answer import ChatSession
from ragbench.eval.answers import answer_config, build_service, build_store
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the report")
    args = ap.parse_args()
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    embedder = make_embedder(cfg.embedding)
    report: dict[str, dict[str, Any]] = {}
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        golden = load_golden(folder)
        service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
        opener = {}
        for q in golden.questions:
            if not q.should_refuse and q.chain_id is None and q.asked_by not in opener:
                opener[q.asked_by] = q
        asked = alone = in_chat = 0
        changed: list[dict[str, Any]] = []
        for q in golden.questions:
            if not q.should_refuse or q.asked_by not in opener:
                continue
            asked += 1
            solo = service.answer(q.question, q.asked_by)
            session = ChatSession(service, q.asked_by)
            session.ask(opener[q.asked_by].question)
            second = session.ask(q.question)
            alone += solo.refused
            in_chat += second.refused
            if solo.refused != second.refused:
                changed.append({"qid": q.qid, "tag": q.tag, "question": q.question,
                                "after": opener[q.asked_by].question, "query": second.query,
                                "refused_alone": solo.refused, "refused_in_chat": second.refused,
                                "answer": second.answer})
        report[name] = {"asked": asked, "refused_alone": alone, "refused_in_chat": in_chat, "changed": changed}
        print(f"{name}: {asked} asked, refused alone {alone}, in a conversation {in_chat}", file=sys.stderr,
              flush=True)
    pooled = {k: sum(int(r[k]) for r in report.values()) for k in ("asked", "refused_alone", "refused_in_chat")}
    if args.json:
        print(json.dumps({"data": args.data, "pooled": pooled, "sets": report}))
        return
    print(f"pooled: {pooled['asked']} questions to refuse; refused alone {pooled['refused_alone']}, "
          f"as a conversation's second turn {pooled['refused_in_chat']}")
    for name, r in report.items():
        for c in r["changed"]:
            print(f"  {name}/{c['qid']} ({c['tag']}): refused alone {c['refused_alone']}, in the conversation "
                  f"{c['refused_in_chat']}\n    after: {c['after']}\n    asked: {c['question']}\n"
                  f"    query: {c['query']}\n    answer: {c['answer'][:200]}")


if __name__ == "__main__":
    main()
