"""Loaders for the evaluation data sets. Every loader takes the data folder or file as an argument (so the same
code runs on the held-back splits) and raises :class:`DataError` naming the file, the line and the fix."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import pandas as pd

from ..errors import DataError
from ..schema import Document
from ..text import decode_utf8, read_text_file

# ------------------------------------------------------------------------------------------ file reading


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, decoded line) of a UTF-8 text file, streamed; a bad byte or a NUL → DataError with the
    line (:func:`ragbench.text.decode_utf8`)."""
    if not path.is_file():
        raise DataError(f"{path}: file not found. Fix: check the data folder (expected the BEIR layout "
                        "corpus.jsonl, queries.jsonl, qrels/<split>.tsv).")
    with path.open("rb") as fh:
        for no, raw in enumerate(fh, start=1):
            yield no, decode_utf8(raw, path, line=no).rstrip("\r\n")


def read_json(path: Path) -> Any:
    """A whole JSON document, with UTF-8 and syntax errors reported by line."""
    if not path.is_file():
        raise DataError(f"{path}: file not found. Fix: check the path.")
    text = read_text_file(path)
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
    corpus_path, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split}.tsv"
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


# ----------------------------------------------------------------------------------------------- LoCoMo

_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class LocomoTurn:
    """One dialog turn; ``dia_id`` is ``D<session>:<turn>`` (1-based)."""

    dia_id: str
    speaker: str
    text: str
    session: int
    date: str


@dataclass(frozen=True)
class LocomoQA:
    """A question with normalised evidence dia_ids; ``unresolved`` lists well-formed ids with no matching turn."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int
    unresolved: tuple[str, ...] = ()


@dataclass(frozen=True)
class LocomoConversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[LocomoTurn, ...]
    qa: tuple[LocomoQA, ...]

    def turns_df(self) -> pd.DataFrame:
        """``dia_id, speaker, text, session, date`` in dialog order."""
        return pd.DataFrame([t.__dict__ for t in self.turns], columns=["dia_id", "speaker", "text", "session", "date"])


LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def load_locomo(path: str | Path) -> list[LocomoConversation]:
    """Read a LoCoMo JSON file (a list of samples with ``conversation`` and ``qa``).

    Sessions are enumerated by their ``session_<n>`` keys (not the date keys). Evidence strings are split on ``;``
    and whitespace and normalised (``D:11:26`` → ``D11:26``, ``D30:05`` → ``D30:5``); see
    :func:`ragbench.eval.metrics.split_evidence`. Adversarial items without ``answer`` get ``adversarial_answer``.
    """
    from .metrics import split_evidence

    p = Path(path)
    data = read_json(p)
    if not isinstance(data, list) or not data:
        what = "an empty list" if isinstance(data, list) else type(data).__name__
        raise DataError(f"{p}: expected a JSON list of LoCoMo samples, found {what}. Fix: give the LoCoMo file "
                        "(e.g. locomo_dev.json).")
    out: list[LocomoConversation] = []
    seen: set[str] = set()
    for i, sample in enumerate(data):
        where = f"{p}: sample {i}"
        if not isinstance(sample, dict) or not {"sample_id", "conversation", "qa"} <= set(sample):
            found = sorted(sample) if isinstance(sample, dict) else type(sample).__name__
            raise DataError(f"{where}: expected keys sample_id, conversation, qa; found {found}.")
        sid = str(sample["sample_id"])
        if sid in seen:
            raise DataError(f"{where}: duplicate sample_id {sid!r}. Fix: ids must be unique.")
        seen.add(sid)
        conv = sample["conversation"]
        if not isinstance(conv, dict):
            raise DataError(f"{where} ({sid}): 'conversation' should be an object.")
        sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
        turns: list[LocomoTurn] = []
        for n in sessions:
            date = str(conv.get(f"session_{n}_date_time", ""))
            for j, t in enumerate(conv[f"session_{n}"]):
                if not isinstance(t, dict) or not {"speaker", "dia_id", "text"} <= set(t):
                    raise DataError(f"{where} ({sid}) session_{n} turn {j}: expected speaker, dia_id, text.")
                turns.append(LocomoTurn(str(t["dia_id"]).strip(), str(t["speaker"]), str(t["text"]), n, date))
        ids = [t.dia_id for t in turns]
        if len(set(ids)) != len(ids):
            dup = next(x for x in ids if ids.count(x) > 1)
            raise DataError(f"{where} ({sid}): duplicate dia_id {dup!r}. Fix: dia_ids must be unique.")
        known = set(ids)
        qas: list[LocomoQA] = []
        if not isinstance(sample["qa"], list):
            raise DataError(f"{where} ({sid}): 'qa' should be a list of questions, found {sample['qa']!r}. Fix: write "
                            "qa: [{question, answer, evidence, category}, …].")
        for j, q in enumerate(sample["qa"]):
            if not isinstance(q, dict) or "question" not in q or "category" not in q:
                raise DataError(f"{where} ({sid}) qa {j}: expected question, category, evidence.")
            ev_raw = q.get("evidence") or []
            if not isinstance(ev_raw, list):
                raise DataError(f"{where} ({sid}) qa {j}: evidence should be a list, found {ev_raw!r}.")
            ev = split_evidence(ev_raw)
            answer = q.get("answer", q.get("adversarial_answer", ""))
            try:
                category = int(q["category"])
            except (TypeError, ValueError):
                raise DataError(f"{where} ({sid}) qa {j}: category {q['category']!r} is not an integer.") from None
            qas.append(LocomoQA(str(q["question"]), "" if answer is None else str(answer), tuple(ev), category,
                                tuple(e for e in ev if e not in known)))
        speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
        out.append(LocomoConversation(sid, speakers, tuple(turns), tuple(qas)))
    if not any(c.qa for c in out):
        raise DataError(f"{p}: no sample has a question ('qa' is empty everywhere). Fix: nothing to evaluate; give "
                        "a LoCoMo file with questions.")
    if not any(c.turns for c in out):
        raise DataError(f"{p}: no sample has a dialog turn (no session_<n> lists). Fix: give a LoCoMo file with "
                        "conversations.")
    return out


# ------------------------------------------------------------------------------------------------ EE-RAG


@dataclass(frozen=True)
class KnowledgeEntry:
    slug: str
    request: str
    text_response: str
    summary: str = ""


@dataclass(frozen=True)
class BenchmarkCase:
    case_id: str
    query: str
    expected_slugs: tuple[str, ...]
    expect_retrieval: bool
    expected_answer_hint: str | None = None


@dataclass(frozen=True)
class EeragBench:
    name: str
    version: str
    entries: tuple[KnowledgeEntry, ...]
    cases: tuple[BenchmarkCase, ...]


_BENCH_KEYS = ("name", "version", "description", "knowledge_entries", "benchmark_cases")
_ENTRY_KEYS = ("slug", "request", "text_response", "summary")
_CASE_KEYS = ("id", "query", "expected_slugs", "expect_retrieval", "expected_answer_hint")


def _known_keys(obj: dict[str, Any], valid: Sequence[str], path: Path, where: str) -> None:
    """Unknown keys are typos (``expected_slug``) that would otherwise be ignored silently."""
    unknown = sorted(set(obj) - set(valid))
    if unknown:
        raise DataError(f"{path}: {where} has unknown key(s) {', '.join(map(repr, unknown))}. Valid keys: "
                        f"{', '.join(valid)}. Fix: correct or remove them.")


def load_eerag_bench(path: str | Path) -> EeragBench:
    """Read ``eedag_benchmark_v1.json``. Raises :class:`DataError` on missing fields, duplicate slugs or case ids,
    and cases expecting slugs that are not knowledge entries."""
    p = Path(path)
    data = read_json(p)
    if not isinstance(data, dict) or "knowledge_entries" not in data or "benchmark_cases" not in data:
        raise DataError(f"{p}: expected an object with knowledge_entries and benchmark_cases.")
    _known_keys(data, _BENCH_KEYS, p, "the top level")
    for key in ("knowledge_entries", "benchmark_cases"):
        if not isinstance(data[key], list) or not data[key]:
            raise DataError(f"{p}: {key} must be a non-empty list, found {data[key]!r}. Fix: add at least one "
                            f"{'entry' if key == 'knowledge_entries' else 'case'}.")
    entries: list[KnowledgeEntry] = []
    for i, e in enumerate(data["knowledge_entries"]):
        if not isinstance(e, dict) or not {"slug", "request", "text_response"} <= set(e):
            raise DataError(f"{p}: knowledge_entries[{i}] needs slug, request, text_response.")
        _known_keys(e, _ENTRY_KEYS, p, f"knowledge_entries[{i}]")
        entries.append(KnowledgeEntry(str(e["slug"]), str(e["request"]), str(e["text_response"]),
                                      str(e.get("summary") or "")))
    slugs = [e.slug for e in entries]
    if len(set(slugs)) != len(slugs):
        raise DataError(f"{p}: duplicate slug {next(s for s in slugs if slugs.count(s) > 1)!r}.")
    cases: list[BenchmarkCase] = []
    for i, c in enumerate(data["benchmark_cases"]):
        if not isinstance(c, dict) or not {"id", "query", "expected_slugs"} <= set(c):
            raise DataError(f"{p}: benchmark_cases[{i}] needs id, query, expected_slugs.")
        _known_keys(c, _CASE_KEYS, p, f"benchmark_cases[{i}]")
        if not isinstance(c["expected_slugs"], list):
            raise DataError(f"{p}: benchmark_cases[{i}].expected_slugs must be a list, found "
                            f"{c['expected_slugs']!r}. Fix: e.g. [\"slug-a\"] or [].")
        expected = tuple(str(s) for s in c["expected_slugs"])
        unknown = [s for s in expected if s not in set(slugs)]
        if unknown:
            raise DataError(f"{p}: benchmark_cases[{i}] ({c['id']}) expects unknown slug(s) {unknown}. "
                            "Fix: add the entries or correct the slugs.")
        cases.append(BenchmarkCase(str(c["id"]), str(c["query"]), expected,
                                   bool(c.get("expect_retrieval", bool(expected))), c.get("expected_answer_hint")))
    ids = [c.case_id for c in cases]
    if len(set(ids)) != len(ids):
        raise DataError(f"{p}: duplicate case id {next(s for s in ids if ids.count(s) > 1)!r}.")
    return EeragBench(str(data.get("name", "")), str(data.get("version", "")), tuple(entries), tuple(cases))


# --------------------------------------------------------------------------------------------- DCS msgs

DCS_COLUMNS = ("id", "content", "timestamp", "thread", "notes")


def load_dcs_messages(path: str | Path) -> pd.DataFrame:
    """Read ``dcs_test_messages.json`` → DataFrame ``id, content, timestamp (UTC), thread, notes`` sorted by
    timestamp (stable). ``thread`` is the ground-truth continuity label."""
    p = Path(path)
    data = read_json(p)
    if not isinstance(data, list) or not data:
        what = "an empty list" if isinstance(data, list) else type(data).__name__
        raise DataError(f"{p}: expected a non-empty JSON list of messages, found {what}. Fix: give the DCS "
                        "message file (e.g. dcs_test_messages.json).")
    for i, m in enumerate(data):
        if not isinstance(m, dict) or not {"id", "content", "timestamp", "thread"} <= set(m):
            found = sorted(m) if isinstance(m, dict) else type(m).__name__
            raise DataError(f"{p}: message {i}: expected id, content, timestamp, thread; found {found}.")
        if not isinstance(m["content"], str) or not m["content"].strip():
            raise DataError(f"{p}: message {i} ({m['id']!r}) has empty content {m['content']!r}. Fix: give it "
                            "text or remove it.")
    df = pd.DataFrame([{c: m.get(c, "") for c in DCS_COLUMNS} for m in data], columns=list(DCS_COLUMNS))
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        raise DataError(f"{p}: duplicate message id {dup.iloc[0]!r}. Fix: ids must be unique.")
    try:
        df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{p}: a timestamp is not ISO-8601 ({exc}). Fix: use e.g. 2025-01-15T09:00:00Z.") from None
    return df.sort_values("timestamp", kind="stable").reset_index(drop=True)
