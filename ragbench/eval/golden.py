"""The project's own golden set: a fictional corpus with ACLs, principals and tagged questions.

Layout of a golden folder (see data/golden/README.md)::

    docs/*.md          one document per file: YAML front matter (id, title, department, acl, fictional) + body
    principals.yaml    ``principals:`` list of user_id / roles / departments / max_classification
    questions.jsonl    one question object per line

:func:`load_golden` validates everything up front so a typo never turns into a silently wrong metric: every
problem raises :class:`DataError` naming the file, the 1-based line and the field, with the fix.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
import yaml

from ..errors import DataError
from ..schema import Acl, Classification, Document, Principal, validate
from ..text import normalize_whitespace

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "data" / "golden"
TAGS = ("direct", "paraphrase", "multi-doc", "refuse-acl", "refuse-unanswerable", "followup")
REFUSAL_KIND = {"refuse-acl": "acl", "refuse-unanswerable": "unanswerable"}
QUESTION_FIELDS = ("qid", "question", "asked_by", "expected_docs", "alternates", "tag", "should_refuse",
                   "refusal_kind", "answer_fact", "chain_id", "turn")
_DOC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CLASSES = [c.name.title() for c in Classification]


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


# ------------------------------------------------------------------------------------------------- helpers


def _fail(path: Path, line: int, fieldname: str, problem: str, fix: str) -> DataError:
    return DataError(f"{path}:{line}: field {fieldname!r}: {problem}. Fix: {fix}.")


def _read_text(path: Path) -> str:
    """The file as UTF-8 text; a binary (NUL bytes) or non-UTF-8 file is a :class:`DataError` naming the file and
    the line of the first bad byte."""
    data = path.read_bytes()
    nul = data.find(b"\0")
    if nul >= 0:
        line = data[:nul].count(b"\n") + 1
        raise DataError(f"{path}:{line}: a binary file (NUL byte at offset {nul}), not UTF-8 text. "
                        "Fix: golden files are UTF-8 text; remove or convert this file.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}). "
                        "Fix: save the file as UTF-8.") from None


def _line_map(node: yaml.Node | None, offset: int, prefix: tuple = ()) -> dict[tuple, int]:
    """Path (keys / list indices) → 1-based line, from a composed YAML node tree."""
    lines: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (key.value,)
            lines[path] = key.start_mark.line + 1 + offset
            lines.update(_line_map(value, offset, path))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[prefix + (i,)] = item.start_mark.line + 1 + offset
            lines.update(_line_map(item, offset, prefix + (i,)))
    return lines


def _parse_yaml(text: str, path: Path, offset: int, what: str) -> tuple[Any, dict[tuple, int]]:
    try:
        data = yaml.safe_load(text)
        lines = _line_map(yaml.compose(text), offset)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 1 + offset) if mark is not None else 1 + offset
        raise _fail(path, line, what, f"invalid YAML ({getattr(exc, 'problem', exc)})",
                    "correct the YAML syntax (indentation, quotes, colons)") from None
    return data, lines


def _str_list(value: Any, path: Path, line: int, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, line, name, f"expected a list of non-empty strings, found {value!r}",
                    "write a YAML/JSON list such as [employee] or []")
    return list(value)


def _classification(value: Any, path: Path, line: int, name: str) -> Classification:
    if not isinstance(value, str) or value.strip().title() not in _CLASSES:
        raise _fail(path, line, name, f"unknown classification {value!r}", f"use one of {_CLASSES}")
    return Classification.parse(value)


# ------------------------------------------------------------------------------------------------- principals


def _load_principals(path: Path) -> dict[str, Principal]:
    if not path.is_file():
        raise _fail(path, 0, "principals", "file not found", "create principals.yaml (see data/golden/README.md)")
    data, lines = _parse_yaml(_read_text(path), path, 0, "principals")
    if not isinstance(data, dict) or not isinstance(data.get("principals"), list) or not data["principals"]:
        raise _fail(path, 1, "principals", "expected a top-level 'principals:' list with at least one entry",
                    "start the file with 'principals:' followed by '- user_id: …' items")
    out: dict[str, Principal] = {}
    for i, item in enumerate(data["principals"]):
        at = lines.get(("principals", i), 1)
        if not isinstance(item, dict):
            raise _fail(path, at, "principals", f"entry {i} is {type(item).__name__}, not a mapping",
                        "write each principal as a mapping with user_id, roles, departments, max_classification")
        for key in ("user_id", "roles", "departments", "max_classification"):
            if key not in item:
                raise _fail(path, at, key, "missing", f"add '{key}:' to this principal")
        line = lambda k: lines.get(("principals", i, k), at)  # noqa: E731, B023 - tiny lookup, used in this iteration
        uid = item["user_id"]
        if not isinstance(uid, str) or not uid.strip():
            raise _fail(path, line("user_id"), "user_id", f"expected a non-empty string, found {uid!r}",
                        "give the principal an id such as eval-staff")
        if uid in out:
            raise _fail(path, line("user_id"), "user_id", f"duplicate principal {uid!r}",
                        "give every principal a unique user_id")
        roles = _str_list(item["roles"], path, line("roles"), "roles")
        depts = _str_list(item["departments"], path, line("departments"), "departments")
        level = _classification(item["max_classification"], path, line("max_classification"),
                                "max_classification")
        out[uid] = Principal.make(uid, roles, depts, level)
    return out


# ------------------------------------------------------------------------------------------------- documents


def _load_document(path: Path, folder: Path) -> tuple[Document, int]:
    """One Markdown document; returns it with the line of its ``id`` field (for duplicate reports)."""
    text = _read_text(path)
    all_lines = text.splitlines()
    if not all_lines or all_lines[0].strip() != "---":
        raise _fail(path, 1, "front matter", "the file does not start with a '---' line",
                    "begin the file with a YAML front-matter block between two '---' lines")
    try:
        end = next(i for i in range(1, len(all_lines)) if all_lines[i].strip() == "---")
    except StopIteration:
        raise _fail(path, 1, "front matter", "no closing '---' line",
                    "close the front matter with a '---' line before the body") from None
    meta, lines = _parse_yaml("\n".join(all_lines[1:end]), path, 1, "front matter")
    if not isinstance(meta, dict):
        raise _fail(path, 2, "front matter", f"expected a mapping, found {type(meta).__name__}",
                    "write 'key: value' lines between the '---' markers")
    line = lambda *k: lines.get(k, 2)  # noqa: E731
    for key in ("id", "title", "department", "acl", "fictional"):
        if key not in meta:
            raise _fail(path, 2, key, "missing from the front matter", f"add '{key}:' to the front matter")
    doc_id = meta["id"]
    if not isinstance(doc_id, str) or not _DOC_ID.match(doc_id):
        raise _fail(path, line("id"), "id", f"expected letters, digits, '.', '_' or '-', found {doc_id!r}",
                    "use an id such as hr-leave")
    for key in ("title", "department"):
        if not isinstance(meta[key], str) or not meta[key].strip():
            raise _fail(path, line(key), key, f"expected a non-empty string, found {meta[key]!r}",
                        f"give the document a {key}")
    if meta["fictional"] is not True:
        raise _fail(path, line("fictional"), "fictional", f"expected true, found {meta['fictional']!r}",
                    "golden documents must be invented; set 'fictional: true'")
    acl = meta["acl"]
    if not isinstance(acl, dict):
        raise _fail(path, line("acl"), "acl", f"expected a mapping, found {acl!r}",
                    "write acl: {roles: [...], departments: [...], classification: Internal}")
    for key in ("roles", "departments", "classification"):
        if key not in acl:
            raise _fail(path, line("acl"), f"acl.{key}", "missing", f"add '{key}:' under acl")
    roles = _str_list(acl["roles"], path, line("acl", "roles"), "acl.roles")
    depts = _str_list(acl["departments"], path, line("acl", "departments"), "acl.departments")
    level = _classification(acl["classification"], path, line("acl", "classification"), "acl.classification")
    body = "\n".join(all_lines[end + 1:]).strip()
    if not body:
        raise _fail(path, end + 2, "body", "the document has no text after the front matter",
                    "write the document body below the closing '---'")
    metadata = {k: v for k, v in meta.items() if k not in ("id", "title", "acl")}
    doc = Document(doc_id=doc_id, text=body, title=meta["title"].strip(),
                   source=path.relative_to(folder).as_posix(), acl=Acl.make(roles, depts, level),
                   metadata=metadata)
    return doc, line("id")


def _load_documents(folder: Path) -> list[Document]:
    files = sorted((folder / "docs").glob("*.md"))
    if not files:
        raise _fail(folder / "docs", 0, "documents", "no *.md documents found",
                    "put one Markdown file per document under docs/")
    docs: list[Document] = []
    seen: dict[str, Path] = {}
    for path in files:
        doc, id_line = _load_document(path, folder)
        if doc.doc_id in seen:
            raise _fail(path, id_line, "id", f"duplicate document id {doc.doc_id!r} (also in {seen[doc.doc_id]})",
                        "give every document a unique id")
        seen[doc.doc_id] = path
        docs.append(doc)
    return docs


# ------------------------------------------------------------------------------------------------- questions


def _check_question(row: Mapping[str, Any], path: Path, n: int, principals: Mapping[str, Principal],
                    docs: Mapping[str, Document]) -> GoldenQuestion:
    """Types, then the cross-field rules, then the facts against the corpus and the ACLs."""
    def bad(name: str, problem: str, fix: str) -> DataError:
        return _fail(path, n, name, problem, fix)

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
        raise _fail(path, 0, "questions", "file not found", "create questions.jsonl (one JSON object per line)")
    questions: list[GoldenQuestion] = []
    line_of: dict[str, int] = {}
    for n, raw in enumerate(_read_text(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _fail(path, n, "(json)", f"not valid JSON ({exc.msg} at column {exc.colno})",
                        "write exactly one complete JSON object per line") from None
        if not isinstance(row, dict):
            raise _fail(path, n, "(json)", f"expected a JSON object, found {type(row).__name__}",
                        "write one {...} object per line")
        q = _check_question(row, path, n, principals, docs)
        if q.qid in line_of:
            raise _fail(path, n, "qid", f"duplicate qid {q.qid!r} (first on line {line_of[q.qid]})",
                        "give every question a unique qid")
        line_of[q.qid] = n
        questions.append(q)
    if not questions:
        raise _fail(path, 1, "questions", "the file holds no questions", "add one JSON object per line")
    chains: dict[str, list[GoldenQuestion]] = {}
    for q in questions:
        if q.chain_id is not None:
            chains.setdefault(q.chain_id, []).append(q)
    for cid, qs in chains.items():
        turns = sorted(q.turn or 0 for q in qs)
        if turns != list(range(1, len(qs) + 1)):
            raise _fail(path, line_of[qs[-1].qid], "turn", f"chain {cid!r} has turns {turns}",
                        "number the turns of a chain 1, 2, 3… without gaps or repeats")
        if len({q.asked_by for q in qs}) > 1:
            raise _fail(path, line_of[qs[-1].qid], "asked_by", f"chain {cid!r} mixes askers",
                        "one principal asks every turn of a conversation")
    return questions


# ------------------------------------------------------------------------------------------------- entry point


def _hash_files(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted((folder / "docs").glob("*.md")) + [folder / "principals.yaml", folder / "questions.jsonl"]:
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def load_golden(folder: str | Path = DEFAULT_FOLDER) -> GoldenSet:
    """Load and validate a golden folder; raises :class:`DataError` (file:line, field, fix) on any problem."""
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"golden folder {root} not found; expected a folder with docs/, principals.yaml and "
                        f"questions.jsonl. Fix: pass the right path (the bundled set is {DEFAULT_FOLDER}).")
    principals = _load_principals(root / "principals.yaml")
    documents = _load_documents(root)
    questions = _load_questions(root / "questions.jsonl", principals, {d.doc_id: d for d in documents})
    return GoldenSet(root, documents, principals, questions, _hash_files(root))
