"""The knowledge hub: research entries persisted in the SQLite :class:`~ragbench.store.KnowledgeStore` (tables
``dal_entries`` and ``dal_entry_topics``, created through the store's ``ensure_schema`` extension point).

Entries are de-duplicated by URL and by content hash: saving a URL again merges its topics (and refreshes the
content when the page changed); a different URL with content already stored (a mirror) is merged into the
existing entry instead of being stored twice. Every save is one transaction. A later research session asks
:meth:`KnowledgeHub.page` before fetching, so it reuses what earlier sessions fetched.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable

from ..store import KnowledgeStore
from ..text import tokenize
from .confidence import parse_date
from .entries import KnowledgeEntry
from .fetch import FetchedPage
from .tiers import SourceTier

SCHEMA = """
CREATE TABLE IF NOT EXISTS dal_entries (
    entry_id TEXT PRIMARY KEY, url TEXT NOT NULL UNIQUE, content_hash TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL, published TEXT NOT NULL, tier INTEGER NOT NULL CHECK (tier IN (1, 2, 3)),
    credibility REAL NOT NULL, timeless INTEGER NOT NULL, content TEXT NOT NULL, summary TEXT NOT NULL,
    entities TEXT NOT NULL, data_type TEXT NOT NULL, confidence REAL NOT NULL, query_origin TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dal_entry_topics (
    entry_id TEXT NOT NULL REFERENCES dal_entries(entry_id) ON DELETE CASCADE, topic TEXT NOT NULL,
    PRIMARY KEY (entry_id, topic));
CREATE INDEX IF NOT EXISTS dal_entry_topics_by_topic ON dal_entry_topics(topic);
"""
_COLUMNS = ("entry_id, url, content_hash, title, published, tier, credibility, timeless, content, summary, "
            "entities, data_type, confidence, query_origin, created_at, updated_at")


@dataclass(frozen=True)
class HubSaveReport:
    added: int
    updated: int
    merged: int
    duplicates: int


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class KnowledgeHub:
    """Research memory across sessions on top of a :class:`KnowledgeStore`."""

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store
        self._ready = False

    def _schema(self) -> None:
        if not self._ready:
            self.store.ensure_schema("dal_hub", SCHEMA, version=1)
            self._ready = True

    # ------------------------------------------------------------------------------------------ writes
    def save(self, entries: Iterable[KnowledgeEntry]) -> HubSaveReport:
        """Insert or merge ``entries`` in ONE transaction (all or nothing)."""
        self._schema()
        counts = {"added": 0, "updated": 0, "merged": 0, "duplicates": 0}
        now = _now()
        with self.store.transaction() as conn:
            for e in entries:
                by_url = conn.execute("SELECT entry_id, content_hash FROM dal_entries WHERE url = ?",
                                      (e.source_url,)).fetchone()
                by_hash = conn.execute("SELECT entry_id, url FROM dal_entries WHERE content_hash = ?",
                                       (e.content_hash,)).fetchone()
                if by_hash is not None and (by_url is None or by_hash["url"] != e.source_url):
                    target, kind = by_hash["entry_id"], "duplicates"  # same content at another URL: a mirror
                elif by_url is not None and by_url["content_hash"] == e.content_hash:
                    target, kind = by_url["entry_id"], "merged"
                elif by_url is not None:
                    target, kind = by_url["entry_id"], "updated"
                    conn.execute("UPDATE dal_entries SET content_hash = ?, title = ?, published = ?, content = ?, "
                                 "summary = ?, entities = ?, data_type = ?, updated_at = ? WHERE entry_id = ?",
                                 (e.content_hash, e.source_title, e.source_published_date, e.content, e.summary,
                                  json.dumps(e.entities), e.data_type, now, target))
                else:
                    target, kind = e.entry_id, "added"
                    conn.execute(f"INSERT INTO dal_entries({_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                                 (e.entry_id, e.source_url, e.content_hash, e.source_title, e.source_published_date,
                                  int(e.source_tier), e.credibility_score, int(e.timeless), e.content, e.summary,
                                  json.dumps(e.entities), e.data_type, e.confidence, e.query_origin, now, now))
                conn.execute("UPDATE dal_entries SET confidence = MAX(confidence, ?) WHERE entry_id = ?",
                             (e.confidence, target))
                conn.executemany("INSERT OR IGNORE INTO dal_entry_topics(entry_id, topic) VALUES (?, ?)",
                                 [(target, t) for t in e.topics])
                counts[kind] += 1
        return HubSaveReport(**counts)

    # ------------------------------------------------------------------------------------------ reads
    def _rows(self, where: str = "", params: tuple = ()) -> list[KnowledgeEntry]:
        self._schema()
        rows = self.store.query(f"SELECT {_COLUMNS} FROM dal_entries {where}", params)
        topics: dict[str, list[str]] = {}
        for r in self.store.query("SELECT entry_id, topic FROM dal_entry_topics ORDER BY topic"):
            topics.setdefault(r["entry_id"], []).append(r["topic"])
        return [KnowledgeEntry(entry_id=r["entry_id"], query_origin=r["query_origin"], content=r["content"],
                               summary=r["summary"], source_url=r["url"], source_title=r["title"],
                               source_published_date=r["published"], source_tier=SourceTier(r["tier"]),
                               content_hash=r["content_hash"], timeless=bool(r["timeless"]),
                               topics=topics.get(r["entry_id"], []), entities=json.loads(r["entities"]),
                               data_type=r["data_type"], confidence=r["confidence"]) for r in rows]

    def __len__(self) -> int:
        self._schema()
        return int(self.store.query("SELECT COUNT(*) FROM dal_entries")[0][0])

    def entries(self) -> list[KnowledgeEntry]:
        return self._rows("ORDER BY created_at, url")

    def get(self, url: str) -> KnowledgeEntry | None:
        found = self._rows("WHERE url = ?", (url,))
        return found[0] if found else None

    def page(self, url: str) -> FetchedPage | None:
        """The stored page of ``url`` (what a fetch would return), or ``None``."""
        e = self.get(url)
        if e is None:
            return None
        return FetchedPage(url=e.source_url, title=e.source_title, text=e.content,
                           published=parse_date(e.source_published_date or None), content_hash=e.content_hash)

    def by_topic(self, topic: str) -> list[KnowledgeEntry]:
        """Entries tagged with a topic containing ``topic`` (case-insensitive), best confidence first."""
        return self._rows("WHERE entry_id IN (SELECT entry_id FROM dal_entry_topics WHERE topic LIKE ?) "
                          "ORDER BY confidence DESC, url", (f"%{topic}%",))

    def search(self, text: str, k: int = 10) -> list[tuple[KnowledgeEntry, float]]:
        """Entries ranked by the share of the query's words found in title + content (ties: confidence, URL)."""
        words = set(tokenize(text, stopwords=True))
        if not words:
            return []
        scored = []
        for e in self.entries():
            share = len(words & set(tokenize(e.source_title + " " + e.content))) / len(words)
            if share > 0:
                scored.append((e, share))
        scored.sort(key=lambda es: (-es[1], -es[0].confidence, es[0].source_url))
        return scored[:k]
