"""``ragbench tune EXPERIMENT.yaml [--trials N] [--workers W] [--storage URL]``.

Runs (or resumes) the Optuna study of an experiment file, confirms the best configuration on the held-out split
against the base configuration and writes the tuned config with the results into ``runs/<name>/`` next to the
experiment (never a tracked file). ``--promote`` copies the tuned config to ``tuned/<name>.yaml`` next to the
experiment only when the held-out improvement is significant under the experiment's ``confirm`` test (default:
paired permutation, alpha 0.05); ``--force`` promotes anyway and says so in the file's header. ``--config`` /
``--set`` change the experiment's base configuration (the file's ``base:`` applies on top of ``--config``, ``--set``
and ``--model`` (= ``llm.model``, the chat model of answer and LLM-elector objectives) last). With ``--json`` stdout
is one JSON line with the keys best_params, tune_score, heldout_score, baseline_heldout_score, p_value, trials,
tuned_path, promoted and mlflow_run_id. Exit status 1 when a trial failed or MLflow could not be written (the study
and its results are kept; the message says where), 2 on bad input (the experiment file is checked — fields, ranges,
sampler and pruner options — before the first trial).

An experiment with ``split: {folds: K}`` or ``{folds: sets}`` is a nested cross-validation
(:mod:`ragbench.tune.crossval`): one study per fold, each fold's choice confirmed on its own units, the held-out
values of all folds pooled against the base in one paired test. It prints a row per fold and the pooled line;
``--json`` gives the keys crossval, metric, heldout_score, baseline_heldout_score, p_value, n, wins, ties, losses,
folds, results and mlflow_run_id; ``--promote`` does not apply. ``--fold FOLD`` runs one fold's study alone (a
study's output), so folds can run in separate processes or machines; the command without ``--fold`` then pools
them, re-confirming each fold already at its budget."""
from __future__ import annotations

import argparse
import json
from typing import Any

from ._common import Output, add_common_options, add_model_option, load_cfg, show_progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="Optuna sweep of an experiment file, held-out confirmation, MLflow logging")
    p.add_argument("experiment", metavar="EXPERIMENT.yaml",
                   help="search space + objective + dataset (see docs/tuning.md)")
    p.add_argument("--trials", type=int, default=None, help="trial budget of the study (default: the file's)")
    p.add_argument("--workers", type=int, default=1, help="worker processes sharing the study (default 1)")
    p.add_argument("--storage", default=None,
                   help="Optuna storage: a journal file path (default runs/<name>/study.journal next to the "
                        "experiment), an RDB URL such as postgresql://user:pw@host/db, or :memory:")
    add_model_option(p, help="chat model of the trials (sets llm.model): extractive | openai | llama[:<name>]")
    p.add_argument("--promote", action="store_true",
                   help="copy the tuned config to tuned/<name>.yaml next to the experiment when its held-out "
                        "improvement is significant (the experiment's confirm: test and alpha)")
    p.add_argument("--fold", default=None, metavar="FOLD",
                   help="with split.folds: run only this fold's study (fold1…foldK, or a golden set's name), e.g. "
                        "one per process or machine; a later run without --fold pools the folds")
    p.add_argument("--force", action="store_true",
                   help="with --promote: promote even without a significant improvement (recorded in the header)")
    add_common_options(p)
    p.set_defaults(func=run)


def _base(args: argparse.Namespace, spec: Any) -> Any:
    """The experiment's base config, moved onto ``--config`` and ``--set`` when given."""
    from ..config import RagbenchConfig, flatten, load_config, with_overrides

    if not args.config and not args.set and not args.model:
        return spec.base
    defaults = flatten(RagbenchConfig())
    own = {k: v for k, v in flatten(spec.base).items() if v != defaults[k]}
    return load_cfg(args, {"llm.model": args.model}, base=lambda path: with_overrides(load_config(path), own))


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..errors import ConfigError
    from ..tune.run import run_study
    from ..tune.space import load_spec

    out = Output(args)
    if args.trials is not None and args.trials < 1:
        raise ConfigError(f"--trials must be ≥ 1, found {args.trials}.")
    spec = load_spec(args.experiment)
    spec = replace(spec, base=_base(args, spec))
    if args.force and not args.promote:
        raise ConfigError("--force only applies with --promote. Fix: add --promote (or drop --force).")
    if args.fold is not None:
        if spec.folds is None:
            raise ConfigError(f"--fold runs one fold of a cross-validation, but {args.experiment} has no split.folds. "
                              "Fix: drop --fold, or add split: {folds: 5} (or {folds: sets}) to the experiment.")
        if args.promote:
            raise ConfigError("--promote does not apply to one fold of a cross-validation: its choice is confirmed "
                              "on the fold's units only. Fix: drop --promote.")
        spec = replace(spec, fold=args.fold)  # an ordinary study; prepare() checks the fold's name
    elif spec.folds is not None:
        if args.promote:
            raise ConfigError(f"{args.experiment} is a cross-validation (split.folds): it estimates how well the "
                              "tuning does on data it did not choose on, and has no one config to promote. Fix: "
                              "promote from the same experiment without split.folds.")
        return _crossval(args, spec, out)
    res = run_study(spec, trials=args.trials, workers=args.workers, storage=args.storage, track=not args.no_mlflow,
                    show_progress=show_progress(args) and args.workers == 1, promote_result=args.promote,
                    force=args.force)
    states = ", ".join(f"{n} {s.lower()}" for s, n in res.states.items())
    lines = [f"study {res.name}: {res.trials} trials ({states}); storage {res.storage}",
             f"best trial #{res.best_trial}: {json.dumps(res.best_params, sort_keys=True, default=str)}",
             f"{res.metric}: tuning {res.tune_score:.4f} | held-out tuned {res.heldout_score:.4f} vs base "
             f"{res.baseline_heldout_score:.4f} (paired permutation p = {res.p_value:.4g}, "
             f"n = {res.summary['heldout_n']})"]
    if len(res.pareto) > 1 or len(res.summary["metrics"]) > 1:
        lines.append(f"Pareto front: {len(res.pareto)} trial(s): " + "; ".join(
            "#{} ".format(r["number"]) + ", ".join(f"{m}={r[m]:.4g}" for m in res.summary["metrics"])
            for r in res.pareto))
    lines.append(f"tuned config: {res.tuned_path}; results: {res.study_dir}")
    if res.promotion is not None:
        p = res.promotion
        lines.append(f"promoted to {p.path}" + (" (--force)" if p.forced else "") + f": {p.reason}" if p.promoted
                     else f"not promoted: {p.reason} (--force overrides)")
    if res.mlflow_run_id:
        lines.append(f"MLflow run: {res.mlflow_run_id}")
    return _finish(out, lines, res.json_line(), res.tracking_error, res.states.get("FAIL", 0),
                   f"the 'error' column of {res.study_dir}/trials.csv")


def _crossval(args: argparse.Namespace, spec: Any, out: Output) -> int:
    from ..tune.crossval import run_crossval

    res = run_crossval(spec, trials=args.trials, workers=args.workers, storage=args.storage,
                       track=not args.no_mlflow, show_progress=show_progress(args) and args.workers == 1)
    lines = [f"cross-validation {res.name}: {len(res.folds)} folds ({spec.folds}), {res.metric} held out by each "
             "fold's own choice"]
    for row, fold in zip(res.table.to_dict(orient="records"), res.folds):
        lines.append(f"  {row['fold']}: tune n={row['tune_n']} {row['tune_score']:.4f} | held-out n={row['heldout_n']} "
                     f"tuned {row['heldout_score']:.4f} vs base {row['baseline_heldout_score']:.4f} "
                     f"(p = {row['p_value']:.3g}) | " + ", ".join(f"{k}={_short(v)}" for k, v in
                                                                  sorted(fold.best_params.items())))
    lines.append(f"pooled over {res.n} units: tuned {res.heldout_score:.4f} vs base {res.baseline_heldout_score:.4f} "
                 f"({res.wins} won, {res.ties} tied, {res.losses} lost; paired permutation p = {res.p_value:.4g}, "
                 f"95% CI of the difference [{res.ci_low:.4f}, {res.ci_high:.4f}])")
    for name, values in res.stability().items():
        lines.append(f"  {name} chosen per fold: {', '.join(map(_short, values))}")
    lines.append(f"results: {res.study_dir} (crossval.csv, crossval_per_query.csv, crossval.png, crossval.json, one "
                 "folder per fold)")
    if res.mlflow_run_id:
        lines.append(f"MLflow run: {res.mlflow_run_id}")
    return _finish(out, lines, res.json_line(), res.tracking_error, sum(f.states.get("FAIL", 0) for f in res.folds),
                   f"the 'error' column of each fold's trials.csv under {res.study_dir}")


def _finish(out: Output, lines: list[str], record: dict[str, Any], tracking_error: str | None, failed: int,
            where: str) -> int:
    """Print the result, the tracking error and failed trials (their errors are in ``where``), the ``--json``
    record; exit 1 when anything failed."""
    from ..errors import EXIT_FAILURES, EXIT_OK

    out.text(*lines)
    if tracking_error:
        out.error(tracking_error)
    if failed:
        out.error(f"{failed} trial(s) failed; their errors are in {where}.")
    out.json(record)
    return EXIT_FAILURES if tracking_error or failed else EXIT_OK


def _short(value: Any) -> str:
    """A chosen parameter for reading: floats to four significant digits (the files keep every digit)."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)
