"""``ragbench eval {beir,golden}``: each evaluation lives in its own module (eval_<name>.py) exposing
``register(subparsers)``."""
from __future__ import annotations

import argparse
import importlib

SUBCOMMANDS = ["beir", "golden"]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eval", help="evaluate retrieval and answer systems")
    inner = parser.add_subparsers(dest="eval_command", metavar="DATASET")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"ragbench.commands.eval_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ragbench.commands.eval_{name}":
                continue
            raise
        module.register(inner)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
