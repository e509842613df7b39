"""Rows of a model replay, kept between runs: read from ``--from-rows``, or answered with the model's verdicts cached
per prompt in a shelve file (``--cache``) and written to ``--rows``, so a rerun's offline numbers need no model."""
from __future__ import annotations

import argparse
import json
import shelve
from dataclasses import asdict
from typing import Any, Callable, MutableMapping, TypeVar

RowT = TypeVar("RowT")


def add_row_options(ap: argparse.ArgumentParser, cached: str) -> None:
    """``--cache``, ``--rows`` and ``--from-rows``; ``cached`` says what the cache keeps per prompt."""
    ap.add_argument("--cache", metavar="PATH", help=f"keep the {cached} per prompt in this shelve file")
    ap.add_argument("--rows", metavar="PATH", help="write the rows here (JSON lines)")
    ap.add_argument("--from-rows", metavar="PATH", help="read the rows a previous run wrote instead of answering")


def replay_rows(args: argparse.Namespace, answer: Callable[[str, MutableMapping[str, Any]], list[RowT]],
                load: Callable[[dict[str, Any]], RowT]) -> list[RowT]:
    """The rows of every ``args.data`` folder (``answer(folder, cache)``), or those ``--from-rows`` names."""
    if args.from_rows:
        with open(args.from_rows, encoding="utf-8") as f:
            return [load(d) for d in map(json.loads, f)]
    cache: MutableMapping[str, Any] = shelve.open(args.cache) if args.cache else {}
    try:
        rows = [r for d in args.data for r in answer(d, cache)]
    finally:
        if isinstance(cache, shelve.Shelf):
            cache.close()
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(asdict(r)) + "\n" for r in rows)  # type: ignore[call-overload]
    return rows
