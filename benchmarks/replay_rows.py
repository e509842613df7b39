"""Rows of a model replay, kept between runs: read from ``--from-rows``, or answered with the model's verdicts cached
per prompt in a shelve file (``--cache``) and written to ``--rows``, so a rerun's offline numbers need no model."""
from __future__ import annotations

import argparse
import json
import shelve
from dataclasses import asdict, dataclass
from typing import Any, Callable, MutableMapping, TypeVar

RowT = TypeVar("RowT")


@dataclass
class ReplayRow:
    """One golden question as a rescue replay sees it; scripts add what their model read."""

    set: str
    qid: str
    tag: str
    should_refuse: bool
    refused: bool  # the text check's decision (a rescuable row: see the script's Row)
    rescuable: bool  # refused on the thresholds only: the judge reads it
    gap: float  # the restricted gap
    fact: bool  # the answer holds the golden fact (a rescuable row: see the script's Row)


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


def quoted_doc(service: Any, reading: Any) -> str | None:
    """The document a quoted sentence is grounded in: ``reading`` is ``AnsweringService.quote_answer``'s result
    (``None``, or no grounded sentence: not a possible answer)."""
    if reading is None:
        return None
    chunks = [s.chunk_id for s in reading[1].sentences if s.chunk_id]
    chunk = service.store.get_chunk(chunks[0]) if chunks else None
    return chunk.doc_id if chunk is not None else None
