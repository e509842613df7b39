"""Data shapes: the small frozen dataclasses passed between stages and the DataFrame tables, validated here
and only here.

Tables follow the IR conventions of PyTerrier / ir_measures: ``qid, docno, score, rank`` (rank from 0).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .errors import SchemaError

# ---------------------------------------------------------------------------------------------- tables

QUERIES = ("qid", "query")
RUN = ("qid", "docno", "score", "rank")
RUN_OPTIONAL = ("text", "chunk_id", "doc_id")
QRELS = ("qid", "docno", "label")
ANSWERS = ("qid", "answer", "citations", "refused", "support_ratio", "prompt_version", "context_tokens")
PER_QUERY = ("system", "qid", "measure", "value")

TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "queries": (QUERIES, ("conversation_id", "turn")),
    "run": (RUN, RUN_OPTIONAL),
    "qrels": (QRELS, ()),
    "answers": (ANSWERS, ("refusal_reason", "model_id", "retrieval_mode", "cited_docnos", "judge_p_yes",
                           "decided_by")),
    "per_query": (PER_QUERY, ("slice",)),
}


def validate(df: Any, table: str) -> Any:
    """Check that ``df`` has exactly the required columns of ``table`` (plus allowed optional ones).

    Raises :class:`SchemaError` naming the expected, missing and extra columns.
    """
    if table not in TABLES:
        raise SchemaError(f"unknown table kind {table!r}; expected one of {sorted(TABLES)}")
    required, optional = TABLES[table]
    cols = list(getattr(df, "columns", []))
    missing = [c for c in required if c not in cols]
    extra = [c for c in cols if c not in required and c not in optional]
    if missing or extra:
        raise SchemaError(
            f"{table} table: expected columns {list(required)} (optional {list(optional)}), found {cols}; "
            f"missing {missing}, extra {extra}. Fix: rename or drop columns to match."
        )
    return df


# ---------------------------------------------------------------------------------------------- ACLs


class Classification(enum.IntEnum):
    """Document sensitivity, ordered: a principal sees levels up to its maximum."""

    PUBLIC = 0
    INTERNAL = 1
    CONFIDENTIAL = 2
    RESTRICTED = 3

    @classmethod
    def parse(cls, value: "str | int | Classification") -> "Classification":
        if isinstance(value, Classification):
            return value
        if isinstance(value, int):
            return cls(value)
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            raise SchemaError(
                f"unknown classification {value!r}; expected one of {[c.name.title() for c in cls]}"
            ) from None


def _norm_set(values: Iterable[str] | None) -> frozenset[str]:
    return frozenset(v.strip().lower() for v in (values or ()) if v and v.strip())


@dataclass(frozen=True)
class Acl:
    """Who may read a document: empty roles/departments mean "anyone" on that axis (Enterprise source)."""

    roles: frozenset[str] = frozenset()
    departments: frozenset[str] = frozenset()
    classification: Classification = Classification.INTERNAL

    @classmethod
    def make(cls, roles: Iterable[str] | None = None, departments: Iterable[str] | None = None,
             classification: "str | int | Classification" = Classification.INTERNAL) -> "Acl":
        return cls(_norm_set(roles), _norm_set(departments), Classification.parse(classification))

    def allows(self, principal: "Principal | None") -> bool:
        """Max classification ≥ the document's, and a shared role and department where those are set.

        ``None`` means an unrestricted caller (offline evaluation with no ACLs)."""
        if principal is None:
            return True
        if principal.max_classification < self.classification:
            return False
        if self.roles and not (self.roles & principal.roles):
            return False
        if self.departments and not (self.departments & principal.departments):
            return False
        return True

    def to_json(self) -> dict[str, Any]:
        return {"roles": sorted(self.roles), "departments": sorted(self.departments),
                "classification": self.classification.name.title()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "Acl":
        if not data:
            return PUBLIC_ACL
        return cls.make(data.get("roles"), data.get("departments"), data.get("classification", "Internal"))


PUBLIC_ACL = Acl(frozenset(), frozenset(), Classification.PUBLIC)


@dataclass(frozen=True)
class Principal:
    """A user asking: id, roles, departments and the highest classification they may read."""

    user_id: str
    roles: frozenset[str] = frozenset()
    departments: frozenset[str] = frozenset()
    max_classification: Classification = Classification.PUBLIC

    @classmethod
    def make(cls, user_id: str, roles: Iterable[str] | None = None, departments: Iterable[str] | None = None,
             max_classification: "str | int | Classification" = Classification.PUBLIC) -> "Principal":
        if not user_id or not user_id.strip():
            raise SchemaError("principal user_id is blank. Fix: give a non-empty user id.")
        return cls(user_id.strip(), _norm_set(roles), _norm_set(departments), Classification.parse(max_classification))


# ---------------------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Document:
    """A source document. ``doc_id`` is the caller's stable id (BEIR ``_id``, file path, URL…)."""

    doc_id: str
    text: str
    title: str = ""
    source: str = ""
    acl: Acl = PUBLIC_ACL
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A piece of a document with its character span ``[start, end)`` into the document text."""

    chunk_id: str
    doc_id: str
    seq: int
    start: int
    end: int
    text: str
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk; ``rank`` counts from 0.

    Slotted: a retriever builds up to k of these per query, and a slotted object is one allocation (no instance
    dict) that the cyclic garbage collector traverses cheaply (see :mod:`ragbench.retrieval.hits`)."""

    chunk_id: str
    doc_id: str
    score: float
    rank: int
    text: str = ""
    title: str = ""
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Message:
    """A chat message; ``meta`` carries ids, timestamps, audit tags and the like."""

    role: str
    content: str
    meta: Mapping[str, Any] = field(default_factory=dict)


def hits_to_run(qid: str, hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Rows of a run table for one query, aggregating chunks to documents (best chunk wins, first seen on ties)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for h in hits:
        if h.doc_id in seen:
            continue
        seen.add(h.doc_id)
        rows.append({"qid": qid, "docno": h.doc_id, "score": float(h.score), "rank": len(rows)})
    return rows
