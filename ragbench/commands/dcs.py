"""``ragbench dcs locomo FILE`` and ``ragbench dcs threads FILE``: DCS context-selection evaluations, configured by
the ``dcs`` section of ``--config`` / ``--set`` and logged to MLflow (experiment ``ragbench-dcs``).

With ``--json`` stdout is one JSON line (the summary, with ``mlflow_run_id``)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from ._common import Output, add_common_options, add_k_option, load_cfg, show_progress

EXPERIMENT = "ragbench-dcs"


def _cfg(args: argparse.Namespace) -> Any:
    faithful = {"dcs.faithful": True, "dcs.profile": "source"} if args.faithful else {}
    return load_cfg(args, faithful)


def _table(df: Any) -> str:
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.precision", 3):
        return str(df)


def _finish(args: argparse.Namespace, out: Output, cfg: Any, run_name: str, metrics: dict[str, Any],
            record: dict[str, Any], params: dict[str, Any], artifacts: list[Any], embedder: Any = None) -> int:
    from ..provenance import data_hash
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    rec = record_run(EXPERIMENT, run_name, cfg, metrics, params={"eval": params}, artifacts=artifacts,
                     data_hash=data_hash(args.file), model_sha256=getattr(embedder, "sha256", None),
                     enabled=not args.no_mlflow, tags={"dataset": run_name.split("-")[0]},
                     stages=stage_signatures(cfg, embedder=embedder or False))
    out.text(f"mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    if rec.error:
        out.error(rec.error)
    out.json({**record, "mlflow_run_id": rec.run_id})
    return 1 if rec.error else 0


def run_locomo(args: argparse.Namespace) -> int:
    from ..eval.locomo import STRATEGIES, TurnText, evaluate_locomo
    from ..retrieval.embedding import make_embedder

    out = Output(args)
    cfg = _cfg(args)
    how = TurnText(speaker=not args.no_speaker, captions=not args.no_captions, date=not args.no_date,
                   before=args.before)
    embedder = make_embedder(cfg.embedding)
    result = evaluate_locomo(args.file, ks=args.k, embedder=embedder, config=cfg.dcs, how=how,
                             dcs_weight=args.dcs_weight, mode=args.dcs_mode,
                             conversations=args.conversation or None, max_questions=args.max_questions,
                             strategies=STRATEGIES, show_progress=show_progress(args))
    summary = result.summary()
    k = 10 if 10 in result.ks else result.ks[0]
    out.text(_table(pd.DataFrame(summary["strategies"]).T), f"\nrecall@{k} by category:",
             _table(result.by_category(k)), f"\npaired tests of recall@{k} against dense:",
             _table(result.significance(k)))
    folder = Path(args.out) if args.out else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        result.per_question.to_csv(folder / "per_question.csv", index=False)
    metrics = {f"{s}.{m}": v for s, row in summary["strategies"].items() for m, v in row.items()}
    metrics["questions"] = summary["questions"]
    params = {"file": str(args.file), "k": ",".join(map(str, result.ks)), "dcs_weight": args.dcs_weight,
              "dcs_mode": args.dcs_mode, "turn_text": how.__dict__, "max_questions": args.max_questions,
              "conversations": ",".join(args.conversation or []) or "all"}
    return _finish(args, out, cfg, f"locomo-{Path(args.file).stem}", metrics, summary, params, [folder], embedder)


def run_threads(args: argparse.Namespace) -> int:
    from ..eval.threads import configured_classifier, default_settings, load_messages, thread_recovery

    out = Output(args)
    cfg = _cfg(args)
    df = load_messages(args.file)
    embedder = None
    if args.clusters or cfg.dcs.classifier == "clusters":
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    texts = list(df["content"])
    settings = default_settings(embedder if args.clusters else None, n_clusters=args.clusters or 8, texts=texts,
                                config=cfg.dcs)
    settings["configured"] = (configured_classifier(cfg.dcs, texts, embedder, cfg.seed), cfg.dcs)
    table = thread_recovery(df, settings)
    out.text(_table(table))
    folder = Path(args.out) if args.out else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        table.to_csv(folder / "thread_recovery.csv")
    settings = table.round(6).to_dict(orient="index")
    metrics = {f"{s}.{m}": v for s, row in settings.items() for m, v in row.items()}
    return _finish(args, out, cfg, f"threads-{Path(args.file).stem}", metrics, {"settings": settings},
                   {"file": str(args.file), "clusters": args.clusters}, [folder], embedder)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("dcs", help="Dynamic Context Selection evaluations")
    inner = parser.add_subparsers(dest="dcs_command", metavar="EVAL")

    p = inner.add_parser("locomo", help="context-selection recall@k on LoCoMo")
    p.add_argument("file", metavar="FILE", help="a LoCoMo JSON file (e.g. locomo_dev.json)")
    add_k_option(p, default=[5, 10, 25, 50], multiple=True, help="comma-separated cutoffs (default 5,10,25,50)")
    p.add_argument("--faithful", action="store_true",
                   help="DCS as the source (sets dcs.faithful=true, dcs.profile=source)")
    p.add_argument("--dcs-weight", type=float, default=0.1, help="dcs_dense: weight of the DCS score (add mode)")
    p.add_argument("--dcs-mode", choices=["add", "first"], default="add",
                   help="dcs_dense: add the DCS score to the cosine, or put DCS-selected turns first")
    p.add_argument("--no-speaker", action="store_true", help="do not prefix turns with the speaker's name")
    p.add_argument("--no-captions", action="store_true", help="leave out the captions of shared images")
    p.add_argument("--no-date", action="store_true", help="do not prefix turns with the session date")
    p.add_argument("--before", type=int, default=1, help="earlier turns of the session added to a turn's text")
    p.add_argument("--conversation", action="append", help="only this sample_id (repeatable)")
    p.add_argument("--max-questions", type=int, default=None, help="only the first N questions per conversation")
    p.add_argument("--out", default=None, metavar="DIR", help="folder for per_question.csv")
    add_common_options(p)
    p.set_defaults(func=run_locomo)

    t = inner.add_parser("threads", help="thread recovery on the DCS test messages")
    t.add_argument("file", metavar="FILE", help="dcs_test_messages.json")
    t.add_argument("--faithful", action="store_true",
                   help="score the configured setting as the source (dcs.faithful=true, dcs.profile=source)")
    t.add_argument("--clusters", type=int, default=8,
                   help="k of the embedding-cluster comparison setting (0: leave it out); the 'configured' row "
                        "uses dcs.classifier / dcs.clusters")
    t.add_argument("--out", default=None, metavar="DIR", help="folder for thread_recovery.csv")
    add_common_options(t)
    t.set_defaults(func=run_threads)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
