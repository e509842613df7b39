"""The DAL ingestion pipeline (seed §10): watch → fetch → transform → chunk → embed → index, incrementally.

* **Watch/fetch**: :mod:`ragbench.dal.watchers` list what each source holds now.
* **Delta**: an item whose raw hash equals the one in the state table (``dal_pipeline_state``) is skipped
  before any work; only new and changed items are transformed, chunked and embedded.
* **Transform**: strict UTF-8 decoding (a non-UTF-8 file is a source error, its indexed version stays), Unicode
  NFC, newline and blank-line clean-up, HTML stripped, a markdown file's YAML front matter kept as metadata (its
  ``title`` and ``acl`` are the document's, as in ``ragbench index``), title and content kind extracted; an item
  whose cleaned text is already indexed under another source is a duplicate and is not indexed twice.
* **Chunk/embed/index**: ``KnowledgeStore.ingest`` with a chunker per content kind (prose, code, chat).
* **Quarantine**: every document written is scanned by the prompt-injection quarantine after its batch, so the
  flags are in the store before the first question (web pages are where injected instructions come from).
* **Atomic and resumable**: each batch — its documents, chunks, embeddings and state rows — is written in ONE
  store transaction, so a crash loses at most the batch in flight, and a rerun redoes exactly that batch, with no
  duplicates. Items missing from a complete scan of a folder or URL list leave the index.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Sequence

from bs4 import BeautifulSoup
from tqdm.auto import tqdm

from ..errors import DataError
from ..llm.injection_model import suspects
from ..llm.quarantine import Quarantine
from ..retrieval.base import Embedder
from ..schema import PUBLIC_ACL, Document
from ..store import KnowledgeStore
from ..store.files import front_matter_acl, front_matter_title, split_front_matter
from ..text import content_hash, decode_utf8
from .chunkers import chunker_for, content_kind
from .entries import SourceError
from .watchers import RawSource, Watcher

log = logging.getLogger("ragbench.dal.pipeline")

SCHEMA = """
CREATE TABLE IF NOT EXISTS dal_pipeline_state (
    source_id TEXT PRIMARY KEY, watcher TEXT NOT NULL, raw_hash TEXT NOT NULL, content_hash TEXT NOT NULL,
    doc_id TEXT, kind TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS dal_pipeline_state_by_watcher ON dal_pipeline_state(watcher);
CREATE INDEX IF NOT EXISTS dal_pipeline_state_by_hash ON dal_pipeline_state(content_hash);
-- version 2 (session 30): markdown front matter became metadata and its acl the document's; markdown items
-- indexed before are transformed again on the next run instead of keeping their front matter as public text.
UPDATE dal_pipeline_state SET raw_hash = ''
    WHERE lower(source_id) LIKE '%.md' OR lower(source_id) LIKE '%.markdown';
"""
SCHEMA_VERSION = 2
_HTML_EXT = frozenset({".html", ".htm", ".xhtml"})


@dataclass(frozen=True)
class PipelineReport:
    added: int
    updated: int
    unchanged: int
    deleted: int
    duplicates: int
    chunks: int
    reprocessed: tuple[str, ...]
    deleted_ids: tuple[str, ...]
    errors: tuple[SourceError, ...]
    #: Documents written this run that hold a paragraph the prompt-injection quarantine flags (redacted before any
    #: model or agent sees it; :mod:`ragbench.llm.quarantine`).
    quarantined: tuple[str, ...] = ()
    #: Documents written this run holding a paragraph the learned detector suspects and the quarantine's rules pass
    #: (not redacted; :mod:`ragbench.llm.injection_model`, ``ragbench quarantine --suspects``).
    suspected: tuple[str, ...] = ()


def decode(item: RawSource) -> str:
    """Strict UTF-8 (a leading BOM dropped); a binary (NUL bytes) or non-UTF-8 item is a :class:`DataError` naming
    it, with the offset of the first bad byte (:func:`ragbench.text.decode_utf8`)."""
    if isinstance(item.data, str):
        return item.data
    return decode_utf8(item.data, item.locator)


def clean(text: str, html: bool = False) -> str:
    """NFC, ``\\n`` newlines, no trailing spaces, at most one blank line in a row; HTML reduced to its text."""
    if html:
        text = BeautifulSoup(text, "html.parser").get_text("\n")
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def title_of(item: RawSource, text: str) -> str:
    if item.title:
        return item.title
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:120]
    return item.name or item.source_id


def transform(item: RawSource) -> tuple[Document, str]:
    """The cleaned :class:`Document` of an item and its content kind; raises :class:`DataError`."""
    ext = PurePosixPath(item.name).suffix.lower()
    text = clean(decode(item), html=ext in _HTML_EXT)
    front: dict = {}
    if ext in (".md", ".markdown"):  # YAML front matter is metadata (and may declare the ACL), not text
        front, text = split_front_matter(text)
        text = text.strip()
    if not text:
        raise DataError(f"{item.locator} has no text after cleaning. Fix: nothing to index; remove it.")
    kind = content_kind(item.name, text)
    meta: dict = {k: v for k, v in item.metadata.items() if isinstance(v, (str, int, float, bool))}
    meta.update(kind=kind, content_hash=content_hash(text))
    title = title_of(item, text)
    if front:
        meta["front_matter"] = front
        title = (None if item.title else front_matter_title(front)) or title
    acl = front_matter_acl(front, item.locator) if front else None
    return Document(item.source_id, text, title, item.locator, acl=acl or PUBLIC_ACL, metadata=meta), kind


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class _Work:
    item: RawSource
    watcher: str
    doc: Document
    kind: str
    duplicate_of: str | None = None


@dataclass
class IngestionPipeline:
    """``run(watchers) -> PipelineReport``; ``embedder=None`` indexes chunks without vectors."""

    store: KnowledgeStore
    embedder: Embedder | None = None
    batch_size: int = 64
    show_progress: bool = False
    _ready: bool = field(default=False, init=False)

    def _schema(self) -> None:
        if not self._ready:
            self.store.ensure_schema("dal_pipeline", SCHEMA, version=SCHEMA_VERSION)
            self._ready = True

    def state(self) -> dict[str, dict]:
        """``source_id → {watcher, raw_hash, content_hash, doc_id, kind}``."""
        self._schema()
        rows = self.store.query("SELECT source_id, watcher, raw_hash, content_hash, doc_id, kind "
                                "FROM dal_pipeline_state")
        return {r["source_id"]: dict(r) for r in rows}

    def run(self, watchers: Sequence[Watcher]) -> PipelineReport:
        self._schema()
        state = self.state()
        errors: list[SourceError] = []
        scans: list[tuple[str, list[RawSource]]] = []
        seen: dict[str, set[str]] = {}
        complete: dict[str, bool] = {}
        for w in watchers:
            scan = w.scan()
            errors.extend(scan.errors)
            complete[w.name] = scan.complete and w.deletes_missing
            seen[w.name] = {i.source_id for i in scan.items}
            scans.append((w.name, scan.items))
        gone = self._gone(state, seen, complete)
        changed = {i.source_id for _, items in scans for i in items
                   if not i.metadata.get("skipped") and (state.get(i.source_id) or {}).get("raw_hash") != i.raw_hash}
        # A content hash stays owned by a source only while that source is indexed, unchanged and still present;
        # duplicates of a hash whose owner left or changed are re-planned, so the content is never lost.
        live_hashes = {s["content_hash"]: sid for sid, s in state.items()
                       if s["doc_id"] and sid not in gone and sid not in changed}
        work: list[_Work] = []
        unchanged = 0
        for watcher, items in scans:
            for item in items:
                if item.metadata.get("skipped"):
                    continue  # failed or oversized: keep whatever is indexed
                old = state.get(item.source_id)
                if item.source_id not in changed and old is not None and (
                        old["doc_id"] or live_hashes.get(old["content_hash"]) not in (None, item.source_id)):
                    unchanged += 1
                    continue
                try:
                    doc, kind = transform(item)
                except DataError as exc:
                    errors.append(SourceError(item.locator, "transform", type(exc).__name__, str(exc)))
                    continue
                h = doc.metadata["content_hash"]
                owner = live_hashes.get(h)
                dup = owner if owner is not None and owner != item.source_id else None
                if dup is None:
                    live_hashes[h] = item.source_id
                work.append(_Work(item, watcher, doc, kind, dup))
        totals = {"added": 0, "updated": 0, "chunks": 0, "duplicates": 0, "unchanged": 0}
        done_elsewhere: set[str] = set()
        bar = tqdm(total=len(work), disable=not self.show_progress, desc="dal ingest", unit="doc")
        for start in range(0, len(work), self.batch_size):
            batch = work[start:start + self.batch_size]
            self._write(batch, state, totals, done_elsewhere)
            bar.update(len(batch))
        bar.close()
        deleted = self._delete(state, gone)
        written = sorted({w.doc.doc_id for w in work
                          if w.duplicate_of is None and w.item.source_id not in done_elsewhere})
        written_ids = set(written)
        suspected = sorted({w.doc.doc_id for w in work
                            if w.doc.doc_id in written_ids and suspects(w.doc.text, w.doc.acl.classification)})
        report = PipelineReport(totals["added"], totals["updated"], unchanged + totals["unchanged"], len(deleted),
                                totals["duplicates"], totals["chunks"],
                                tuple(w.item.source_id for w in work if w.item.source_id not in done_elsewhere),
                                tuple(deleted), tuple(errors), self._quarantine(written), tuple(suspected))
        log.info("pipeline: %s", report)
        return report

    def _write(self, batch: list[_Work], state: dict[str, dict], totals: dict[str, int],
               done_elsewhere: set[str]) -> None:
        """One transaction: the batch's documents (grouped by chunker), stale copies of duplicates, state rows.

        Under the write lock, items that another run on the same store (a concurrent ``dal watch``) has already
        processed at this raw hash since this run read the state are skipped and counted unchanged, so each run's
        report counts only what it wrote."""
        now = _now()
        with self.store.transaction() as conn:
            ids = [w.item.source_id for w in batch]
            fresh = {r[0]: r[1] for r in conn.execute(
                f"SELECT source_id, raw_hash FROM dal_pipeline_state WHERE source_id IN ({','.join('?' * len(ids))})",
                ids)}
            done = {w.item.source_id for w in batch
                    if fresh.get(w.item.source_id) == w.item.raw_hash
                    and (state.get(w.item.source_id) or {}).get("raw_hash") != w.item.raw_hash}
            if done:
                done_elsewhere.update(done)
                totals["unchanged"] += len(done)
                batch = [w for w in batch if w.item.source_id not in done]
            for kind in ("prose", "code", "chat"):
                docs = [w.doc for w in batch if w.kind == kind and w.duplicate_of is None]
                if docs:
                    rep = self.store.ingest(docs, chunker_for(kind), self.embedder)
                    totals["added"] += rep.added
                    totals["updated"] += rep.updated
                    totals["chunks"] += rep.chunks
            for w in batch:
                sid = w.item.source_id
                if w.duplicate_of is not None:
                    totals["duplicates"] += 1
                    old = state.get(sid)
                    if old is not None and old["doc_id"]:
                        self.store.delete_document(old["doc_id"])
                conn.execute("INSERT OR REPLACE INTO dal_pipeline_state(source_id, watcher, raw_hash, content_hash, "
                             "doc_id, kind, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (sid, w.watcher, w.item.raw_hash, w.doc.metadata["content_hash"],
                              None if w.duplicate_of else w.doc.doc_id, w.kind, now))

    def _quarantine(self, doc_ids: list[str]) -> tuple[str, ...]:
        """Scan the documents just written; the ids of those with a flagged paragraph."""
        if not doc_ids:
            return ()
        return tuple(Quarantine(self.store).flagged(doc_ids))

    @staticmethod
    def _gone(state: dict[str, dict], seen: dict[str, set[str]], complete: dict[str, bool]) -> list[str]:
        """Sources of a complete scan that no longer hold the item (a failed scan deletes nothing)."""
        return sorted(sid for sid, s in state.items()
                      if complete.get(s["watcher"]) and sid not in seen.get(s["watcher"], set()))

    def _delete(self, state: dict[str, dict], gone: list[str]) -> list[str]:
        if gone:
            with self.store.transaction() as conn:
                for sid in gone:
                    if state[sid]["doc_id"]:
                        self.store.delete_document(state[sid]["doc_id"])
                    conn.execute("DELETE FROM dal_pipeline_state WHERE source_id = ?", (sid,))
        return gone
