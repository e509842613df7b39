"""Tuning benchmarks (results in docs/benchmarks.md, section "## Tuning").

1. ``cache``: a chunking sweep with the MiniLM embedder on the golden set (hybrid retrieval). The same seeded trial
   configurations run twice in fresh objects: once with the embedding cache switched off (every trial embeds its
   chunks and queries) and once with a warm persistent cache (what a re-run, a resumed study or a sweep revisiting
   chunkings gets). Reported: seconds per trial and the speed-up.
2. ``workers``: trials per minute of the same study with 1 and 2 worker processes sharing a journal file, end to
   end (process start and data loading included), and the check that the study holds exactly the budgeted trials,
   numbered 0…N-1. The study is the SciFact hybrid sweep on 300 seeded queries (70 % tuned), embeddings cached:
   a trial re-indexes BM25 (k1, b) and runs 210 queries, a few seconds of real work (golden-set trials take 0.2 s,
   less than starting a worker).
3. ``scifact``: ``experiments/scifact_fusion.yaml`` (SciFact train, BM25 + MiniLM hybrid; tune on a seeded 70 % of
   the queries, confirm on the other 30 %): held-out nDCG@10 of the tuned configuration against the default hybrid,
   with the paired permutation p-value.

    .venv/bin/python benchmarks/tune_bench.py [--part cache|workers|scifact|all] [--worker-trials 12]
        [--data /work/shared/data]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragbench.config import with_overrides  # noqa: E402
from ragbench.retrieval.factory import clear_shared_embedders  # noqa: E402
from ragbench.tune.space import load_spec, parse_spec  # noqa: E402
from ragbench.tune.sweep import optimize, prepare  # noqa: E402

CHUNKING = {
    "name": "bench_chunking", "dataset": "golden",
    "base": {"retrieval": {"mode": "hybrid", "k": 10}, "embedding": {"model": "minilm"}},
    "space": {"chunking.words": "int[20, 120]", "chunking.overlap": "float[0, 0.5]"},
    "metrics": [{"nDCG@10": "maximize"}], "split": {"heldout": 0.3, "seed": 7},
    "sampler": {"name": "random", "seed": 0}, "pruner": "none", "trials": 6,
}


def _fresh() -> None:
    """Forget every in-process memo so that only the persistent cache can help."""
    clear_shared_embedders()


def bench_cache(n_trials: int = 6) -> dict:
    import optuna

    spec = parse_spec(CHUNKING, tempfile.mkdtemp())
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0), direction="maximize")
    configs = []
    for _ in range(n_trials):  # the same seeded trial configurations for both passes
        t = study.ask()
        configs.append({p.name: p.suggest(t) for p in spec.space})
        study.tell(t, 0.0)
    cache = Path(tempfile.mkdtemp()) / "embeddings.sqlite"
    out: dict = {"trials": n_trials, "configs": configs}
    for label, overrides in (("uncached", {"embedding.cache": False}),
                             ("warm-up", {"embedding.cache": True, "embedding.cache_path": str(cache)}),
                             ("cached", {"embedding.cache": True, "embedding.cache_path": str(cache)})):
        _fresh()
        s = dataclasses.replace(spec, base=with_overrides(spec.base, overrides))
        prepared = prepare(s)  # a new objective: no memoised chunks or vectors
        times, scores = [], []
        for params in configs:
            cfg = s.config_for(params)
            t0 = time.perf_counter()
            per = prepared.objective(cfg, prepared.tune, prepared.metrics)
            times.append(time.perf_counter() - t0)
            scores.append(round(float(per["value"].mean()), 6))
            prepared.objective._vectors.items.clear()  # each trial must look its vectors up (or embed them)
        out[label] = {"seconds_per_trial": sum(times) / len(times), "times": times, "scores": scores}
        print(f"{label:9s} {sum(times) / len(times):7.2f} s/trial  nDCG@10 {scores}", flush=True)
    out["speedup"] = out["uncached"]["seconds_per_trial"] / out["cached"]["seconds_per_trial"]
    out["same_scores"] = out["uncached"]["scores"] == out["cached"]["scores"]
    print(f"speed-up cached vs uncached: {out['speedup']:.1f}x (same scores: {out['same_scores']})")
    return out


def bench_workers(n_trials: int = 12) -> dict:
    import optuna

    from ragbench.tune.storage import open_storage

    out: dict = {"trials": n_trials}
    spec = load_spec(ROOT / "experiments" / "scifact_fusion.yaml")
    spec = dataclasses.replace(spec, name="bench_workers", limit=300, pruner="none", folder=Path(tempfile.mkdtemp()))
    prepared = prepare(spec)
    prepared.objective(spec.base, prepared.tune, prepared.metrics)  # document and query vectors into the cache
    for workers in (1, 2):
        folder = Path(tempfile.mkdtemp())
        s = dataclasses.replace(spec, folder=folder)
        url = str(folder / "study.journal")
        _fresh()
        t0 = time.perf_counter()
        optimize(s, prepare(s), url, n_trials, workers=workers)
        wall = time.perf_counter() - t0
        study = optuna.load_study(study_name=s.name, storage=open_storage(url))
        numbers = sorted(t.number for t in study.trials)
        finished = sum(t.state.name in ("COMPLETE", "PRUNED", "FAIL") for t in study.trials)
        out[str(workers)] = {"seconds": wall, "trials_per_minute": 60 * n_trials / wall,
                             "exact": numbers == list(range(n_trials)) and finished == n_trials}
        print(f"{workers} worker(s): {wall:6.1f} s, {60 * n_trials / wall:5.1f} trials/min, "
              f"exactly {n_trials} trials numbered 0..{n_trials - 1}: {out[str(workers)]['exact']}", flush=True)
    out["speedup"] = out["2"]["trials_per_minute"] / out["1"]["trials_per_minute"]
    print(f"2 vs 1 worker: {out['speedup']:.2f}x (cores on this machine: {os.cpu_count()}, shared)")
    return out


def bench_scifact(trials: int | None = None) -> dict:
    from ragbench.tune.run import run_study

    spec = load_spec(ROOT / "experiments" / "scifact_fusion.yaml")
    t0 = time.perf_counter()
    res = run_study(spec, trials=trials, track=True)
    wall = time.perf_counter() - t0
    out = {**res.json_line(), "states": res.states, "heldout_n": res.summary["heldout_n"],
           "tune_n": res.summary["tune_n"], "confirmation": res.summary["confirmation"], "seconds": wall,
           "tracking_error": res.tracking_error}
    print(f"SciFact: {res.trials} trials {res.states} in {wall:.0f} s; tuning nDCG@10 {res.tune_score:.4f}; held-out "
          f"tuned {res.heldout_score:.4f} vs default {res.baseline_heldout_score:.4f} (p = {res.p_value:.4g}, "
          f"n = {res.summary['heldout_n']}); best {json.dumps(res.best_params)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("cache", "workers", "scifact", "all"), default="all")
    ap.add_argument("--data", default=None, help="shared data folder (sets RAGBENCH_DATA)")
    ap.add_argument("--scifact-trials", type=int, default=None)
    ap.add_argument("--worker-trials", type=int, default=12, help="trial budget of the workers benchmark")
    ap.add_argument("--out", default=str(ROOT / "experiments" / "runs" / "tune_bench.json"))  # ignored by git
    args = ap.parse_args()
    if args.data:
        os.environ["RAGBENCH_DATA"] = args.data
    results: dict = {}
    out = Path(args.out)
    if out.is_file():
        results = json.loads(out.read_text())
    if args.part in ("cache", "all"):
        results["cache"] = bench_cache()
    if args.part in ("workers", "all"):
        results["workers"] = bench_workers(args.worker_trials)
    if args.part in ("scifact", "all"):
        results["scifact"] = bench_scifact(args.scifact_trials)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str))
    print("wrote", out)


if __name__ == "__main__":
    main()
