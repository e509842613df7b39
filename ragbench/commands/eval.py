"""``ragbench eval {beir,golden,qa,compare}``: each evaluation's command lives in ``eval_<name>.py`` (argument
parsing and printing; the evaluation itself is in :mod:`ragbench.eval`)."""
from __future__ import annotations

import argparse

from . import eval_beir, eval_compare, eval_golden, eval_qa

SUBCOMMANDS = (eval_beir, eval_golden, eval_qa, eval_compare)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eval", help="evaluate retrieval and answer systems")
    inner = parser.add_subparsers(dest="eval_command", metavar="DATASET")
    for module in SUBCOMMANDS:
        module.register(inner)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
