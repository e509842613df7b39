"""Do the refusals hold mid-conversation? Every question that should be refused, asked as a chat's second turn.

    python benchmarks/refusals_in_conversation.py --data data/golden data/golden_*
    python benchmarks/refusals_in_conversation.py --data data/golden_lowenby --set answer.followup_context=false

The golden chains are all answerable, so a change to how a conversation is read (the follow-up rewriter, the focus
and context retries) cannot lose a refusal there. This probe asks each refuse-acl and refuse-unanswerable question of
a set as the second turn of a conversation, after an answerable standalone question by the same asker (the nearest
one before it in the set's order, else the nearest after; a question whose asker has none is skipped), and counts
the refusals of the second turns — with the default `answer` system and with the ``--set`` overrides (the variant).
Each set is chunked and embedded once. Refusals that the variant loses or wins are listed by qid.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ragbench.config import with_overrides
from ragbench.errors import ConfigError
from ragbench.eval.answers import answer_config, build_service, build_store
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names

REFUSE_TAGS = ("refuse-acl", "refuse-unanswerable")


def openers(golden: Any) -> dict[str, Any]:
    """qid of each refuse-slice question → the answerable standalone question that opens its conversation."""
    order = list(golden.questions)
    out: dict[str, Any] = {}
    for i, q in enumerate(order):
        if q.tag not in REFUSE_TAGS:
            continue
        mates = [(abs(j - i) + (0.5 if j > i else 0.0), p) for j, p in enumerate(order)
                 if p.asked_by == q.asked_by and not p.should_refuse and p.chain_id is None]
        if mates:
            out[q.qid] = min(mates, key=lambda t: t[0])[1]
    return out


def second_turn_refusals(service: Any, golden: Any, pairs: dict[str, Any]) -> dict[str, bool]:
    """qid → whether the question was refused as the second turn after its opener."""
    from ragbench.answer import ChatSession

    by_qid = {q.qid: q for q in golden.questions}
    out: dict[str, bool] = {}
    for qid, opener in pairs.items():
        chat = ChatSession(service, opener.asked_by)
        chat.ask(opener.question)
        out[qid] = bool(chat.ask(by_qid[qid].question).refused)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders (pooled)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                    help="config field of the variant (repeatable); default: answer.followup_context=false")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    args = ap.parse_args()
    pairs_kv = [o.partition("=") for o in (args.overrides or ["answer.followup_context=false"])]
    if any(not eq or not k.strip() for k, eq, _ in pairs_kv):
        sys.exit("--set: expected KEY=VALUE, e.g. answer.followup_context=false")
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    try:
        variant = with_overrides(cfg, {k.strip(): v.strip() for k, _, v in pairs_kv})
    except ConfigError as exc:
        sys.exit(f"--set: {exc}")
    embedder = make_embedder(cfg.embedding)
    rows: list[dict[str, Any]] = []
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        golden = load_golden(folder)
        store = build_store(golden, cfg, embedder)
        pairs = openers(golden)
        base = second_turn_refusals(build_service(golden, cfg, "dense", embedder, store=store), golden, pairs)
        other = second_turn_refusals(build_service(golden, variant, "dense", embedder, store=store), golden, pairs)
        tags = {q.qid: q.tag for q in golden.questions}
        rows += [dict(set=name, qid=qid, tag=tags[qid], default=base[qid], variant=other[qid]) for qid in pairs]
        skipped = sum(q.tag in REFUSE_TAGS for q in golden.questions) - len(pairs)
        print(f"{name}: {len(pairs)} refuse-slice questions asked second ({skipped} without an opener)",
              file=sys.stderr, flush=True)
    report: dict[str, Any] = {"data": args.data, "variant": dict(o.split("=", 1) for o in args.overrides or
                                                                 ["answer.followup_context=false"])}
    for tag in REFUSE_TAGS:
        mine = [r for r in rows if r["tag"] == tag]
        report[tag] = {"asked": len(mine), "refused_default": sum(r["default"] for r in mine),
                       "refused_variant": sum(r["variant"] for r in mine)}
    report["variant_lost"] = [f"{r['set']}:{r['qid']}" for r in rows if r["default"] and not r["variant"]]
    report["variant_won"] = [f"{r['set']}:{r['qid']}" for r in rows if r["variant"] and not r["default"]]
    if args.json:
        print(json.dumps(report))
        return
    for tag in REFUSE_TAGS:
        t = report[tag]
        print(f"{tag}: {t['asked']} asked second; refused {t['refused_default']} (default), "
              f"{t['refused_variant']} (variant)")
    print(f"refusals the variant loses: {len(report['variant_lost'])} {' '.join(report['variant_lost'])}")
    print(f"refusals the variant wins: {len(report['variant_won'])} {' '.join(report['variant_won'])}")


if __name__ == "__main__":
    main()
