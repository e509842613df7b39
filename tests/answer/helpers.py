"""A small corpus in a real in-memory KnowledgeStore, plus retrievers and chat models for answer tests."""
from __future__ import annotations

from typing import Sequence

from ragbench.llm.base import ChatModel, Completion
from ragbench.retrieval.base import Retriever
from ragbench.retrieval.bm25 import BM25Retriever
from ragbench.retrieval.chunking import WholeDocumentChunker
from ragbench.schema import Acl, Document, Hit, Message, Principal
from ragbench.store import KnowledgeStore
from ragbench.text import tokenize

PTO = "Full-time employees receive 25 days of paid time off per year. Up to 5 unused days carry over."
BOARD = "The CEO long-term incentive pool is 3.5 million pounds. The zebraquartz plan vests in 2027."
CONDUCT = "Everyone must treat colleagues with respect. Report concerns about conduct to HR."
ENG = "Production deploys are frozen after 14:00 on Fridays. Hotfixes need two reviewers."

DOCS = [
    Document("pto", PTO, "HR Policy: Paid time off", acl=Acl.make(["employee"], ["hr"], "Internal")),
    Document("board", BOARD, "Board-only compensation", acl=Acl.make(["board"], [], "Restricted")),
    Document("conduct", CONDUCT, "Code of conduct", acl=Acl.make([], [], "Public")),
    Document("eng", ENG, "Engineering: deployment", acl=Acl.make(["employee"], ["engineering"], "Internal")),
]

HR = Principal.make("hr-user", ["employee"], ["hr"], "Confidential")
GUEST = Principal.make("guest", ["guest"], [], "Public")
BOARD_MEMBER = Principal.make("board-member", ["board"], [], "Restricted")
# Cleared to Restricted but lacks the board role: the seed's classification-only store check let this through.
CLEARED_ENGINEER = Principal.make("cleared-eng", ["employee"], ["engineering"], "Restricted")
PRINCIPALS = [HR, GUEST, BOARD_MEMBER, CLEARED_ENGINEER]


def make_store(docs: Sequence[Document] = DOCS) -> KnowledgeStore:
    store = KnowledgeStore.open(":memory:")
    store.ingest(docs, WholeDocumentChunker())
    return store


def bm25_for(store: KnowledgeStore) -> BM25Retriever:
    return BM25Retriever().index(store.chunks(), store.acls(), store.titles())


class LeakyRetriever(Retriever):
    """Ignores the principal entirely (a broken or stale index): the post-filter must catch everything."""

    name = "leaky"

    def __init__(self, store: KnowledgeStore) -> None:
        self.chunks = store.chunks()
        self.titles = store.titles()

    def index(self, chunks, acls=None, titles=None, show_progress=False):
        return self

    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> list[Hit]:
        q = set(tokenize(query, stopwords=True))
        scored = [(len(q & set(tokenize(c.text, stopwords=True))) + 1.0, c) for c in self.chunks]
        scored.sort(key=lambda x: -x[0])
        return [Hit(c.chunk_id, c.doc_id, s, i, c.text, self.titles[c.doc_id], c.start, c.end)
                for i, (s, c) in enumerate(scored[:k])]


class FixedModel(ChatModel):
    """Replies with a fixed text (or raises a given error)."""

    model_id = "fixed"

    def __init__(self, reply: str = "", error: Exception | None = None) -> None:
        self.reply = reply
        self.error = error
        self.calls: list[list[Message]] = []

    def complete(self, messages: Sequence[Message]) -> Completion:
        self.calls.append(list(messages))
        if self.error is not None:
            raise self.error
        return Completion(self.reply, 10, 5, self.model_id)


class FixedOrder:
    """Returns the chunks of the documents in ``order`` (one chunk each), whatever the question and whoever asks
    (the post-filter removes forbidden ones)."""

    name = "fixed"

    def __init__(self, store, order):
        chunks = {c.doc_id: c for c in store.chunks()}
        titles = store.titles()
        self.hits = [Hit(chunks[d].chunk_id, d, 0.9 - i / 10, i, chunks[d].text, titles[d], chunks[d].start,
                         chunks[d].end) for i, d in enumerate(order)]

    def search(self, query, k=10, principal=None):
        return self.hits[:k]
