"""The research hub searched by the retrievers (``POST /search/query``), kept up to date as entries arrive.

Every entry is one chunk (title, summary and the start of its content). New entries are appended to the BM25 and
dense halves of a hybrid retriever (only they are tokenised and embedded); an entry whose content changed or that
left the hub triggers a rebuild from cached vectors, so nothing is embedded twice. The hub is polled at most every
``serve.hub_refresh_seconds`` (one ``COUNT``/``MAX`` query), so entries written by another process — a
``ragbench research --store H`` run, another worker — appear within that delay; a research job of this process
refreshes at once. Hub entries are public web research: they carry no ACL and every authenticated caller may search
them.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import RagbenchConfig
from ..dal.entries import KnowledgeEntry
from ..dal.hub import KnowledgeHub
from ..llm.quarantine import redact_text
from ..retrieval.retriever import make_retriever
from ..schema import Chunk

INDEXED_CONTENT_CHARS = 2000


@dataclass(frozen=True)
class HubResult:
    entry_id: str
    topic: str
    topics: tuple[str, ...]
    text: str
    url: str
    title: str
    tier: int
    credibility: float
    confidence: float
    retrieved_at: str
    score: float
    quarantined: bool = False  # a paragraph of ``text`` addressed to an AI (or a fake marker) was redacted

    def to_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "topic": self.topic, "topics": list(self.topics), "text": self.text,
                "url": self.url, "title": self.title, "tier": self.tier, "credibility": self.credibility,
                "confidence": self.confidence, "retrieved_at": self.retrieved_at, "score": round(self.score, 6),
                "quarantined": self.quarantined}


def entry_text(e: KnowledgeEntry) -> str:
    return "\n".join(x for x in (e.source_title, e.summary, e.content[:INDEXED_CONTENT_CHARS]) if x)


class HubIndex:
    """Hybrid (BM25 + dense) search over a :class:`KnowledgeHub`; thread-safe."""

    def __init__(self, hub: KnowledgeHub, embedder: Any, cfg: RagbenchConfig, refresh_seconds: float = 2.0) -> None:
        self.hub = hub
        self.embedder = embedder
        self.cfg = cfg
        self.refresh_seconds = refresh_seconds
        self._lock = threading.RLock()
        self._retriever: Any = None
        self._hashes: dict[str, str] = {}  # entry id → content hash, as indexed
        self._entries: dict[str, KnowledgeEntry] = {}
        self._retrieved_at: dict[str, str] = {}
        self._vectors: dict[str, np.ndarray] = {}  # content hash → vector
        self._signature: tuple[Any, ...] | None = None
        self._checked = float("-inf")
        self.rebuilds = 0
        self.appended = 0
        self.last_refresh: str | None = None

    @property
    def retrievers(self) -> list[str]:
        return ["bm25", "dense"] if self.embedder is not None else ["bm25"]

    def __len__(self) -> int:
        return len(self._hashes)

    def _new_retriever(self) -> Any:
        return make_retriever("hybrid" if self.embedder is not None else "bm25", self.cfg, self.embedder)

    def _hub_signature(self) -> tuple[Any, ...]:
        self.hub._schema()
        row = self.hub.store.query("SELECT COUNT(*), MAX(updated_at), MAX(created_at) FROM dal_entries")[0]
        return tuple(row)

    def refresh(self, force: bool = False) -> int:
        """Index what changed in the hub since the last look; returns how many entries were (re)indexed."""
        now = time.monotonic()
        with self._lock:
            if not force and now - self._checked < self.refresh_seconds:
                return 0
            self._checked = now
            signature = self._hub_signature()
            if signature == self._signature and self._retriever is not None:
                return 0
            entries = {e.entry_id: e for e in self.hub.entries()}
            stamps = {r[0]: r[1] for r in self.hub.store.query("SELECT entry_id, updated_at FROM dal_entries")}
            changed = [i for i, e in entries.items() if i in self._hashes and self._hashes[i] != e.content_hash]
            removed = [i for i in self._hashes if i not in entries]
            new = [e for i, e in entries.items() if i not in self._hashes]
            self._embed([e for e in entries.values() if e.content_hash not in self._vectors])
            if self._retriever is None or changed or removed:
                retriever = self._new_retriever()
                self._index(retriever, list(entries.values()), add=False)
                self._retriever = retriever
                self.rebuilds += 1
                count = len(entries)
            else:
                self._index(self._retriever, new, add=True)
                self.appended += len(new)
                count = len(new)
            self._hashes = {i: e.content_hash for i, e in entries.items()}
            self._entries = entries
            self._retrieved_at = stamps
            self._signature = signature
            self.last_refresh = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            # The hybrid's re-rank token cache is keyed by entry id; drop it so changed text is re-read.
            if hasattr(self._retriever, "_token_sets"):
                self._retriever._token_sets = {}
            return count

    def _embed(self, entries: list[KnowledgeEntry]) -> None:
        if self.embedder is None or not entries:
            return
        vecs = np.asarray(self.embedder.embed([entry_text(e) for e in entries]), dtype=np.float32)
        for e, v in zip(entries, vecs, strict=True):
            self._vectors[e.content_hash] = v

    def _index(self, retriever: Any, entries: list[KnowledgeEntry], add: bool) -> None:
        chunks = [Chunk(e.entry_id, e.entry_id, 0, 0, len(entry_text(e)), entry_text(e)) for e in entries]
        titles = {e.entry_id: e.source_title for e in entries}
        if self.embedder is None:
            (retriever.add if add else retriever.index)(chunks, None, titles)
            return
        vectors = (np.stack([self._vectors[e.content_hash] for e in entries]) if entries
                   else np.zeros((0, int(self.embedder.dim)), dtype=np.float32))
        if add:
            if chunks:
                retriever.keyword.add(chunks, None, titles)
                retriever.dense.add(chunks, None, titles, vectors=vectors)
        else:
            retriever.index(chunks, None, titles, vectors=vectors)

    def search(self, query: str, k: int = 10, min_tier: int | None = None,
               min_credibility: float | None = None) -> list[HubResult]:
        """The best ``k`` entries for ``query`` with tier ≤ ``min_tier`` (1 is the most credible tier) and
        credibility ≥ ``min_credibility``."""
        self.refresh()
        with self._lock:
            if self._retriever is None or not self._hashes or not query.strip():
                return []

            def keep(e: KnowledgeEntry) -> bool:
                return ((min_tier is None or int(e.source_tier) <= min_tier)
                        and (min_credibility is None or e.credibility_score >= min_credibility))

            eligible = sum(1 for e in self._entries.values() if keep(e))
            depth = min(len(self._hashes), max(4 * k, 50))
            while True:
                hits = self._retriever.search(query, k=depth, principal=None)
                kept = [h for h in hits if keep(self._entries[h.doc_id])]
                if len(kept) >= min(k, eligible) or depth >= len(self._hashes):
                    break
                depth = min(len(self._hashes), depth * 4)
            return [self._result(self._entries[h.doc_id], h.score) for h in kept[:k]]

    def _result(self, e: KnowledgeEntry, score: float) -> HubResult:
        raw = e.summary or e.content[:500]
        # Web text goes to agents: the quarantine's flagged paragraphs are redacted (no ACL: any claim is flagged).
        text = redact_text(raw)
        return HubResult(entry_id=e.entry_id, topic=e.topics[0] if e.topics else "", topics=tuple(e.topics),
                         text=text, url=e.source_url, title=e.source_title,
                         tier=int(e.source_tier), credibility=float(e.credibility_score),
                         confidence=float(e.confidence), retrieved_at=self._retrieved_at.get(e.entry_id, ""),
                         score=float(score), quarantined=text != raw)
