"""``ragbench dcs locomo FILE`` and ``ragbench dcs threads FILE``: DCS context-selection evaluations.

With ``--json`` the last line of output is one JSON object (the summary), so scripts can ``tail -1``.
"""
from __future__ import annotations

import argparse
import json

import pandas as pd


def _ks(text: str) -> list[int]:
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 5,10,25,50, found {text!r}")
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"expected positive k values, found {text!r}")
    return ks


def _dcs_config(args: argparse.Namespace):
    from ..config import DcsConfig

    return DcsConfig(faithful=args.faithful, profile="source" if args.faithful else "improved")


def run_locomo(args: argparse.Namespace) -> int:
    from ..eval.locomo import TurnText, evaluate_locomo

    how = TurnText(speaker=not args.no_speaker, captions=not args.no_captions, date=not args.no_date,
                   before=args.before)
    result = evaluate_locomo(args.file, ks=args.k, config=_dcs_config(args), how=how, dcs_weight=args.dcs_weight,
                             mode=args.dcs_mode, conversations=args.conversation or None,
                             max_questions=args.max_questions, show_progress=not args.quiet)
    summary = result.summary()
    k = 10 if 10 in result.ks else result.ks[0]
    if not args.json or args.verbose_tables:
        with pd.option_context("display.width", 160, "display.max_columns", 20, "display.precision", 3):
            print(pd.DataFrame(summary["strategies"]).T)
            print(f"\nrecall@{k} by category:")
            print(result.by_category(k))
            print(f"\npaired tests of recall@{k} against dense:")
            print(result.significance(k))
    if args.json:
        print(json.dumps(summary, sort_keys=False))
    return 0


def run_threads(args: argparse.Namespace) -> int:
    from ..eval.threads import default_settings, load_messages, thread_recovery

    df = load_messages(args.file)
    embedder = None
    if args.clusters:
        from ..config import EmbeddingConfig
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(EmbeddingConfig())
    table = thread_recovery(df, default_settings(embedder, n_clusters=args.clusters or 8, texts=list(df["content"])))
    if not args.json:
        with pd.option_context("display.width", 160, "display.max_columns", 20, "display.precision", 3):
            print(table)
    else:
        print(json.dumps({"settings": table.round(6).to_dict(orient="index")}))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("dcs", help="Dynamic Context Selection evaluations")
    inner = parser.add_subparsers(dest="dcs_command", metavar="EVAL")

    p = inner.add_parser("locomo", help="context-selection recall@k on LoCoMo")
    p.add_argument("file", help="a LoCoMo JSON file (e.g. locomo_dev.json)")
    p.add_argument("--k", type=_ks, default=[5, 10, 25, 50], help="comma-separated k values (default 5,10,25,50)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on the last line")
    p.add_argument("--verbose-tables", action="store_true", help="with --json, print the tables too")
    p.add_argument("--faithful", action="store_true", help="DCS as the source (profile source, flaws kept)")
    p.add_argument("--dcs-weight", type=float, default=0.1, help="dcs_dense: weight of the DCS score (add mode)")
    p.add_argument("--dcs-mode", choices=["add", "first"], default="add",
                   help="dcs_dense: add the DCS score to the cosine, or put DCS-selected turns first")
    p.add_argument("--no-speaker", action="store_true", help="do not prefix turns with the speaker's name")
    p.add_argument("--no-captions", action="store_true", help="leave out the captions of shared images")
    p.add_argument("--no-date", action="store_true", help="do not prefix turns with the session date")
    p.add_argument("--before", type=int, default=1, help="earlier turns of the session added to a turn's text")
    p.add_argument("--conversation", action="append", help="only this sample_id (repeatable)")
    p.add_argument("--max-questions", type=int, default=None, help="only the first N questions per conversation")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_locomo)

    t = inner.add_parser("threads", help="thread recovery on the DCS test messages")
    t.add_argument("file", help="dcs_test_messages.json")
    t.add_argument("--json", action="store_true", help="print the table as JSON on the last line")
    t.add_argument("--clusters", type=int, default=8, help="k of the embedding-cluster setting (0: leave it out)")
    t.set_defaults(func=run_threads)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
