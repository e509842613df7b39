"""``ragbench tune EXPERIMENT.yaml [--trials N] [--workers W] [--storage URL] [--json]``.

Runs (or resumes) the Optuna study of an experiment file, confirms the best configuration on the held-out split
against the base configuration and writes ``tuned/<name>.yaml`` next to the experiment file. With ``--json`` the
last line of output is one JSON object with the keys best_params, tune_score, heldout_score,
baseline_heldout_score, p_value, trials and mlflow_run_id. Exit code 1 when MLflow could not be written (the study
and its results are kept; the message says where)."""
from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="Optuna sweep of an experiment file, held-out confirmation, MLflow logging")
    p.add_argument("experiment", metavar="EXPERIMENT.yaml", help="search space + objective + dataset (see docs/tuning.md)")
    p.add_argument("--trials", type=int, default=None, help="trial budget of the study (default: the file's)")
    p.add_argument("--workers", type=int, default=1, help="worker processes sharing the study (default 1)")
    p.add_argument("--storage", default=None,
                   help="Optuna storage: a journal file path (default runs/<name>/study.journal next to the "
                        "experiment), an RDB URL such as postgresql://user:pw@host/db, or :memory:")
    p.add_argument("--no-mlflow", action="store_true", help="do not log to MLflow")
    p.add_argument("--json", action="store_true", help="end the output with one JSON line of the results")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..tune.run import run_study
    from ..tune.space import load_spec

    if args.trials is not None and args.trials < 1:
        raise ConfigError(f"--trials must be ≥ 1, found {args.trials}.")
    spec = load_spec(args.experiment)
    res = run_study(spec, trials=args.trials, workers=args.workers, storage=args.storage, track=not args.no_mlflow,
                    show_progress=not (args.quiet or args.json) and args.workers == 1)
    states = ", ".join(f"{n} {s.lower()}" for s, n in res.states.items())
    print(f"study {res.name}: {res.trials} trials ({states}); storage {res.storage}")
    print(f"best trial #{res.best_trial}: {json.dumps(res.best_params, sort_keys=True, default=str)}")
    print(f"{res.metric}: tuning {res.tune_score:.4f} | held-out tuned {res.heldout_score:.4f} vs base "
          f"{res.baseline_heldout_score:.4f} (paired permutation p = {res.p_value:.4g}, "
          f"n = {res.summary['heldout_n']})")
    if len(res.pareto) > 1 or len(res.summary["metrics"]) > 1:
        print(f"Pareto front: {len(res.pareto)} trial(s): " + "; ".join(
            "#{} ".format(r["number"]) + ", ".join(f"{m}={r[m]:.4g}" for m in res.summary["metrics"])
            for r in res.pareto))
    print(f"tuned config: {res.tuned_path}; results: {res.study_dir}")
    if res.mlflow_run_id:
        print(f"MLflow run: {res.mlflow_run_id}")
    if res.tracking_error:
        print(f"error: {res.tracking_error}", file=sys.stderr)
    if args.json:
        print(json.dumps(res.json_line(), default=str))
    return 1 if res.tracking_error else 0
