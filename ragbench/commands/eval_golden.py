"""``ragbench eval golden``: every retrieval mode and the grounded-answer system on the bundled golden set, scored,
compared, saved and logged to MLflow (the run itself: :mod:`ragbench.eval.golden_run`).

Prints the aggregate, per-slice and paraphrase-significance tables and, per answer system, what decided its answers
(:mod:`ragbench.eval.decisions`); with ``--json`` stdout is one line ``{"systems": {...}, "slices": {system: {tag:
{measure: value}}}, "decisions": {system: {rule: {outcome: count}}}, "mlflow_run_id": ..., "run_dir": ...}``. The
default answer system is ``answer``; ``--model M`` adds ``answer-M`` and ``--judge M`` adds ``answer-judge-M``
(the extractive reader with M as its answerability judge, the judge profile of docs/answers.md) and ``--rescue M``
adds ``answer-rescue-M`` (the text check, with M reading only its threshold refusals). With several ``--data``
folders each is scored on its own and then pooled (:mod:`ragbench.eval.golden_sets`): the JSON's ``systems``,
``slices`` and ``decisions`` are then the pooled ones, ``questions`` their count and ``sets`` each set's own record.
If MLflow cannot be reached the results are still saved and printed, and the exit status is 1."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import (Output, add_common_options, add_k_option, add_model_option, add_retriever_option, load_cfg,
                      parse_sets, show_progress)

DEFAULT_MODES = ("bm25", "dense", "lsh", "hybrid")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("golden", help="evaluate every retrieval mode and the answer system on the golden set")
    p.add_argument("--data", default=None, metavar="DIR", nargs="+", action="extend",
                   help="golden folder (default: the bundled data/golden); several (--data A B …) are each scored "
                        "and then pooled")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="run folder (default: runs/golden/<timestamp>, or runs/golden-sets/<timestamp> for several)")
    add_retriever_option(p, default=list(DEFAULT_MODES), multiple=True,
                         help="comma-separated retrieval modes to compare (default: bm25,dense,lsh,hybrid)")
    add_k_option(p, default=5, help="retrieval depth and metric cutoff (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the permutation and bootstrap tests (default 0)")
    p.add_argument("--no-answers", action="store_true", help="score retrieval only (no grounded-answer system)")
    add_model_option(p, help="also score the answer system 'answer-<model>' with this chat model (e.g. llama; "
                             "slow: every question is a model call)")
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="also score 'answer-judge-<model>': the extractive reader with this local model (llama) as "
                        "its answerability judge, the judge profile (about 1-2 s per question)")
    p.add_argument("--rescue", default=None, metavar="MODEL",
                   help="also score 'answer-rescue-<model>': the default text check, with this local model (llama) "
                        "reading only the answers it refused on coverage and similarity, the rescue profile")
    p.add_argument("--require", action="append", default=[], metavar="SYSTEM[.SLICE].MEASURE>=VALUE",
                   help="a bound on a measure, checked on every set and on the pool; the command exits 1 when one "
                        "is not met (repeatable; e.g. answer.RefusalAccuracy>=0.9, "
                        "answer.refuse-acl.RefusalAccuracy>=0.9, answer.LeakedDocs<=0)")
    add_common_options(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ..eval.golden_run import report, run_golden, summary_json
    from ..eval.golden_sets import pooled_json, pooled_report, run_golden_sets
    from ..eval.requirements import check, parse_requirement
    from ..eval.requirements import report as requirements_report

    out = Output(args)
    cfg = load_cfg(args)
    requirements = [parse_requirement(r) for r in args.require]  # a malformed one fails before anything runs
    options: dict[str, Any] = dict(log_mlflow=not args.no_mlflow, show_progress=show_progress(args),
                                   answers=not args.no_answers,
                                   models=[args.model] if args.model and args.model != "extractive" else [],
                                   judges=[args.judge] if args.judge else [],
                                   rescues=[args.rescue] if args.rescue else [],
                                   user_set=list(parse_sets(args.set)))  # --set wins over a profile
    folders = list(args.data or [])
    if len(folders) > 1:
        pooled = run_golden_sets(folders, args.retriever, args.k, args.seed, args.out, cfg, **options)
        out.text(pooled_report(pooled))
        error, record = pooled.tracking_error, pooled_json(pooled)
        scopes = {**record["sets"], "pooled": record}
    else:
        ev = run_golden(folders[0] if folders else None, args.retriever, args.k, args.seed, args.out, cfg,
                        **options)
        out.text(report(ev))
        error, record = ev.tracking_error, summary_json(ev)
        scopes = {Path(ev.params["eval"]["data"]).name: record}
    unmet = 0
    if requirements:
        rows = check(requirements, scopes)
        out.text(requirements_report(rows))
        record = {**record, "requirements": rows}
        unmet = sum(not r["met"] for r in rows)
    if error:
        out.error(error)
    if unmet:
        out.error(f"{unmet} requirement check(s) not met (listed under Requirements)")
    out.json(record)
    return 1 if error or unmet else 0
