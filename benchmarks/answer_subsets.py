"""Answer systems on a stratified subset of a golden set: 5 questions per slice plus whole follow-up chains until
≥ 5 follow-up questions (about 30). For slow readers (the local LLM): seconds per question and every answer measure.

    python benchmarks/answer_subsets.py --data data/golden --system extractive   # the default `answer`
    python benchmarks/answer_subsets.py --data data/golden --system llama        # `answer-llama` (Qwen reader)
    python benchmarks/answer_subsets.py --data data/golden --system judge        # extractive + Qwen judge
"""
from __future__ import annotations

import argparse
import json
import time

import pandas as pd

from ragbench.config import with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, model_config, score_answers
from ragbench.eval.golden import load_golden
from ragbench.eval.metrics import AnswerGold, evaluate_answers

SLICES = ("direct", "paraphrase", "multi-doc", "refuse-acl", "refuse-unanswerable")


def subset(golden, per_slice: int = 5) -> list[str]:
    qids = [q.qid for t in SLICES for q in [q for q in golden.questions if q.tag == t][:per_slice]]
    n = 0
    for chain in golden.chains().values():
        if n >= per_slice:
            break
        qids += [q.qid for q in chain]
        n += len(chain)
    return qids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/golden", help="golden folder")
    ap.add_argument("--system", choices=("extractive", "llama", "judge"), default="extractive",
                    help="extractive reader, Qwen reader (strict prompt), or extractive + Qwen judge")
    ap.add_argument("--per-slice", type=int, default=5, help="questions per slice (default 5)")
    args = ap.parse_args()
    golden = load_golden(args.data)
    qids = subset(golden, args.per_slice)
    cfg = answer_config(None, "dense")
    if args.system == "llama":
        cfg = model_config(cfg, "llama")
    elif args.system == "judge":
        cfg = with_overrides(cfg, {"answer.judge": "llama"})
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, embedder)
    chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
    service = build_service(golden, cfg, "dense", embedder, store=store)
    start = time.perf_counter()
    answers, prompts = answer_golden(service, golden, qids)
    seconds = (time.perf_counter() - start) / len(qids)
    rows = [answers[q].to_row(q) for q in qids]
    base = evaluate_answers(pd.DataFrame(rows), [AnswerGold.from_golden(golden.question(q)) for q in qids])
    extra = score_answers(args.system, golden, answers, prompts, chunk_doc)
    extra = extra[~extra["measure"].isin(base["measure"].unique())][["qid", "measure", "value"]]
    means = pd.concat([base, extra]).groupby("measure")["value"].mean()
    print(json.dumps({"data": args.data, "system": args.system, "questions": len(qids),
                      "seconds_per_question": round(seconds, 2),
                      "measures": {k: round(float(v), 4) for k, v in means.items() if v == v}}))


if __name__ == "__main__":
    main()
