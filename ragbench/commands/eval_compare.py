"""``ragbench eval compare BASE NEW``: two saved ``eval golden --out`` runs of one answer system, question by
question (:mod:`ragbench.eval.compare`): the change in each count, HandledRight won and lost with a paired
permutation test, the sets that changed and every changed answer. With ``--json`` stdout is one line
``{"system", "base", "new", "questions", "totals", "slices", "handled_right", "sets", "changes"}``. It reads saved
files only, so it logs no MLflow run."""
from __future__ import annotations

import argparse

from ._common import Output, add_output_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare two saved golden runs answer by answer (eval golden --out)")
    p.add_argument("base", metavar="BASE", help="folder of the first run (`ragbench eval golden --out BASE`)")
    p.add_argument("new", metavar="NEW", help="folder of the second run, over the same --data folders")
    p.add_argument("--system", default="answer",
                   help="answer system to compare (default answer; e.g. answer-rescue-llama)")
    p.add_argument("--show", type=int, default=20, metavar="N",
                   help="changed answers to print (default 20; 0 prints all; --json always carries all)")
    add_output_options(p)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from ..eval.compare import compare_runs, report

    out = Output(args)
    result = compare_runs(args.base, args.new, args.system)
    out.text(*report(result, args.show))
    out.json(result.to_json())
    return 0
