"""``ragbench chat --as PRINCIPAL``: a conversation read from standard input, one question per line.

Follow-ups ("What about sick leave?") are rewritten against the previous question; the history keeps the
original questions. Options are those of ``ragbench ask``; with ``--json`` every answer is one JSON line (a
conversation streams one line per question)."""
from __future__ import annotations

import argparse
import sys

from ._common import Output, add_config_options, add_output_options, json_line
from .ask import add_common, answer_lines, explain_lines, service_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chat", help="interactive grounded chat (reads questions from stdin)")
    add_common(p)
    add_config_options(p)
    add_output_options(p, json_help="print each answer as one JSON line on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..answer import ChatSession

    out = Output(args)
    service, principal, _ = service_for(args)
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
            answer = session.ask(line.strip())
            if out.as_json:
                print(json_line({**answer.to_json(), **({"explain": answer.explain()} if args.explain else {})}),
                      flush=True)
            else:
                out.text(*answer_lines(answer), *(explain_lines(answer) if args.explain else []))
    finally:
        service.store.close()
    return 0
