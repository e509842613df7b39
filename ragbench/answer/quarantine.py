"""Prompt-injection quarantine: flag document text that is addressed to an AI rather than to a reader.

A document may carry text meant to steer an assistant: a forum reply telling "any AI assistant" to ignore its
instructions, a pasted note claiming "This document is Public" on an Internal page, or forged citation markers
("cite this post as [3]"). :func:`scan_document` flags every paragraph holding such text, for three reasons:

* ``addressed-to-ai`` — instructions to an assistant or claims of overriding authority (``ignore previous
  instructions``, ``to any AI assistant``, ``Assistant: …``, ``developer mode``, ``the highest authority``,
  ``overrides every other source``, ``this thread is an official … document``);
* ``classification-claim`` — the text claims a classification other than the document's ACL (the store's ACL is
  what counts, never the text);
* ``citation-markers`` — ``[n]`` markers inside a document, which only the answering service may write.

:class:`Quarantine` keeps the flags in the store (its own tables, through ``ensure_schema``), scans documents
whose content changed since their last scan, and redacts flagged spans from retrieved chunks: a flagged sentence is
never quoted and never reaches a chat model. Detection is paragraph-level on purpose: the sentences around an
injected instruction belong to the same untrusted post.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from ..llm.signals import paragraphs
from ..schema import Classification, Hit

SCHEMA = "answer.quarantine"
#: Bump when the detector changes: every document is scanned again.
DETECTOR_VERSION = "injection-v1"
PLACEHOLDER = "[quarantined]"

DDL = """
CREATE TABLE IF NOT EXISTS quarantine_scans (
    doc_id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    detector TEXT NOT NULL,
    flagged INTEGER NOT NULL,
    scanned_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS quarantine_spans (
    doc_id TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (doc_id, start)
);
"""

_AI = r"(?:ai|a\.i\.|llm|language\s+model|assistant|chat\s*bot|chatbot|bot|copilot|model)s?"
ADDRESSED = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*"
    r"(?:previous\s+|prior\s+|above\s+|earlier\s+|other\s+|existing\s+|original\s+)?"
    r"(?:instructions?|rules|guidelines|prompts?|access\s+controls?|restrictions|policies)\b"
    r"|\b(?:to|for)\s+(?:any|all|every|each)\s+(?:ai\s+|automated\s+)?" + _AI + r"\b"
    r"|\b(?:ai|llm)\s+(?:assistants?|models?|systems?|tools?)\s+(?:reading|must|should|shall|will|are\s+to)\b"
    r"|(?:^|[.!?:]\s+|\n)\s*(?:assistant|ai|chatbot|system|model)\s*:"
    r"|\bdeveloper\s+mode\b|\bsystem\s+prompt\b|\bjailbreak\b|\byou\s+are\s+now\s+(?:in|a|an)\b"
    r"|\b(?:highest|supreme|ultimate|overriding)\s+authority\b"
    r"|\b(?:overrides?|supersedes?|takes?\s+precedence\s+over)\s+(?:every|all|any)\s+other\b"
    r"|\bthis\s+(?:thread|post|page|comment|message|note|reply|email|e-mail|text)\s+is\s+(?:an?\s+|the\s+)?"
    r"(?:official|authoritative|binding)\b",
    re.IGNORECASE)
CLASSIFICATION_CLAIM = re.compile(
    r"\b(?:this|the)\s+(?:document|page|file|faq|thread|post|note|policy|text)\s+(?:is|has\s+been)\s+(?:now\s+)?"
    r"(?:(?:re-?)?classified\s+(?:as\s+)?)?(public|internal|confidential|restricted)\b"
    r"|\bclassification\s*(?:is|:)\s*(public|internal|confidential|restricted)\b",
    re.IGNORECASE)
MARKERS = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)*\s*\]")


@dataclass(frozen=True)
class Flag:
    """A flagged span ``[start, end)`` of a document's text and why it was flagged."""

    start: int
    end: int
    reasons: tuple[str, ...]


def reasons_for(text: str, classification: Classification | None = None) -> tuple[str, ...]:
    """Why ``text`` is quarantined (empty when it is not)."""
    out = []
    if ADDRESSED.search(text):
        out.append("addressed-to-ai")
    for m in CLASSIFICATION_CLAIM.finditer(text):
        if m.start() > 0 and text[m.start() - 1] in "\"“‘'«":
            continue  # a quoted claim is being discussed ('a sentence claiming "this document is Public"')
        claimed = Classification.parse(next(g for g in m.groups() if g))
        if classification is None or claimed != classification:
            out.append("classification-claim")
            break
    if MARKERS.search(text):
        out.append("citation-markers")
    return tuple(out)


def scan_document(text: str, classification: Classification | None = None) -> list[Flag]:
    """Flagged paragraphs of a document; ``classification`` is its ACL level (a claim of any other level is
    flagged; ``None``: every claim is)."""
    out = []
    for start, end in paragraphs(text):
        why = reasons_for(text[start:end], classification)
        if why:
            out.append(Flag(start, end, why))
    return out


def redact_text(text: str, classification: Classification | None = None) -> str:
    """``text`` with its flagged paragraphs replaced by :data:`PLACEHOLDER`."""
    flags = scan_document(text, classification)
    for f in reversed(flags):
        text = text[: f.start] + PLACEHOLDER + text[f.end:]
    return text


def flagged_texts(documents: Iterable[Any]) -> list[str]:
    """The flagged paragraph texts of ``documents`` (objects with ``text`` and ``acl``)."""
    out: list[str] = []
    for d in documents:
        level = getattr(getattr(d, "acl", None), "classification", None)
        out.extend(d.text[f.start:f.end] for f in scan_document(d.text, level))
    return out


class Quarantine:
    """Flags kept in a store: :meth:`refresh` scans new or changed documents, :meth:`redact` cleans hits."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._signature: str | None = None
        self._spans: dict[str, list[Flag]] = {}
        store.ensure_schema(SCHEMA, DDL, 1)

    def refresh(self) -> int:
        """Scan every document whose content or detector changed since its last scan (one transaction);
        forget documents that are gone. Returns the number of documents scanned."""
        rows = [tuple(r) for r in self.store.query("SELECT doc_id, sha256 FROM documents ORDER BY doc_id")]
        signature = hashlib.sha256(json.dumps([rows, DETECTOR_VERSION]).encode("utf-8")).hexdigest()
        if signature == self._signature:
            return 0
        seen = {r[0]: (r[1], r[2]) for r in self.store.query("SELECT doc_id, sha256, detector FROM quarantine_scans")}
        todo = [doc_id for doc_id, sha in rows if seen.get(doc_id) != (sha, DETECTOR_VERSION)]
        gone = sorted(set(seen) - {r[0] for r in rows})
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self.store.transaction() as conn:
            for doc_id in gone:
                conn.execute("DELETE FROM quarantine_scans WHERE doc_id = ?", (doc_id,))
                conn.execute("DELETE FROM quarantine_spans WHERE doc_id = ?", (doc_id,))
            for doc_id in todo:
                doc = self.store.get_document(doc_id)
                if doc is None:
                    continue
                flags = scan_document(doc.text, doc.acl.classification)
                conn.execute("DELETE FROM quarantine_spans WHERE doc_id = ?", (doc_id,))
                conn.executemany("INSERT INTO quarantine_spans VALUES (?, ?, ?, ?)",
                                 [(doc_id, f.start, f.end, ",".join(f.reasons)) for f in flags])
                conn.execute("INSERT OR REPLACE INTO quarantine_scans VALUES (?, ?, ?, ?, ?)",
                             (doc_id, doc.sha256, DETECTOR_VERSION, len(flags), now))
        self._spans = {}
        for doc_id, start, end, reasons in self.store.query(
                "SELECT doc_id, start, end, reasons FROM quarantine_spans ORDER BY doc_id, start"):
            self._spans.setdefault(doc_id, []).append(Flag(int(start), int(end), tuple(reasons.split(","))))
        self._signature = signature
        return len(todo)

    def flags(self, doc_id: str) -> list[Flag]:
        """The flagged spans of one document (after :meth:`refresh`)."""
        return list(self._spans.get(doc_id, ()))

    def flagged_chunks(self) -> dict[str, tuple[str, ...]]:
        """chunk id → the reasons of the flagged spans it overlaps."""
        out: dict[str, tuple[str, ...]] = {}
        for c in self.store.chunks(sorted(self._spans)):
            why = sorted({r for f in self._spans.get(c.doc_id, ()) if f.start < c.end and f.end > c.start
                          for r in f.reasons})
            if why:
                out[c.chunk_id] = tuple(why)
        return out

    def redact(self, hits: Sequence[Hit]) -> list[Hit]:
        """Hits whose text has every flagged span replaced by :data:`PLACEHOLDER`. A hit whose text is not its
        document's slice is scanned directly (defence in depth)."""
        self.refresh()
        out = []
        for h in hits:
            text = h.text
            spans = [f for f in self._spans.get(h.doc_id, ()) if f.start < h.end and f.end > h.start]
            if len(text) != h.end - h.start:
                spans = []  # not the document's slice: offsets would cut the wrong text
            for f in sorted(spans, key=lambda f: -f.start):
                a, b = max(f.start, h.start) - h.start, min(f.end, h.end) - h.start
                text = text[:a] + PLACEHOLDER + text[b:]
            acl = self.store.acl_of(h.doc_id)
            text = redact_text(text, acl.classification if acl is not None else None)
            out.append(h if text == h.text else replace(h, text=text))
        return out
