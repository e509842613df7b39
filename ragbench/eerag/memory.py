"""Conversation memory: every turn of a conversation stored in the knowledge store, retrievable beside documents.

A turn is written twice, in one transaction: a row of ``eerag_turns`` (the conversation's own record: role,
speaker, content, summary, request id, metadata) and a one-chunk document ``memory:<conversation>:<seq>`` (with
its embedding and its Layer-1 summary), so that the header can show it like any other candidate. Memory documents
carry ``source = "eerag-memory:<conversation>"``; document retrieval leaves them out and each conversation only
ever sees its own memory.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from ..config import RagbenchConfig
from ..errors import DataError
from ..retrieval.base import Embedder, Retriever
from ..retrieval.chunking import WholeDocumentChunker
from ..retrieval.retriever import make_retriever, store_vectors, vector_part
from ..schema import Acl, Chunk, Document, Hit, Principal

MEMORY_PREFIX = "memory:"
MEMORY_SOURCE = "eerag-memory:"
DDL = """
CREATE TABLE IF NOT EXISTS eerag_conversations (
    conversation_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS eerag_turns (
    conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, speaker TEXT NOT NULL,
    content TEXT NOT NULL, summary TEXT NOT NULL, doc_id TEXT NOT NULL, request_id TEXT, meta TEXT NOT NULL,
    created_at TEXT NOT NULL, PRIMARY KEY (conversation_id, seq));
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def memory_doc_id(conversation_id: str, seq: int) -> str:
    return f"{MEMORY_PREFIX}{conversation_id}:{seq:06d}"


def memory_acl(conversation_id: str) -> Acl:
    """The ACL of a conversation's memory documents: Restricted, with a role no principal is issued, so every
    ACL-aware retriever over the store fails closed on them. The conversation reads its own memory through its
    own index (``MemoryRetriever.memories``), scoped by conversation id; ownership of the conversation is checked
    by whoever hands it out (the server: the creating principal only)."""
    return Acl.make(roles=[f"eerag-memory:{conversation_id}"], classification="Restricted")


def is_memory(doc_id: str) -> bool:
    return doc_id.startswith(MEMORY_PREFIX)


@dataclass(frozen=True)
class Turn:
    """One stored turn. ``doc_id`` is also its DCS message id and its chunk's document id."""

    seq: int
    role: str
    speaker: str
    content: str
    summary: str
    doc_id: str
    request_id: str | None
    created_at: str
    meta: Mapping[str, Any] = field(default_factory=dict)


class ConversationMemory:
    """The turns of one conversation in ``store``; ``summarize(text)`` makes the Layer-1 summary of a turn."""

    def __init__(self, store: Any, conversation_id: str, embedder: Embedder | None,
                 summarize: Callable[[str], str]) -> None:
        if not isinstance(conversation_id, str) or not conversation_id.strip() or ":" in conversation_id:
            raise DataError(f"conversation id must be a non-blank string without ':', found {conversation_id!r}.")
        self.store = store
        self.conversation_id = conversation_id
        self.embedder = embedder
        self.summarize = summarize
        store.ensure_schema("eerag.memory", DDL, 1)
        self._turns: list[Turn] | None = None

    # -- reading -------------------------------------------------------------------------------------------
    def exists(self) -> bool:
        return bool(self.store.query("SELECT 1 FROM eerag_conversations WHERE conversation_id = ?",
                                     (self.conversation_id,)))

    def create(self, config: Mapping[str, Any]) -> None:
        with self.store.transaction() as con:
            con.execute("INSERT OR IGNORE INTO eerag_conversations VALUES (?, ?, ?)",
                        (self.conversation_id, _now(), json.dumps(dict(config), sort_keys=True, default=str)))

    def turns(self) -> list[Turn]:
        if self._turns is None:
            rows = self.store.query("SELECT seq, role, speaker, content, summary, doc_id, request_id, created_at, "
                                    "meta FROM eerag_turns WHERE conversation_id = ? ORDER BY seq",
                                    (self.conversation_id,))
            self._turns = [Turn(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8])) for r in rows]
        return list(self._turns)

    def __len__(self) -> int:
        return len(self.turns())

    # -- writing -------------------------------------------------------------------------------------------
    def add(self, role: str, content: str, speaker: str | None = None, meta: Mapping[str, Any] | None = None,
            request_id: str | None = None, retrieval_text: str | None = None, summary: str | None = None,
            timestamp: datetime | None = None) -> Turn:
        """Store one turn (row + memory document with embedding and summary) in a single transaction.

        ``retrieval_text`` is what is indexed and injected when the turn is elected (default ``"<speaker>:
        <content>"``); ``summary`` overrides the summariser."""
        if not content.strip():
            raise DataError(f"conversation {self.conversation_id}: a {role} turn is blank. Fix: send some text.")
        speaker = speaker or role
        seq = len(self.turns())
        doc_id = memory_doc_id(self.conversation_id, seq)
        text = retrieval_text or f"{speaker}: {content}"
        summ = summary if summary is not None else self.summarize(f"{speaker}: {content}")
        created = (timestamp or datetime.now(UTC)).isoformat(timespec="milliseconds")
        doc = Document(doc_id, text, title=f"{speaker} ({role})", source=MEMORY_SOURCE + self.conversation_id,
                       acl=memory_acl(self.conversation_id),
                       metadata={"conversation_id": self.conversation_id, "seq": seq, "role": role})
        with self.store.transaction() as con:
            self.store.ingest([doc], WholeDocumentChunker(), self.embedder, summarizer=lambda c: summ)
            con.execute("INSERT INTO eerag_turns VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (self.conversation_id, seq, role, speaker, content, summ, doc_id, request_id,
                         json.dumps(dict(meta or {}), default=str), created))
        turn = Turn(seq, role, speaker, content, summ, doc_id, request_id, created, dict(meta or {}))
        self.turns()
        assert self._turns is not None
        self._turns.append(turn)
        return turn

    def chunks(self) -> list[Chunk]:
        return self.store.chunks([t.doc_id for t in self.turns()])


class MemoryRetriever(Retriever):
    """Documents and this conversation's memory behind one ``search``: the configured retriever over the store's
    non-memory chunks (indexed once) and over the memory (re-indexed when it grew), interleaved document, memory,
    document… (reciprocal-rank fusion with equal weights), ``k`` in all."""

    def __init__(self, store: Any, memory: ConversationMemory | None, mode: str, cfg: RagbenchConfig,
                 embedder: Embedder | None) -> None:
        self.store = store
        self.memory = memory
        self.mode = mode
        self.cfg = cfg
        self.embedder = embedder
        self._docs: Retriever | None = None
        self._docs_built = False
        self._mem: Retriever | None = None
        self._mem_size = -1

    def _build(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
               titles: Mapping[str, str] | None = None) -> Retriever | None:
        if not chunks:
            return None
        r = make_retriever(self.mode, self.cfg, self.embedder)
        kwargs: dict[str, Any] = {}
        vec = vector_part(r)
        if vec is not None:
            kwargs["vectors"] = store_vectors(self.store, [c.chunk_id for c in chunks], vec.embedder,
                                              [c.text for c in chunks])
        r.index(chunks, acls, titles, **kwargs)
        return r

    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False, **kw: Any) -> MemoryRetriever:
        raise NotImplementedError("MemoryRetriever indexes the store itself")

    def documents(self) -> Retriever | None:
        if not self._docs_built:
            chunks = [c for c in self.store.chunks() if not is_memory(c.doc_id)]
            self._docs = self._build(chunks, self.store.acls(), self.store.titles())
            self._docs_built = True
        return self._docs

    def memories(self) -> Retriever | None:
        if self.memory is None:
            return None
        if self._mem_size != len(self.memory):
            self._mem = self._build(self.memory.chunks())
            self._mem_size = len(self.memory)
        return self._mem

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> list[Hit]:
        lists = []
        for r in (self.documents(), self.memories()):
            lists.append(r.search(query, k, principal) if r is not None and query.strip() else [])
        merged: list[Hit] = []
        for i in range(k):
            for hits in lists:
                if i < len(hits):
                    merged.append(hits[i])
        return [replace(h, rank=i) for i, h in enumerate(merged[:k])]
