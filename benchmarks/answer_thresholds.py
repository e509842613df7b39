"""Choose the answerability thresholds on one golden set and report them on another (docs/answers.md).

Every question of each set is answered once with the two thresholds out of play (``answer.answerability_min_
coverage`` and ``_min_similarity`` at 1.0, so that every answer that passes the other checks is refused on them
and its soft coverage and similarity are recorded). A threshold pair then decides offline: refused ⇔ refused
for another reason, or soft coverage < c and similarity < s. The grid (c in 0–1 step 0.05, s in 0.20–0.94 step
0.02) is searched for refusal accuracy on each set alone and on both pooled; every pair reaching the best
accuracy is a choice (small sets have flat optima), and each is reported on every set. ``--ranks`` adds where
dense retrieval puts the first chunk holding an answerable question's fact (top 1 / top 5, per slice).

    python benchmarks/answer_thresholds.py --data data/golden data/golden_alderbrook [--ranks]
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

import numpy as np

from ragbench.config import with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
from ragbench.eval.golden import load_golden

OFF = {"answer.answerability_min_coverage": 1.0, "answer.answerability_min_similarity": 1.0}


@dataclass(frozen=True)
class Row:
    should_refuse: bool
    other: bool  # refused for a reason no threshold can undo
    coverage: float
    similarity: float


def features(data: str) -> list[Row]:
    golden = load_golden(data)
    cfg = with_overrides(answer_config(None, "dense"), OFF)
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
    answers, _ = answer_golden(service, golden)
    rows = []
    for q in golden.questions:
        a = answers[q.qid]
        check = a.answerability
        on_thresholds = a.refusal_reason == "unanswerable-question" and check is not None \
            and str(check.reason or "").startswith("coverage")
        rows.append(Row(q.should_refuse, a.refused and not on_thresholds,
                        check.soft_coverage if check is not None else 0.0,
                        check.similarity if check is not None else 0.0))
    return rows


def accuracy(rows: list[Row], c: float, s: float) -> float:
    refused = [r.other or not (r.coverage >= c or r.similarity >= s) for r in rows]
    return float(np.mean([ref == r.should_refuse for ref, r in zip(refused, rows)]))


def choose(rows: list[Row]) -> list[tuple[float, float]]:
    """Every (coverage, similarity) pair of the grid with the best refusal accuracy on ``rows``."""
    grid = [(round(float(c), 2), round(float(s), 2)) for c in np.arange(0, 1.001, 0.05)
            for s in np.arange(0.2, 0.941, 0.02)]
    scores = {cs: accuracy(rows, *cs) for cs in grid}
    best = max(scores.values())
    return [cs for cs, v in scores.items() if v == best]


def ranks(data: str) -> dict[str, dict[str, int]]:
    """Per slice of answerable questions: how many, and how often the first chunk holding the fact is dense rank 1
    or within the top 5 (of 20), for the asker."""
    from ragbench.answer import PrincipalRegistry
    from ragbench.retrieval.embedding import make_embedder
    from ragbench.retrieval.retriever import retriever_from_store

    golden = load_golden(data)
    cfg = answer_config(None, "dense")
    embedder = make_embedder(cfg.embedding)
    retriever = retriever_from_store(build_store(golden, cfg, embedder), "dense", cfg, embedder)
    principals = PrincipalRegistry(golden.principals)
    out: dict[str, dict[str, int]] = {}
    for q in golden.questions:
        if q.should_refuse or q.chain_id is not None or not q.answer_fact:
            continue
        hits = retriever.search(q.question, k=20, principal=principals.get(q.asked_by))
        rank = next((i for i, h in enumerate(hits) if q.answer_fact.lower() in h.text.lower()), None)
        slot = out.setdefault(q.tag, {"questions": 0, "top1": 0, "top5": 0})
        slot["questions"] += 1
        slot["top1"] += rank == 0
        slot["top5"] += rank is not None and rank < 5
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden", "data/golden_alderbrook"], help="golden folders")
    ap.add_argument("--ranks", action="store_true", help="also where dense retrieval ranks the fact's chunk")
    args = ap.parse_args()
    sets = {d: features(d) for d in args.data}
    chosen = {f"chosen on {d}": choose(rows) for d, rows in sets.items()}
    chosen["chosen on all pooled"] = choose([r for rows in sets.values() for r in rows])
    for name, pairs in chosen.items():
        at_half = [s for c, s in pairs if c == 0.5]  # coverage 0.5 (the shipped one) where it is among the best
        print(json.dumps({"thresholds": name, "best_pairs": len(pairs), "pairs": pairs,
                          "min_similarity_at_coverage_0.5": at_half,
                          "refusal_accuracy": {d: sorted({round(accuracy(rows, c, s), 3) for c, s in pairs})
                                               for d, rows in sets.items()},
                          "at_coverage_0.5": {d: sorted({round(accuracy(rows, 0.5, s), 3) for s in at_half})
                                              for d, rows in sets.items()}}))
    if args.ranks:
        for d in args.data:
            print(json.dumps({"data": d, "dense_fact_rank": ranks(d)}))


if __name__ == "__main__":
    main()
