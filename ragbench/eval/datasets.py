"""Loaders for the evaluation data sets. Every loader takes the data folder or file as an argument (so the same
code runs on the held-back splits) and raises :class:`DataError` naming the file, the line and the fix."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ..errors import DataError
from ..schema import Document

# ------------------------------------------------------------------------------------------ file reading


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, decoded line) of a UTF-8 text file; bad bytes → DataError with the line."""
    if not path.is_file():
        raise DataError(f"{path}: file not found. Fix: check the data folder (expected the BEIR layout "
                        "corpus.jsonl, queries.jsonl, qrels/<split>.tsv).")
    with path.open("rb") as fh:
        for no, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{no}: not valid UTF-8 (byte {raw[exc.start:exc.start + 1]!r} at column "
                                f"{exc.start + 1}). Fix: re-encode the file as UTF-8.") from None
            yield no, text.rstrip("\r\n")


def _read_json(path: Path) -> Any:
    """A whole JSON document, with UTF-8 and syntax errors reported by line."""
    if not path.is_file():
        raise DataError(f"{path}: file not found. Fix: check the path.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not valid UTF-8. Fix: re-encode the file as UTF-8.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg}). Fix: repair the file.") from None


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for no, line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{no}: invalid JSON ({exc.msg}). Fix: one JSON object per line.") from None
        if not isinstance(obj, dict):
            raise DataError(f"{path}:{no}: expected a JSON object, found {type(obj).__name__}.")
        yield no, obj


def _field(obj: dict[str, Any], key: str, path: Path, no: int, kind: type = str) -> Any:
    if key not in obj:
        raise DataError(f"{path}:{no}: missing field {key!r} (found {sorted(obj)}). Fix: add it.")
    value = obj[key]
    if kind is str and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # numeric ids are common in BEIR exports
    if not isinstance(value, kind):
        raise DataError(f"{path}:{no}: field {key!r} should be {kind.__name__}, found {value!r}.")
    return value


# ------------------------------------------------------------------------------------------------- BEIR


@dataclass(frozen=True)
class BeirDataset:
    """A BEIR split: ``corpus`` documents, ``queries`` (qid, query) restricted to the split's qrels,
    ``qrels`` (qid, docno, label)."""

    name: str
    split: str
    corpus: list[Document]
    queries: pd.DataFrame
    qrels: pd.DataFrame


def load_beir(folder: str | Path, split: str = "test") -> BeirDataset:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` (header ``query-id corpus-id score``).

    Raises :class:`DataError` for duplicate document / query ids or qrels pairs, qrels naming unknown queries or
    documents, non-integer scores, bad JSON and non-UTF-8 bytes, always with ``file:line``.
    """
    root = Path(folder)
    corpus_path, queries_path, qrels_path = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"
    docs: list[Document] = []
    doc_lines: dict[str, int] = {}
    for no, obj in _jsonl(corpus_path):
        doc_id = _field(obj, "_id", corpus_path, no)
        if doc_id in doc_lines:
            raise DataError(f"{corpus_path}:{no}: duplicate document id {doc_id!r} (first on line "
                            f"{doc_lines[doc_id]}). Fix: document ids must be unique.")
        doc_lines[doc_id] = no
        title = obj.get("title") or ""
        docs.append(Document(doc_id=doc_id, text=_field(obj, "text", corpus_path, no), title=str(title),
                             source=f"beir:{root.name}", metadata=dict(obj.get("metadata") or {})))
    query_text: dict[str, str] = {}
    query_lines: dict[str, int] = {}
    for no, obj in _jsonl(queries_path):
        qid = _field(obj, "_id", queries_path, no)
        if qid in query_lines:
            raise DataError(f"{queries_path}:{no}: duplicate query id {qid!r} (first on line {query_lines[qid]}). "
                            "Fix: query ids must be unique.")
        query_lines[qid] = no
        query_text[qid] = _field(obj, "text", queries_path, no)
    rows: list[tuple[str, str, int]] = []
    pairs: dict[tuple[str, str], int] = {}
    for no, line in _lines(qrels_path):
        if not line.strip():
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if no == 1 and parts[:2] == ["query-id", "corpus-id"]:
            continue
        if len(parts) != 3:
            raise DataError(f"{qrels_path}:{no}: expected 3 tab-separated fields query-id, corpus-id, score; "
                            f"found {len(parts)}. Fix: repair the line.")
        qid, docno, score = (p.strip() for p in parts)
        try:
            label = int(score)
        except ValueError:
            raise DataError(f"{qrels_path}:{no}: score {score!r} is not an integer. Fix: use integer labels.") from None
        if qid not in query_text:
            raise DataError(f"{qrels_path}:{no}: query id {qid!r} is not in {queries_path.name}. "
                            "Fix: remove the row or add the query.")
        if docno not in doc_lines:
            raise DataError(f"{qrels_path}:{no}: document id {docno!r} is not in {corpus_path.name}. "
                            "Fix: remove the row or add the document.")
        if (qid, docno) in pairs:
            raise DataError(f"{qrels_path}:{no}: duplicate judgement for query {qid!r}, document {docno!r} "
                            f"(first on line {pairs[(qid, docno)]}). Fix: keep one row per pair.")
        pairs[(qid, docno)] = no
        rows.append((qid, docno, label))
    if not rows:
        raise DataError(f"{qrels_path}: no judgements found. Fix: check the split name {split!r}.")
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    split_qids = list(dict.fromkeys(qrels["qid"]))
    queries = pd.DataFrame({"qid": split_qids, "query": [query_text[q] for q in split_qids]})
    return BeirDataset(name=root.name, split=split, corpus=docs, queries=queries, qrels=qrels)
