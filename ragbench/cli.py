"""The ``ragbench`` command. Each sub-command lives in ``ragbench/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (called with the parsed args, returns an exit code).
Options follow one grammar (``ragbench/commands/_common.py``; checked by tests/test_cli_grammar.py).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from .errors import EXIT_BAD_INPUT, RagbenchError

#: Sub-command modules, in help order.
COMMANDS = ["index", "search", "quarantine", "eval", "ask", "chat", "eerag", "dcs", "research", "dal", "tune", "batch",
            "serve"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragbench", description="RAG research workbench")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"ragbench.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    # Exit statuses (docs/design.md): 0 success, 1 the job ran with recorded failures (the command returns it, or
    # a typed error of a failing service), 2 bad input (a typed error, or argparse's own usage errors).
    try:
        return int(args.func(args) or 0)
    except RagbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_status
    except OSError as exc:
        if exc.filename is None:
            raise
        print(f"error: cannot use {exc.filename}: {exc.strerror or exc}. Fix: check the path and its permissions.",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
