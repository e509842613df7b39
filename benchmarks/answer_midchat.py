"""Questions that should be refused, asked in the middle of a conversation: does the chat still refuse them?

    python benchmarks/answer_midchat.py --data data/golden data/golden_*
    python benchmarks/answer_midchat.py --data data/golden data/golden_* --opener nearest \
        --set answer.followup_context=false            # a conversation setting switched, in the same conversations

The golden sets ask every refuse-acl and refuse-unanswerable question on its own, and their follow-up chains hold no
refusal (the loader forbids one), so no golden run shows what a conversation does to a question that should be
refused. Here each such question is asked by its own principal with the default `answer` system: alone, and as the
second turn of a chat session whose first turn is an answerable standalone question of the same set and asker
(``--opener first``: the first in file order; ``nearest``: the nearest one before it, else after; a question whose
asker has none is skipped). The chat rewrites the second turn as a follow-up when it reads as one (a pronoun, "and
…"), carrying the first turn's subject. With ``--set KEY=VALUE`` the second turns are also asked with those config
fields set (the variant), over the same store. Printed per set and pooled (and per slice): how many are refused alone,
in the conversation and in the variant's, and which change, with the rewritten query.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ragbench.answer import ChatSession
from ragbench.config import with_overrides
from ragbench.errors import ConfigError
from ragbench.eval.answers import answer_config, build_service, build_store
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names

COUNTS = ("asked", "refused_alone", "refused_in_chat", "refused_in_chat_variant")


def openers(golden: Any, how: str) -> dict[str, Any]:
    """qid of each question to refuse → the answerable standalone question of its asker that opens its chat."""
    order = list(golden.questions)
    out: dict[str, Any] = {}
    for i, q in enumerate(order):
        if not q.should_refuse:
            continue
        mates = [(j, p) for j, p in enumerate(order)
                 if p.asked_by == q.asked_by and not p.should_refuse and p.chain_id is None]
        if mates:
            # "nearest": the one fewest places away, the earlier of two as near
            out[q.qid] = min(mates, key=lambda t, i=i: t[0] if how == "first"
                             else abs(t[0] - i) + (0.5 if t[0] > i else 0.0))[1]
    return out


def second_turn(service: Any, opener: Any, question: str) -> Any:
    """The answer to ``question`` asked right after ``opener`` in a new chat session."""
    session = ChatSession(service, opener.asked_by)
    session.ask(opener.question)
    return session.ask(question)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders")
    ap.add_argument("--opener", choices=("first", "nearest"), default="first",
                    help="the asker's first answerable question, or the nearest one (default: first)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                    help="config field of the variant whose second turns are counted too (repeatable)")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the report")
    args = ap.parse_args()
    pairs = [o.partition("=") for o in args.overrides]
    if any(not eq or not k.strip() for k, eq, _ in pairs):
        sys.exit("--set: expected KEY=VALUE, e.g. answer.followup_context=false")
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    try:
        variant = with_overrides(cfg, {k.strip(): v.strip() for k, _, v in pairs}) if pairs else None
    except ConfigError as exc:
        sys.exit(f"--set: {exc}")
    embedder = make_embedder(cfg.embedding)
    report: dict[str, dict[str, Any]] = {}
    by_tag: dict[str, dict[str, int]] = {}
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        golden = load_golden(folder)
        store = build_store(golden, cfg, embedder)
        service = build_service(golden, cfg, "dense", embedder, store=store)
        other = build_service(golden, variant, "dense", embedder, store=store) if variant is not None else None
        counts = dict.fromkeys(COUNTS, 0)
        changed: list[dict[str, Any]] = []
        first_turns = openers(golden, args.opener)
        for q in golden.questions:
            opener = first_turns.get(q.qid)
            if opener is None:
                continue
            solo = service.answer(q.question, q.asked_by)
            second = second_turn(service, opener, q.question)
            third = second_turn(other, opener, q.question) if other is not None else None
            row = {"asked": 1, "refused_alone": solo.refused, "refused_in_chat": second.refused,
                   "refused_in_chat_variant": third.refused if third is not None else False}
            tag = by_tag.setdefault(q.tag, dict.fromkeys(COUNTS, 0))
            for k, v in row.items():
                counts[k] += int(v)
                tag[k] += int(v)
            if solo.refused != second.refused or (third is not None and third.refused != second.refused):
                changed.append({"qid": q.qid, "tag": q.tag, "question": q.question, "after": opener.question,
                                "query": second.query, "refused_alone": solo.refused,
                                "refused_in_chat": second.refused, "answer": second.answer,
                                **({"refused_in_chat_variant": third.refused} if third is not None else {})})
        report[name] = {**counts, "changed": changed}
        print(f"{name}: {counts['asked']} asked, refused alone {counts['refused_alone']}, in a conversation "
              f"{counts['refused_in_chat']}" + (f", in the variant's {counts['refused_in_chat_variant']}"
                                                if variant is not None else ""), file=sys.stderr, flush=True)
    pooled = {k: sum(int(r[k]) for r in report.values()) for k in COUNTS}
    if args.json:
        print(json.dumps({"data": args.data, "opener": args.opener, "variant": args.overrides, "pooled": pooled,
                          "slices": by_tag, "sets": report}))
        return
    print(f"pooled: {pooled['asked']} questions to refuse; refused alone {pooled['refused_alone']}, as a "
          f"conversation's second turn {pooled['refused_in_chat']}"
          + (f", with {' '.join(args.overrides)} {pooled['refused_in_chat_variant']}" if variant is not None else ""))
    for tag, t in sorted(by_tag.items()):
        print(f"  {tag}: {t['asked']} asked; alone {t['refused_alone']}, in a conversation {t['refused_in_chat']}"
              + (f", variant {t['refused_in_chat_variant']}" if variant is not None else ""))
    for name, r in report.items():
        for c in r["changed"]:
            print(f"  {name}/{c['qid']} ({c['tag']}): refused alone {c['refused_alone']}, in the conversation "
                  f"{c['refused_in_chat']}" + (f", in the variant's {c['refused_in_chat_variant']}"
                                               if "refused_in_chat_variant" in c else "")
                  + f"\n    after: {c['after']}\n    asked: {c['question']}\n"
                  f"    query: {c['query']}\n    answer: {c['answer'][:200]}")


if __name__ == "__main__":
    main()
