"""Choose how many sentences the extractive reader quotes on some golden sets and report it on another.

The reader quotes its best sentence, then more (up to ``answer.extractive_max_sentences``) that score at least
``answer.extractive_sentence_ratio`` × the best, then up to ``answer.extractive_same_passage_sentences`` more from
passages it already quotes that score at least ``answer.extractive_same_passage_ratio`` × the best (docs/answers.md,
"Reading"). More sentences hold the golden fact more often (FactInAnswer, HandledRight) but may cite documents that
do not hold it (CitationPrecision), and the answerability check reads every quoted sentence. Every question of each
set is answered under each point of a grid over two of these fields (``--grid``; one store per set), and each point
is scored per set. The choice: the point with the most questions handled right pooled over the sets it is chosen
on, among the points whose citation precision is at least ``--min-precision`` on every one of them (the issue's
target, 0.85). With three or more sets, each set is left out in turn and the point chosen on the others is reported
on it.

    python benchmarks/answer_reader.py --data data/golden data/golden_alderbrook … [--jobs 2] [--out grid.json] \
        [--grid answer.extractive_same_passage_sentences=0,1,2 --grid answer.extractive_same_passage_ratio=0.5,0.7]
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from ragbench.config import AnswerConfig, with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, score_answers
from ragbench.eval.golden import load_golden

sys.path.insert(0, os.path.dirname(__file__))
from answer_thresholds import ties

DEFAULT_GRID: dict[str, list[Any]] = {"answer.extractive_max_sentences": [1, 2, 3, 4],
                                      "answer.extractive_sentence_ratio": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}
MEASURES = ("RefusalAccuracy", "HandledRight", "CitationPrecision", "AnyCorrectCitation", "FactInAnswer")


def points(axes: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the axes' values, in order."""
    return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]


def label(point: dict[str, Any]) -> str:
    return ",".join(str(v) for v in point.values())


def parse_grid(specs: list[str]) -> dict[str, list[Any]]:
    """``KEY=V1,V2,…`` per axis (numbers parsed as int or float)."""
    axes: dict[str, list[Any]] = {}
    for spec in specs:
        key, _, values = spec.partition("=")
        if not values:
            raise SystemExit(f"--grid {spec!r}: expected KEY=V1,V2,… (e.g. answer.extractive_max_sentences=2,3)")
        axes[key.strip()] = [int(v) if v.strip().lstrip("-").isdigit() else float(v) for v in values.split(",")]
    return axes


def run_set(data: str, axes: dict[str, list[Any]]) -> dict[str, Any]:
    """Per point of the grid: per measure, its sum and how many questions it applies to (so sets pool by counts,
    not by averaging averages)."""
    from ragbench.retrieval.embedding import make_embedder

    golden = load_golden(data)
    cfg = answer_config(None, "dense")
    embedder = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, embedder)
    out: dict[str, Any] = {}
    for point in points(axes):
        pcfg = with_overrides(cfg, point)
        service = build_service(golden, pcfg, "dense", embedder, store=store)
        answers, prompts = answer_golden(service, golden)
        per_q = score_answers("answer", golden, answers, prompts).dropna(subset=["value"])
        sums = per_q.groupby("measure")["value"].agg(["sum", "count"])
        out[label(point)] = {k: [float(sums.loc[k, "sum"]), int(sums.loc[k, "count"])] for k in MEASURES
                           if k in sums.index}
    return out


def pooled(results: dict[str, dict[str, Any]], sets: list[str], point: str, measure: str) -> float:
    """``measure`` at ``point`` over ``sets``, pooled by question counts."""
    s = sum(results[d][point][measure][0] for d in sets)
    n = sum(results[d][point][measure][1] for d in sets)
    return s / n if n else float("nan")


def choose(results: dict[str, dict[str, Any]], sets: list[str], min_precision: float) -> list[str]:
    """The points with the most questions handled right pooled over ``sets``, among those whose citation
    precision reaches ``min_precision`` on each of them (every point when none does)."""
    every = list(results[sets[0]])
    ok = [p for p in every
          if all(pooled(results, [d], p, "CitationPrecision") >= min_precision for d in sets)] or every
    return ties({p: pooled(results, sets, p, "HandledRight") for p in ok})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden", "data/golden_alderbrook"], help="golden folders")
    ap.add_argument("--min-precision", type=float, default=0.85, help="citation precision every set must keep")
    ap.add_argument("--jobs", type=int, default=1, help="sets answered in parallel")
    ap.add_argument("--out", metavar="PATH", help="also write the per-set, per-point counts here (JSON)")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,…",
                    help="an axis of the grid (repeatable; default: max_sentences × sentence_ratio)")
    ap.add_argument("--results", metavar="PATH", help="reuse counts written by --out instead of answering")
    args = ap.parse_args()
    axes = parse_grid(args.grid) if args.grid else DEFAULT_GRID
    if args.results:
        saved = json.loads(Path(args.results).read_text(encoding="utf-8"))
        axes, results = saved["axes"], saved["results"]
    else:
        with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = dict(zip(args.data, pool.map(partial(run_set, axes=axes), args.data)))
        if args.out:
            Path(args.out).write_text(json.dumps({"axes": axes, "results": results}), encoding="utf-8")
    sets = list(results)
    defaults = AnswerConfig()
    shipped = label({k: getattr(defaults, k.split(".", 1)[1]) for k in axes})
    print(json.dumps({"axes": list(axes), "shipped": shipped}))
    for point in results[sets[0]]:
        print(json.dumps({"point": point, **{k: round(pooled(results, sets, point, k), 4) for k in MEASURES},
                          "handled_right": int(sum(results[d][point]["HandledRight"][0] for d in sets)),
                          "min_citation_precision": round(min(pooled(results, [d], point, "CitationPrecision")
                                                              for d in sets), 4)}))
    picks = {"all pooled": choose(results, sets, args.min_precision)}
    if len(sets) > 2:
        picks.update({f"all but {d}": choose(results, [o for o in sets if o != d], args.min_precision)
                      for d in sets})
    held_out: dict[str, list[float]] = {k: [] for k in MEASURES}
    for name, chosen in picks.items():
        row: dict[str, Any] = {"chosen_on": name, "points": chosen, "shipped_is_a_tie": shipped in chosen}
        if name.startswith("all but "):
            d = name[len("all but "):]
            for k in MEASURES:  # ties: the mean over the tied points
                v = sum(pooled(results, [d], p, k) for p in chosen) / len(chosen)
                row[k] = round(v, 4)
                held_out[k].append(v)
            row["shipped"] = {k: round(pooled(results, [d], shipped, k), 4) for k in MEASURES}
        print(json.dumps(row))
    if any(held_out.values()):
        print(json.dumps({"held_out_average": {k: round(sum(v) / len(v), 4) for k, v in held_out.items()},
                          "shipped_average": {k: round(sum(pooled(results, [d], shipped, k) for d in sets)
                                                       / len(sets), 4) for k in MEASURES}}))


if __name__ == "__main__":
    main()
