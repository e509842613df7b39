from __future__ import annotations

from typing import Sequence

import pytest

from ragbench.llm.base import ChatModel, Completion
from ragbench.retrieval.chunking import WholeDocumentChunker
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.retrieval.retriever import retriever_from_store
from ragbench.schema import Document, Message
from ragbench.store import KnowledgeStore

DOCS = [
    Document("git-rebase", "Rebase a feature branch with git fetch origin and git rebase origin/main.", "Git rebase"),
    Document("docker-volumes", "Named volumes are managed by Docker; bind mounts map a host folder.", "Volumes"),
    Document("sql-index", "An index on the filtered column turns a table scan into a seek.", "SQL indexes"),
    Document("py-async", "Define coroutines with async def and wait on them with await inside asyncio.run.", "Async"),
]


class ScriptedModel(ChatModel):
    """Replies from a script (one reply per call, last one repeated) and records every prompt."""

    model_id = "scripted"

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[Message]] = []

    def complete(self, messages: Sequence[Message]) -> Completion:
        self.prompts.append(list(messages))
        reply = self.replies[min(len(self.prompts) - 1, len(self.replies) - 1)]
        return Completion(reply, 10, 2, self.model_id)


@pytest.fixture()
def kb():
    """A store with four one-chunk documents, HashingEmbedder vectors and summaries, plus a BM25 retriever."""
    embedder = HashingEmbedder(64)
    store = KnowledgeStore.open(":memory:")
    store.ingest(DOCS, WholeDocumentChunker(), embedder, summarizer=lambda c: "summary of " + c.doc_id)
    retriever = retriever_from_store(store, "bm25")
    yield store, retriever, embedder
    store.close()
