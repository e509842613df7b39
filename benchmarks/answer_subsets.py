"""Answer systems on a stratified subset of a golden set: 5 questions per slice plus whole follow-up chains until
≥ 5 follow-up questions (about 30). For slow readers (the local LLM): seconds per question and every answer measure.

    python benchmarks/answer_subsets.py --data data/golden --system extractive   # the default `answer`
    python benchmarks/answer_subsets.py --data data/golden --system llama        # `answer-llama` (Qwen reader)
    python benchmarks/answer_subsets.py --data data/golden --system judge        # extractive + Qwen judge
    python benchmarks/answer_subsets.py --data data/golden --system rerank --min-yes 0.3,0.4,0.5,0.6
        # extractive + Qwen judging every retrieved passage first (answer.judge_mode=rerank); one line per
        # threshold answer.judge_min_yes, the judge's P(yes) computed once per prompt and reused across thresholds
    python benchmarks/answer_subsets.py --data data/golden --set answer.rerank=llama --rerank-cache rr.db
        # extractive with Qwen's query-likelihood reranking of the top 10 passages (scores kept for reruns)
"""
from __future__ import annotations

import argparse
import json
import shelve
import time
from typing import MutableMapping

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
    ap.add_argument("--system", choices=("extractive", "llama", "judge", "rerank"), default="extractive",
                    help="extractive reader, Qwen reader (strict prompt), extractive + Qwen judge of the answer, "
                         "or extractive + Qwen judge of every retrieved passage (rerank)")
    ap.add_argument("--per-slice", type=int, default=5, help="questions per slice (default 5); 0 = every question")
    ap.add_argument("--min-yes", default="",
                    help="comma-separated answer.judge_min_yes values to sweep (graded judges; default: config)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, repeatable (e.g. answer.answerability_min_similarity=0.32)")
    ap.add_argument("--rerank-cache", metavar="PATH",
                    help="keep the query-likelihood reranker's scores (answer.rerank) in this shelve file")
    args = ap.parse_args()
    golden = load_golden(args.data)
    qids = subset(golden, args.per_slice) if args.per_slice > 0 else [q.qid for q in golden.questions]
    cfg = answer_config(None, "dense")
    if args.system == "llama":
        cfg = model_config(cfg, "llama")
    elif args.system in ("judge", "rerank"):
        cfg = with_overrides(cfg, {"answer.judge": "llama",
                                   "answer.judge_mode": "rerank" if args.system == "rerank" else "verdict"})
    sets = dict(kv.split("=", 1) for kv in args.set)
    if sets:
        cfg = with_overrides(cfg, sets)
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, embedder)
    chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
    cache = shelve.open(args.rerank_cache) if args.rerank_cache else None
    service = build_service(golden, cfg, "dense", embedder, store=store, rerank_cache=cache)
    if service.judge is not None and hasattr(service.judge.model, "yes_probability"):
        service.judge.model = MemoJudge(service.judge.model)
    for tau in [float(t) for t in args.min_yes.split(",") if t.strip()] or [None]:
        if tau is not None and service.judge is not None:
            service.judge.min_yes = tau
        start = time.perf_counter()
        answers, prompts = answer_golden(service, golden, qids)
        seconds = (time.perf_counter() - start) / len(qids)
        rows = [answers[q].to_row(q) for q in qids]
        base = evaluate_answers(pd.DataFrame(rows), [AnswerGold.from_golden(golden.question(q)) for q in qids])
        extra = score_answers(args.system, golden, answers, prompts, chunk_doc)
        extra = extra[~extra["measure"].isin(base["measure"].unique())][["qid", "measure", "value"]]
        both = pd.concat([base, extra])
        means = both.groupby("measure")["value"].mean()
        refusal = both[both["measure"] == "RefusalAccuracy"]
        refusal = refusal.assign(tag=refusal["qid"].map({q.qid: q.tag for q in golden.questions}))
        print(json.dumps({"data": args.data, "system": args.system, "questions": len(qids),
                          "judge_min_yes": tau, "sets": sets, "seconds_per_question": round(seconds, 2),
                          "measures": {k: round(float(v), 4) for k, v in means.items() if v == v},
                          "refusal_by_slice": {k: round(float(v), 4)
                                               for k, v in refusal.groupby("tag")["value"].mean().items()}}),
              flush=True)
    if cache is not None:
        cache.close()


class MemoJudge:
    """A judge model whose graded verdicts are computed once per prompt (threshold sweeps reuse them), kept in
    ``memo`` (default: a dict; a shelve file keeps them across runs)."""

    def __init__(self, model, memo: MutableMapping[str, float] | None = None) -> None:
        self.model = model
        self.model_id = model.model_id
        self.memo: MutableMapping[str, float] = {} if memo is None else memo

    def yes_probability(self, messages) -> float:
        key = messages[-1].content
        if key not in self.memo:
            self.memo[key] = float(self.model.yes_probability(messages))
        return self.memo[key]


if __name__ == "__main__":
    main()
