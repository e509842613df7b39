"""``ragbench eerag converse FILE``: LoCoMo conversations replayed turn by turn through the EE-RAG + DCS system;
at each QA question the context is built four ways (full-history, top-k, eerag, eerag+dcs) and scored by evidence
recall, context tokens and model calls, per LoCoMo category, with paired tests and one MLflow run.

With ``--variants`` (a JSON list of ``eerag.*`` override objects) every variant runs on the same replay and
``eerag (LOCO)`` / ``eerag+dcs (LOCO)`` report, for each conversation, the variant chosen on the *other*
conversations (best recall within ``--max-share`` of the full-history tokens): the number to trust for unseen
conversations. With ``--json`` stdout is one line: ``{"questions", "systems", "significance", "model_id",
"mlflow_run_id", ...}``.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import add_tracking_option
from ._eerag_common import chat_model, config_from, track

#: The variant grid of the documented run (docs/eerag.md). Every axis is a design choice, not a fitted threshold:
#: summary length (the source's ~25 tokens, or 60 = most LoCoMo turns whole), header size (10 or 20 candidates,
#: DCS boosting from a pool twice as large) and how the policy elects (the default: ≤ 3 within 0.1 of the best;
#: "wide": ≤ 5 within 0.3, favouring the retriever's order by 0.02 per position).
DEFAULT_VARIANTS = [
    {"eerag.summary_tokens": s, "eerag.top_k": k, "eerag.candidate_k": 2 * k, **elect}
    for s in (25, 60) for k in (10, 20)
    for elect in ({}, {"eerag.max_expand": 5, "eerag.margin": 0.3, "eerag.rank_weight": 0.02})
]


def _round(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def _run(args: argparse.Namespace) -> int:
    from ..eval.eerag_converse import run_converse, with_loco
    from ._common import Output, show_progress

    out = Output(args)
    cfg = config_from(argparse.Namespace(**{**vars(args), "k": None}))
    variants = DEFAULT_VARIANTS if args.variants == "default" else json.loads(args.variants or "[]")
    model = chat_model(args.model)
    result = run_converse(args.file, cfg, chat_model=model, k=args.k or 10, variants=variants,
                          conversations=args.conversation or None, max_questions=args.max_questions,
                          show_progress=show_progress(args))
    result = with_loco(result, args.max_share)
    systems = result.systems()
    significance = result.paired("eerag+dcs", "eerag")
    tests = {"eerag+dcs vs eerag": significance, "eerag vs top-k": result.paired("eerag", "top-k"),
             "eerag+dcs vs top-k": result.paired("eerag+dcs", "top-k")}
    if "eerag (LOCO)" in systems:
        tests["eerag+dcs (LOCO) vs eerag (LOCO)"] = result.paired("eerag+dcs (LOCO)", "eerag (LOCO)")
        tests["eerag (LOCO) vs top-k"] = result.paired("eerag (LOCO)", "top-k")
    pq = result.per_question
    questions = int(pq[pq.system == "full-history"].shape[0])
    chosen = {}
    for fam in ("eerag (LOCO)", "eerag+dcs (LOCO)"):
        if "chosen" in pq and fam in systems:
            sel = pq[pq.system == fam].groupby("conversation")["chosen"].first()
            chosen[fam] = {str(c): str(v) for c, v in sel.items()}
    diagnostics = result.dcs_diagnostics()
    folder = Path(args.out) if args.out else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        pq.to_csv(folder / "per_question.csv", index=False)
    lines = [f"{'system':<20} {'recall':>7} {'tokens':>8} {'share':>6} {'calls':>5}"]
    for name, sm in systems.items():
        lines.append(f"{name:<20} {sm['evidence_recall']:7.3f} {sm['context_tokens']:8.0f} "
                     f"{sm['token_share']:6.1%} {sm['model_calls']:5.2f}")
    for name, d in diagnostics.items():
        lines.append(f"{name}: header changed {d['header_changed']:.1%}, elected changed {d['elected_changed']:.1%},"
                     f" DCS context {d['dcs_context_turns']:.0f} turns ({d['dcs_turn_share']:.1%} of the "
                     f"conversation) holding {d['evidence_in_dcs_context']:.1%} of the evidence "
                     f"(lift {d['lift']:.2f})")
    for name, t in tests.items():
        lines.append(f"{name}: delta {t['delta']:+.3f} CI [{t['ci'][0]:+.3f}, {t['ci'][1]:+.3f}] "
                     f"p={t['p_value']:.2g}")
    lines.append(f"leave-one-conversation-out choices: {chosen}")
    out.text(*lines)
    metrics: dict[str, float] = {"questions": float(questions), "significance.p_value": significance["p_value"],
                                 "significance.delta": significance["delta"]}
    for name, sm in systems.items():
        for key in ("evidence_recall", "context_tokens", "model_calls", "token_share"):
            metrics[f"{name}.{key}"] = float(sm[key])
    run_id, status = track(args, out, cfg, f"converse-{Path(args.file).stem}", metrics,
                            {"file": str(args.file), "k": args.k or 10, "model_id": result.settings["model_id"],
                             "variants": json.dumps(variants), "max_share": args.max_share},
                            args.file, [folder])
    out.json({"questions": questions, "systems": _round(systems), "significance": _round(significance),
              "tests": _round(tests), "dcs_diagnostics": _round(diagnostics), "loco_choice": chosen,
              "variants": variants, "model_id": result.settings["model_id"], "settings": result.settings,
              "mlflow_run_id": run_id})
    return status


def register(inner: argparse._SubParsersAction, add_grammar: Callable[..., None]) -> None:
    p = inner.add_parser("converse", help="replay LoCoMo conversations through EE-RAG + DCS and compare contexts")
    p.add_argument("file", help="LoCoMo JSON file (e.g. locomo_dev.json)")
    p.add_argument("--elector", choices=["policy", "llm"], help="who elects (eerag.elector; default policy)")
    p.add_argument("--conversation", action="append", help="only this sample_id (repeatable)")
    p.add_argument("--max-questions", type=int, help="first n questions per conversation")
    p.add_argument("--variants", default="default",
                   help="JSON list of eerag.* override objects to compare, 'default' (the documented grid) or '[]'")
    p.add_argument("--max-share", type=float, default=0.10,
                   help="token budget for the leave-one-conversation-out choice, share of full-history (0.10)")
    p.add_argument("--out", help="folder for per_question.csv")
    add_grammar(p, "turns in the top-k baseline (default 10); the header size is eerag.top_k")
    add_tracking_option(p)
    p.set_defaults(func=_run)
