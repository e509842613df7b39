"""The project's own golden set: a fictional corpus with ACLs, principals and tagged questions.

Layout of a golden folder (see data/golden/README.md)::

    docs/*.md          one document per file: YAML front matter (id, title, department, acl, fictional) + body
    principals.yaml    ``principals:`` list of user_id / roles / departments / max_classification
    questions.jsonl    one question object per line

:func:`load_golden` validates everything up front so a typo never turns into a silently wrong metric: every
problem raises :class:`DataError` naming the file, the 1-based line and the field, with the fix.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..errors import DataError
from ..schema import Document, Principal, validate
from ..text import normalize_whitespace, read_text_file
from .golden_files import fail, hash_files, load_documents, load_principals

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "data" / "golden"
TAGS = ("direct", "paraphrase", "multi-doc", "refuse-acl", "refuse-unanswerable", "followup")
REFUSAL_KIND = {"refuse-acl": "acl", "refuse-unanswerable": "unanswerable"}
QUESTION_FIELDS = ("qid", "question", "asked_by", "expected_docs", "alternates", "tag", "should_refuse",
                   "refusal_kind", "answer_fact", "chain_id", "turn")


@dataclass(frozen=True)
class GoldenQuestion:
    """One golden question; ``expected_docs`` of a refuse-acl question are the documents its asker may NOT read."""

    qid: str
    question: str
    asked_by: str
    expected_docs: tuple[str, ...]
    alternates: tuple[str, ...]
    tag: str
    should_refuse: bool
    refusal_kind: str | None
    answer_fact: str | None
    chain_id: str | None
    turn: int | None

    @property
    def accepted_docs(self) -> frozenset[str]:
        """Documents a correct citation may point at (expected ∪ alternates)."""
        return frozenset(self.expected_docs) | frozenset(self.alternates)


@dataclass(frozen=True)
class GoldenSet:
    """A validated golden set. ``data_hash`` is the sha256 of the data files (README excluded)."""

    folder: Path
    documents: list[Document]
    principals: dict[str, Principal]
    questions: list[GoldenQuestion]
    data_hash: str
    _by_qid: dict[str, GoldenQuestion] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_qid.update({q.qid: q for q in self.questions})

    def question(self, qid: str) -> GoldenQuestion:
        if qid not in self._by_qid:
            raise DataError(f"unknown golden qid {qid!r}; expected one of the {len(self._by_qid)} qids in "
                            f"{self.folder / 'questions.jsonl'}. Fix: use a qid from .questions.")
        return self._by_qid[qid]

    def principal(self, qid: str) -> Principal:
        """The principal who asks question ``qid``."""
        return self.principals[self.question(qid).asked_by]

    def document(self, doc_id: str) -> Document:
        for d in self.documents:
            if d.doc_id == doc_id:
                return d
        raise DataError(f"unknown golden document {doc_id!r}. Fix: use an id from .documents.")

    def tags(self) -> dict[str, str]:
        """qid → slice tag."""
        return {q.qid: q.tag for q in self.questions}

    def chains(self) -> dict[str, list[GoldenQuestion]]:
        """chain_id → its questions ordered by turn (follow-up conversations)."""
        out: dict[str, list[GoldenQuestion]] = {}
        for q in self.questions:
            if q.chain_id is not None:
                out.setdefault(q.chain_id, []).append(q)
        return {cid: sorted(qs, key=lambda q: q.turn or 0) for cid, qs in out.items()}

    def queries_df(self, answerable_only: bool = False) -> pd.DataFrame:
        """Columns qid, query (every question, or only those that should be answered)."""
        rows = [{"qid": q.qid, "query": q.question} for q in self.questions
                if not (answerable_only and q.should_refuse)]
        return validate(pd.DataFrame(rows, columns=["qid", "query"]), "queries")

    def qrels_df(self) -> pd.DataFrame:
        """Columns qid, docno, label = 1 for each expected document of each answerable question."""
        rows = [{"qid": q.qid, "docno": d, "label": 1}
                for q in self.questions if not q.should_refuse for d in q.expected_docs]
        df = pd.DataFrame(rows, columns=["qid", "docno", "label"]).astype({"label": "int64"})
        return validate(df, "qrels")


# ------------------------------------------------------------------------------------------------- questions


def _check_question(row: Mapping[str, Any], path: Path, n: int, principals: Mapping[str, Principal],
                    docs: Mapping[str, Document]) -> GoldenQuestion:
    """Types, then the cross-field rules, then the facts against the corpus and the ACLs."""
    def bad(name: str, problem: str, fix: str) -> DataError:
        return fail(path, n, name, problem, fix)

    for name in QUESTION_FIELDS:
        if name not in row:
            raise bad(name, "missing", f"add \"{name}\" (null where it does not apply)")
    unknown = sorted(set(row) - set(QUESTION_FIELDS))
    if unknown:
        raise bad(unknown[0], "unknown field", f"use only the fields {list(QUESTION_FIELDS)}")
    for name in ("qid", "question", "asked_by", "tag"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise bad(name, f"expected a non-empty string, found {row[name]!r}", f"give a {name}")
    for name in ("answer_fact", "chain_id", "refusal_kind"):
        if row[name] is not None and (not isinstance(row[name], str) or not row[name].strip()):
            raise bad(name, f"expected null or a non-empty string, found {row[name]!r}", "use null or a string")
    for name in ("expected_docs", "alternates"):
        if not isinstance(row[name], list) or not all(isinstance(d, str) for d in row[name]):
            raise bad(name, f"expected a list of document ids, found {row[name]!r}", "write a JSON list of ids")
        for d in row[name]:
            if d not in docs:
                raise bad(name, f"document {d!r} does not exist in docs/", "use an 'id' from a docs/*.md file")
    if not isinstance(row["should_refuse"], bool):
        raise bad("should_refuse", f"expected true or false, found {row['should_refuse']!r}", "use a JSON bool")
    turn = row["turn"]
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 1):
        raise bad("turn", f"expected null or an integer ≥ 1, found {turn!r}", "number chain turns 1, 2, 3…")
    tag = row["tag"]
    if tag not in TAGS:
        raise bad("tag", f"unknown tag {tag!r}", f"use one of {list(TAGS)}")
    if row["asked_by"] not in principals:
        raise bad("asked_by", f"unknown principal {row['asked_by']!r}",
                  f"use a user_id from principals.yaml: {sorted(principals)}")
    refuse = tag in REFUSAL_KIND
    if row["should_refuse"] != refuse:
        raise bad("should_refuse", f"{row['should_refuse']} does not match tag {tag!r}",
                  "should_refuse is true exactly for the refuse-acl and refuse-unanswerable tags")
    if row["refusal_kind"] != REFUSAL_KIND.get(tag):
        raise bad("refusal_kind", f"{row['refusal_kind']!r} does not match tag {tag!r}",
                  f"use {REFUSAL_KIND.get(tag)!r} for this tag" if refuse else "use null for answerable questions")
    expected = row["expected_docs"]
    if tag == "refuse-unanswerable":
        if expected or row["answer_fact"] is not None:
            raise bad("expected_docs", "an unanswerable question lists documents or an answer_fact",
                      "use [] and null, or change the tag")
    elif not expected:
        raise bad("expected_docs", "empty for a question that has an answer", "list the answering documents")
    if tag == "multi-doc" and len(set(expected)) < 2:
        raise bad("expected_docs", "a multi-doc question needs at least two documents", "add the second document")
    if (tag == "followup") != (row["chain_id"] is not None) or (row["chain_id"] is None) != (turn is None):
        raise bad("chain_id", f"tag {tag!r} with chain_id {row['chain_id']!r} and turn {turn!r}",
                  "followup questions set both chain_id and turn; all other questions set both to null")
    fact = row["answer_fact"]
    if fact is not None:
        needle = normalize_whitespace(fact)
        if not any(needle in normalize_whitespace(docs[d].text) for d in expected):
            raise bad("answer_fact", f"{fact!r} does not occur in any of {expected}",
                      "copy the fact verbatim from an expected document, or fix expected_docs")
    who = principals[row["asked_by"]]
    readable = [d for d in expected if docs[d].acl.allows(who)]
    if tag == "refuse-acl" and readable:
        raise bad("asked_by", f"{who.user_id!r} CAN read {readable}, so this is not an ACL refusal",
                  "ask as a principal without access, or change the tag")
    if not refuse and not readable:
        raise bad("asked_by", f"{who.user_id!r} can read none of {expected}",
                  "ask as a principal with access, or tag the question refuse-acl")
    return GoldenQuestion(row["qid"].strip(), row["question"].strip(), row["asked_by"], tuple(expected),
                          tuple(row["alternates"]), tag, row["should_refuse"], row["refusal_kind"], fact,
                          row["chain_id"], turn)


def _load_questions(path: Path, principals: Mapping[str, Principal],
                    docs: Mapping[str, Document]) -> list[GoldenQuestion]:
    if not path.is_file():
        raise fail(path, 0, "questions", "file not found", "create questions.jsonl (one JSON object per line)")
    questions: list[GoldenQuestion] = []
    line_of: dict[str, int] = {}
    for n, raw in enumerate(read_text_file(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise fail(path, n, "(json)", f"not valid JSON ({exc.msg} at column {exc.colno})",
                       "write exactly one complete JSON object per line") from None
        if not isinstance(row, dict):
            raise fail(path, n, "(json)", f"expected a JSON object, found {type(row).__name__}",
                       "write one {...} object per line")
        q = _check_question(row, path, n, principals, docs)
        if q.qid in line_of:
            raise fail(path, n, "qid", f"duplicate qid {q.qid!r} (first on line {line_of[q.qid]})",
                       "give every question a unique qid")
        line_of[q.qid] = n
        questions.append(q)
    if not questions:
        raise fail(path, 1, "questions", "the file holds no questions", "add one JSON object per line")
    chains: dict[str, list[GoldenQuestion]] = {}
    for q in questions:
        if q.chain_id is not None:
            chains.setdefault(q.chain_id, []).append(q)
    for cid, qs in chains.items():
        turns = sorted(q.turn or 0 for q in qs)
        if turns != list(range(1, len(qs) + 1)):
            raise fail(path, line_of[qs[-1].qid], "turn", f"chain {cid!r} has turns {turns}",
                       "number the turns of a chain 1, 2, 3… without gaps or repeats")
        if len({q.asked_by for q in qs}) > 1:
            raise fail(path, line_of[qs[-1].qid], "asked_by", f"chain {cid!r} mixes askers",
                       "one principal asks every turn of a conversation")
    return questions


# ------------------------------------------------------------------------------------------------- entry point


def load_golden(folder: str | Path = DEFAULT_FOLDER) -> GoldenSet:
    """Load and validate a golden folder; raises :class:`DataError` (file:line, field, fix) on any problem."""
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"golden folder {root} not found; expected a folder with docs/, principals.yaml and "
                        f"questions.jsonl. Fix: pass the right path (the bundled set is {DEFAULT_FOLDER}).")
    principals = load_principals(root / "principals.yaml")
    documents = load_documents(root)
    questions = _load_questions(root / "questions.jsonl", principals, {d.doc_id: d for d in documents})
    return GoldenSet(root, documents, principals, questions, hash_files(root))
