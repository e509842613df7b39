"""TREC run files: one line ``qid Q0 docno rank score tag`` per result, whitespace-separated.

Ranks are written from 1 (the TREC convention) and read back from 0 (ragbench's run tables); rows are written
per query in rank order. Scores are written with ``repr``-exact float formatting.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import DataError, SchemaError
from ..schema import validate
from ..text import read_text_file


def _check_token(value: str, what: str) -> str:
    if not value or any(ch.isspace() for ch in value):
        raise DataError(f"TREC run {what} {value!r} is empty or contains whitespace; the format is "
                        "whitespace-separated. Fix: use ids without spaces.")
    return value


def write_trec_run(df: Any, path: str | Path, tag: str = "ragbench") -> Path:
    """Write a ``qid, docno, score, rank`` table as a TREC run file (ranks + 1); returns the path.

    Everything is checked before the file is opened, so bad input never leaves a half-written file."""
    validate(df, "run")
    _check_token(tag, "tag")
    run = df.sort_values(["qid", "rank"], kind="stable") if len(df) else df
    lines: list[str] = []
    for qid, docno, rank, score in zip(run["qid"].astype(str), run["docno"].astype(str), run["rank"], run["score"]):
        score = float(score)
        if not math.isfinite(score):
            raise DataError(f"TREC run score for query {qid!r}, document {docno!r} is {score}. "
                            "Fix: finite scores only.")
        r = int(rank)
        if r < 0 or r != rank:
            raise SchemaError(f"run rank must be an integer ≥ 0 (from 0), found {rank!r} for query {qid!r}.")
        lines.append(f"{_check_token(qid, 'qid')} Q0 {_check_token(docno, 'docno')} {r + 1} {score!r} {tag}\n")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(p)  # atomic: readers never see a partial file
    return p


def read_trec_run(path: str | Path) -> Any:
    """Read a TREC run file into a ``qid, docno, score, rank`` table (rank from 0)."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"TREC run file {p} does not exist. Fix: check the path.")
    rows: list[tuple[str, str, float, int]] = []
    for no, line in enumerate(read_text_file(p).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise DataError(f"{p}:{no}: expected 6 fields 'qid Q0 docno rank score tag', found {len(parts)}. "
                            "Fix: repair the line.")
        qid, _q0, docno, rank, score, _tag = parts
        try:
            r, s = int(rank), float(score)
        except ValueError:
            raise DataError(f"{p}:{no}: rank {rank!r} must be an integer and score {score!r} a number.") from None
        if r < 1:
            raise DataError(f"{p}:{no}: TREC ranks start at 1, found {r}. Fix: renumber the run.")
        rows.append((qid, docno, s, r - 1))
    return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
