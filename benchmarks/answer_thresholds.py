"""Choose the answerability thresholds on one golden set and report them on another (docs/answers.md).

Every question of each set is answered once with the three thresholds out of play (``answer.answerability_min_
coverage`` and ``_min_similarity`` at 1.0, so that every answer that passes the other checks is refused on them and
its soft coverage and similarity are recorded, for a multi-part question also each part's; ``answer.
restricted_gap`` at 1.0, so the gap is measured and never refuses). A choice then decides offline: refused ⇔ refused
for another reason, or restricted gap ≥ g (g > 0), or soft coverage < c and (similarity < s or a passage the asker
may not read covers more of the question: ``Answer.restricted_lead`` > 0) (for a multi-part
question: for the whole question and for every part, as the service does). The pair grid (c in 0–1 step 0.05, s in
0.20–0.94 step 0.02) is searched on each set alone, on all pooled and, with three or more sets, on all but one
(reported on the one left out), with g at its configured value, for the share
of questions *handled right* (a should-refuse question refused, an answerable one answered with its golden fact;
``--objective refusal`` for plain refusal accuracy, which counts a wrong answer as right; ``--objective balanced``
for the mean of the two sides' shares, should-refuse questions refused and answerable ones answered with their
fact); every pair reaching the
best value is a choice (small sets have flat optima), and each is reported on every set. Then g (0 = off, 0.05–0.6
step 0.05) is chosen on each set at that set's chosen pairs and reported on the other.
``--ranks`` adds where dense retrieval puts the first chunk holding an answerable question's fact (top 1 / top 5,
per slice).

``--heldout DIR …`` keeps those sets out of every choice: the pair is chosen on the ``--data`` sets pooled (of
tied pairs, the one nearest the shipped pair) and reported on the held-out sets pooled against the shipped pair,
in questions: handled right, refusal accuracy and each refuse slice.

    python benchmarks/answer_thresholds.py --data data/golden data/golden_alderbrook [--objective refusal|balanced] \
        [--ranks] [--save-rows rows.json | --rows rows.json] [--heldout data/golden_x …]
"""
from __future__ import annotations

import argparse
import json
import shelve
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, MutableMapping

import numpy as np

from ragbench.commands._common import parse_sets
from ragbench.config import AnswerConfig, with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
from ragbench.eval.golden import load_golden

OFF = {"answer.answerability_min_coverage": 1.0, "answer.answerability_min_similarity": 1.0,
       "answer.restricted_gap": 1.0}
GAP = AnswerConfig().restricted_gap
GAPS = [0.0] + [round(float(g), 2) for g in np.arange(0.05, 0.601, 0.05)]


@dataclass(frozen=True)
class Row:
    should_refuse: bool
    other: bool  # refused for a reason no threshold can undo
    coverage: float
    similarity: float
    gap: float  # AnsweringService.restricted_gap
    tag: str
    fact: bool  # answerable, and the reply (refused or not) holds the golden fact (or the question names none)
    parts: tuple[tuple[bool, float, float], ...] = ()  # per part of a multi-part question: (other, coverage, sim)
    lead: float = 0.0  # AnsweringService.restricted_lead: above 0, similarity cannot answer (coverage must)


def features(data: str, overrides: dict[str, Any] | None = None,
             rerank_cache: MutableMapping[str, float] | None = None) -> list[Row]:
    golden = load_golden(data)
    cfg = with_overrides(answer_config(None, "dense"), {**(overrides or {}), **OFF})
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder),
                            rerank_cache=rerank_cache)
    answers, _ = answer_golden(service, golden)
    return [row_of(q, answers[q.qid]) for q in golden.questions]


def row_of(q: Any, a: Any) -> Row:
    """The replay row of golden question ``q`` answered ``a`` with the thresholds out of play."""
    check = a.answerability
    on_thresholds = a.refusal_reason == "unanswerable-question" and check is not None and check.on_thresholds
    # A reply refused on the thresholds still has its grounded sentences: what it would have said.
    said = " ".join(x.sentence.text for x in a.sentences) if on_thresholds else a.answer
    fact = not q.should_refuse and (not q.answer_fact or q.answer_fact.lower() in said.lower())
    # Per part: refused for a reason no threshold can undo (answer type, conflict, unknown name), and signals.
    parts = tuple((not r.answerable and not r.on_thresholds, r.soft_coverage, r.similarity)
                  for _, r in check.parts) if check else ()
    return Row(q.should_refuse, a.refused and not on_thresholds, check.soft_coverage if check is not None else 0.0,
               check.similarity if check is not None else 0.0, a.restricted_gap, q.tag, fact, parts,
               a.restricted_lead)


def refused(r: Row, c: float, s: float, g: float = GAP) -> bool:
    def fails(other: bool, cov: float, sim: float) -> bool:
        return other or not (cov >= c or (r.lead <= 0 and sim >= s))

    # Parts rescue only a whole question refused on the thresholds (answerability.combine_parts); one refused for
    # another reason is r.other already.
    return r.other or (g > 0 and r.gap >= g) or (fails(False, r.coverage, r.similarity)
                                                and all(fails(*p) for p in r.parts))


def accuracy(rows: list[Row], c: float, s: float, g: float = GAP, tag: str | None = None) -> float:
    """Refusal accuracy (of the questions tagged ``tag``, or all)."""
    picked = [r for r in rows if tag is None or r.tag == tag]
    return float(np.mean([refused(r, c, s, g) == r.should_refuse for r in picked]))


def handled(rows: list[Row], c: float, s: float, g: float = GAP) -> float:
    """Share of questions handled right: a should-refuse question refused, an answerable one answered with its
    fact. Unlike refusal accuracy, an answer quoting the wrong sentence counts as a miss."""
    return float(np.mean([refused(r, c, s, g) if r.should_refuse else (not refused(r, c, s, g) and r.fact)
                          for r in rows]))


def balanced(rows: list[Row], c: float, s: float, g: float = GAP) -> float:
    """Handled right with both sides weighing the same: the mean of the share of should-refuse questions refused
    and the share of answerable questions answered with their fact (each set has about three answerable questions
    for every one to refuse, so plain handled right favours answering)."""
    refuse = [refused(r, c, s, g) for r in rows if r.should_refuse]
    answer = [not refused(r, c, s, g) and r.fact for r in rows if not r.should_refuse]
    return float(np.mean([np.mean(refuse) if refuse else 1.0, np.mean(answer) if answer else 1.0]))


OBJECTIVES: dict[str, Callable[..., float]] = {"handled": handled, "refusal": accuracy, "balanced": balanced}


def choose(rows: list[Row], objective: Callable[..., float]) -> list[tuple[float, float]]:
    """Every (coverage, similarity) pair of the grid with the best ``objective`` on ``rows`` (gap as configured)."""
    grid = [(round(float(c), 2), round(float(s), 2)) for c in np.arange(0, 1.001, 0.05)
            for s in np.arange(0.2, 0.941, 0.02)]
    return ties({cs: objective(rows, *cs) for cs in grid})


def choose_gap(rows: list[Row], pairs: list[tuple[float, float]], objective: Callable[..., float]) -> list[float]:
    """The gaps (0 = off) with the best mean ``objective`` on ``rows`` over the chosen ``pairs``."""
    return ties({g: float(np.mean([objective(rows, c, s, g) for c, s in pairs])) for g in GAPS})


def ties(scores: dict[Any, float]) -> list[Any]:
    """Every key with the best score (small sets have flat optima)."""
    best = max(scores.values())
    return [key for key, v in scores.items() if v == best]


def spread(values: Iterable[float]) -> list[float]:
    """``[min, max]`` of ``values`` rounded to 3 places (one element when they agree)."""
    vals = sorted({round(v, 3) for v in values})
    return [vals[0], vals[-1]] if len(vals) > 1 else vals


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


def counts(rows: list[Row], c: float, s: float) -> dict[str, int]:
    """Questions handled right, refused rightly or answered (refusal accuracy), and per refuse slice."""
    n = len(rows)
    out = {"questions": n, "handled": round(handled(rows, c, s) * n),
           "refusal_accuracy": round(accuracy(rows, c, s) * n)}
    for tag in ("refuse-acl", "refuse-unanswerable"):
        m = sum(r.tag == tag for r in rows)
        out[tag] = round(accuracy(rows, c, s, tag=tag) * m) if m else 0
    return out


def report_heldout(train: dict[str, list[Row]], held: dict[str, list[Row]], objective: Callable[..., float]) -> None:
    """Choose the pair on ``train`` pooled (ties: nearest the shipped pair) and print it on ``held`` pooled."""
    shipped = (AnswerConfig().answerability_min_coverage, AnswerConfig().answerability_min_similarity)
    pooled = [r for rows in train.values() for r in rows]
    pairs = choose(pooled, objective)
    pick = min(pairs, key=lambda p: (p[0] - shipped[0]) ** 2 + (p[1] - shipped[1]) ** 2)
    test = [r for rows in held.values() for r in rows]
    print(json.dumps({"thresholds": "chosen on --data pooled, reported on --heldout pooled", "best_pairs": pairs,
                      "pick": pick, "shipped": shipped, "chosen_on": counts(pooled, *pick),
                      "shipped_on_chosen": counts(pooled, *shipped), "heldout": counts(test, *pick),
                      "shipped_on_heldout": counts(test, *shipped)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden", "data/golden_alderbrook"], help="golden folders")
    ap.add_argument("--objective", choices=sorted(OBJECTIVES), default="handled",
                    help="what the thresholds maximise (default: questions handled right)")
    ap.add_argument("--ranks", action="store_true", help="also where dense retrieval ranks the fact's chunk")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override for every run (e.g. answer.rerank=llama)")
    ap.add_argument("--rerank-cache", metavar="PATH", help="keep the reranker's scores in this shelve file")
    ap.add_argument("--save-rows", metavar="PATH", help="also write every question's signals here (JSON)")
    ap.add_argument("--rows", metavar="PATH", help="reuse signals written by --save-rows instead of answering")
    ap.add_argument("--heldout", nargs="+", default=[], metavar="DIR",
                    help="sets kept out of every choice; the pair chosen on --data pooled is reported on them")
    args = ap.parse_args()
    objective = OBJECTIVES[args.objective]
    overrides = parse_sets(args.set)
    if args.rows:
        saved = json.loads(Path(args.rows).read_text(encoding="utf-8"))
        sets = {d: [Row(**{**r, "parts": tuple(tuple(p) for p in r["parts"])}) for r in rows]
                for d, rows in saved.items()}
    else:
        cache = shelve.open(args.rerank_cache) if args.rerank_cache else None
        try:
            sets = {d: features(d, overrides, cache) for d in [*args.data, *args.heldout]}
        finally:
            if cache is not None:
                cache.close()
    if args.save_rows:
        Path(args.save_rows).write_text(json.dumps({d: [asdict(r) for r in rows] for d, rows in sets.items()}),
                                        encoding="utf-8")
    missing = [d for d in args.heldout if d not in sets]
    if missing:
        raise SystemExit(f"--heldout {missing}: not in the rows file; save rows with these sets among --data")
    held = {d: sets.pop(d) for d in args.heldout}
    if held:
        report_heldout(sets, held, objective)
    chosen = {d: choose(rows, objective) for d, rows in sets.items()}
    chosen["all pooled"] = choose([r for rows in sets.values() for r in rows], objective)
    if len(sets) > 2:  # leave one set out: chosen on the others pooled, reported on it
        for held in sets:
            chosen[f"all but {held}"] = choose([r for d, rows in sets.items() if d != held for r in rows], objective)
    shipped = (AnswerConfig().answerability_min_coverage, AnswerConfig().answerability_min_similarity)
    for name, pairs in chosen.items():
        print(json.dumps({"thresholds": f"chosen on {name}", "objective": args.objective, "best_pairs": len(pairs),
                          "pairs": pairs, "shipped_pair_is_a_tie": list(shipped) in [list(p) for p in pairs],
                          "refusal_accuracy": {d: spread(accuracy(rows, c, s) for c, s in pairs)
                                               for d, rows in sets.items()},
                          "handled": {d: spread(handled(rows, c, s) for c, s in pairs) for d, rows in sets.items()}}))
    for d, pairs in chosen.items():
        if d not in sets:
            continue
        gaps = choose_gap(sets[d], pairs, objective)
        print(json.dumps({"restricted_gap": f"chosen on {d}", "objective": args.objective, "best_gaps": gaps,
                          **{m: {o: {str(g): spread(f(rows, c, s, g) for c, s in pairs) for g in sorted({0.0, GAP})}
                                 for o, rows in sets.items()}
                             for m, f in (("refusal_accuracy", accuracy), ("handled", handled))},
                          "refuse_acl": {o: {str(g): spread(accuracy(rows, c, s, g, "refuse-acl") for c, s in pairs)
                                             for g in sorted({0.0, GAP})} for o, rows in sets.items()}}))
    if args.ranks:
        for d in args.data:
            print(json.dumps({"data": d, "dense_fact_rank": ranks(d)}))


if __name__ == "__main__":
    main()
