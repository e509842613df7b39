"""``ragbench chat --as PRINCIPAL``: a conversation read from standard input, one question per line.

Follow-ups ("What about sick leave?") are rewritten against the previous question; the history keeps the
original questions. Options are those of ``ragbench ask``; with ``--json`` every answer is one JSON line.
"""
from __future__ import annotations

import argparse
import sys

from .ask import add_common, open_service, print_answer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help="interactive grounded chat (reads questions from stdin)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..answer import ChatSession

    service, principal = open_service(args)
    interactive = sys.stdin.isatty()
    try:
        session = ChatSession(service, principal, tenant=args.tenant)
        while True:
            if interactive:
                print("> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            print_answer(session.ask(line.strip()), args.json)
            sys.stdout.flush()
    finally:
        service.store.close()
    return 0
