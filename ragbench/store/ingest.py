"""Ingest planning: which documents are new, changed, re-chunked or unchanged, what must be chunked, summarised and
embedded, and the per-document write. Ingest is idempotent by content hash (SHA-256 of the whitespace-normalised
text); each document is written in its own transaction, so an interrupted ingest keeps every finished document
whole and a rerun completes it.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..errors import DataError
from ..schema import Acl, Chunk, Document
from ..stages import Chunker, Embedder
from ..text import content_hash
from .core import StoreCore
from .sqlite_file import utc_now, in_batches, qmarks

@dataclass(frozen=True)
class IngestReport:
    """Counts of one ingest call; ``errors`` lists skipped documents (``on_error="skip"``)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    errors: list[str] = field(default_factory=list)


class KnowledgeStore(StoreCore):
    """The knowledge store: :class:`~ragbench.store.core.StoreCore` persistence plus idempotent ingest."""

    def ingest(self, documents: Iterable[Document], chunker: Chunker, embedder: Embedder | None = None,
               summarizer: Callable[[Chunk], str] | None = None, show_progress: bool = False,
               on_error: str = "raise", batch_chunks: int = 64, prune: bool = False) -> IngestReport:
        """Add new documents, re-version changed ones, skip unchanged ones (same content hash and chunker).

        Every document is validated first (duplicate ids, blank or non-str text, non-JSON metadata → DataError
        before anything is written; with ``on_error="skip"`` blank documents are skipped and listed in
        ``errors`` instead). Documents are then chunked, summarised and embedded in groups of about
        ``batch_chunks`` chunks, and each document is written in its own transaction. A changed document gets
        ``version + 1``; its chunks replace the old ones (a chunk whose id survives keeps its embeddings and
        summary). Unchanged documents only get missing summaries / embeddings filled in. With ``prune=True``
        stored documents absent from ``documents`` are deleted afterwards (counted in ``deleted``), so the
        store mirrors a source folder.
        """
        from tqdm.auto import tqdm

        if isinstance(batch_chunks, bool) or not isinstance(batch_chunks, int) or batch_chunks < 1:
            raise DataError(f"batch_chunks must be a positive integer, found {batch_chunks!r}.")
        docs, errors, seen = _validate_documents(documents, on_error)
        chunker_sig = chunker.param_signature()  # from get_params(): the chunker and its settings
        counts = {"added": 0, "updated": 0, "unchanged": 0, "chunks": 0}
        bar = tqdm(total=len(docs), disable=not show_progress, desc="ingest", unit="doc")
        group: list[_Plan] = []
        pending = 0
        for doc in docs:
            plan = self._plan(doc, chunker, chunker_sig, embedder, summarizer, on_error, errors)
            if plan is None:
                bar.update(1)
                continue
            group.append(plan)
            # Without an embedder, group by chunk count too, so that writes (and kept progress) start early.
            pending += len(plan.to_embed) if embedder is not None else max(1, len(plan.chunks))
            if pending >= batch_chunks:
                self._finish_group(group, embedder, summarizer, counts)
                bar.update(len(group))
                group, pending = [], 0
        if group:
            self._finish_group(group, embedder, summarizer, counts)
            bar.update(len(group))
        bar.close()
        deleted = 0
        if prune:
            gone = [d for d in self.doc_ids() if d not in seen]
            with self.transaction() as conn:
                for batch in in_batches(gone):
                    deleted += conn.execute(f"DELETE FROM documents WHERE doc_id IN ({qmarks(len(batch))})",
                                            tuple(batch)).rowcount
        return IngestReport(counts["added"], counts["updated"], counts["unchanged"], deleted, counts["chunks"],
                            errors)

    def _plan(self, doc: Document, chunker: Chunker, chunker_sig: str, embedder: Embedder | None,
              summarizer: Callable[[Chunk], str] | None, on_error: str, errors: list[str]) -> "_Plan | None":
        sha = content_hash(doc.text)
        rows = self.query("SELECT sha256, version, chunker, title, source, acl, metadata FROM documents "
                          "WHERE doc_id = ?", (doc.doc_id,))
        old = rows[0] if rows else None
        acl_json = json.dumps(doc.acl.to_json(), sort_keys=True)
        meta_json = json.dumps(dict(doc.metadata), sort_keys=True, ensure_ascii=False)
        fields_same = old is not None and (old["title"], old["source"], old["acl"], old["metadata"]) == (
            doc.title, doc.source, acl_json, meta_json)
        if old is not None and old["sha256"] == sha and old["chunker"] == chunker_sig:
            kind = "unchanged" if fields_same else "fields"
            # Stored chunks matter only when summaries or embeddings may be missing.
            chunks = self.chunks([doc.doc_id]) if embedder is not None or summarizer is not None else []
        else:
            kind = "add" if old is None else ("update" if old["sha256"] != sha else "rechunk")
            try:
                chunks = chunker.chunk(doc)
            except DataError as exc:
                if on_error != "skip":
                    raise
                errors.append(str(exc))
                return None
            _check_chunks(doc, chunks)
        plan = _Plan(doc, kind, sha, (old["version"] if old is not None else 0), acl_json, meta_json, chunks,
                     chunker_sig)
        have_summary: dict[str, str] = {}
        have_vector: set[str] = set()
        if old is not None:
            ids = [c.chunk_id for c in chunks]
            for batch in in_batches(ids):
                have_summary.update((r[0], r[1]) for r in self.query(
                    f"SELECT chunk_id, summary FROM chunks WHERE chunk_id IN ({qmarks(len(batch))})", batch))
                if embedder is not None:
                    have_vector.update(r[0] for r in self.query(
                        f"SELECT chunk_id FROM embeddings WHERE model_id = ? AND chunk_id IN "
                        f"({qmarks(len(batch))})", (embedder.model_id, *batch)))
        plan.summaries = {cid: s for cid, s in have_summary.items() if s}
        if embedder is not None:
            plan.to_embed = [c for c in chunks if c.chunk_id not in have_vector]
        if summarizer is not None:
            plan.to_summarize = [c for c in chunks if c.chunk_id not in plan.summaries]
        return plan

    def _finish_group(self, group: list["_Plan"], embedder: Embedder | None,
                      summarizer: Callable[[Chunk], str] | None, counts: dict[str, int]) -> None:
        """Embed and summarise a group's chunks (no write yet), then write each document in its own transaction."""
        vectors: dict[str, np.ndarray] = {}
        if embedder is not None:
            todo = [c for p in group for c in p.to_embed]
            if todo:
                arr = embedder.embed([c.text for c in todo])
                arr = self._check_vectors(embedder.model_id, [c.chunk_id for c in todo], arr)
                vectors = {c.chunk_id: arr[i] for i, c in enumerate(todo)}
        sha = embedder.sha256 if embedder is not None and vectors else None
        for plan in group:
            if summarizer is not None:
                for c in plan.to_summarize:
                    summary = summarizer(c)
                    if not isinstance(summary, str):
                        raise DataError(f"summarizer returned {type(summary).__name__} for chunk {c.chunk_id!r}; "
                                        "expected str.")
                    plan.summaries[c.chunk_id] = summary
            self._write_plan(plan, embedder, vectors, sha)
            counts[{"add": "added", "update": "updated", "rechunk": "updated", "fields": "updated"}.get(
                plan.kind, "unchanged")] += 1
            if plan.kind != "unchanged" and plan.kind != "fields":
                counts["chunks"] += len(plan.chunks)

    def _write_plan(self, plan: "_Plan", embedder: Embedder | None, vectors: Mapping[str, np.ndarray],
                    sha: str | None) -> None:
        doc, now = plan.doc, utc_now()
        if plan.kind == "unchanged" and not plan.to_embed and not plan.to_summarize:
            return  # nothing to write: an unchanged document is not touched
        with self.transaction() as conn:
            _recheck(conn, plan)
            if plan.kind == "add":
                conn.execute("INSERT INTO documents(doc_id, title, source, sha256, version, acl, metadata, text, "
                             "chunker, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)",
                             (doc.doc_id, doc.title, doc.source, plan.sha, plan.acl_json, plan.meta_json, doc.text,
                              plan.chunker_sig, now, now))
            elif plan.kind != "unchanged":
                version = plan.old_version + (1 if plan.kind == "update" else 0)
                conn.execute("UPDATE documents SET title = ?, source = ?, sha256 = ?, version = ?, acl = ?, "
                             "metadata = ?, text = CASE WHEN ? THEN ? ELSE text END, chunker = ?, updated_at = ? "
                             "WHERE doc_id = ?",
                             (doc.title, doc.source, plan.sha, version, plan.acl_json, plan.meta_json,
                              plan.kind in ("update", "rechunk"), doc.text, plan.chunker_sig, now, doc.doc_id))
            if plan.kind in ("update", "rechunk"):
                keep = [c.chunk_id for c in plan.chunks]
                conn.execute("CREATE TEMP TABLE IF NOT EXISTS _keep (chunk_id TEXT PRIMARY KEY)")
                conn.execute("DELETE FROM _keep")
                conn.executemany("INSERT OR IGNORE INTO _keep VALUES (?)", [(k,) for k in keep])
                conn.execute("DELETE FROM chunks WHERE doc_id = ? AND chunk_id NOT IN (SELECT chunk_id FROM _keep)",
                             (doc.doc_id,))
                conn.execute("DELETE FROM _keep")
            if plan.kind in ("add", "update", "rechunk"):
                # Surviving ids (same seq and text) keep their row, summary and embeddings; spans may move.
                conn.executemany(
                    'INSERT INTO chunks(chunk_id, doc_id, seq, start, "end", text, summary) '
                    'VALUES (?, ?, ?, ?, ?, ?, ?) '
                    'ON CONFLICT(chunk_id) DO UPDATE SET start = excluded.start, "end" = excluded."end"',
                    [(c.chunk_id, c.doc_id, c.seq, c.start, c.end, c.text, plan.summaries.get(c.chunk_id, c.summary))
                     for c in plan.chunks])
            if plan.to_summarize:
                conn.executemany("UPDATE chunks SET summary = ? WHERE chunk_id = ?",
                                 [(plan.summaries[c.chunk_id], c.chunk_id) for c in plan.to_summarize])
            if embedder is not None and plan.to_embed:
                ids = [c.chunk_id for c in plan.to_embed]
                self._write_vectors(conn, embedder.model_id, ids, np.stack([vectors[i] for i in ids]), sha)


def _recheck(conn: sqlite3.Connection, plan: "_Plan") -> None:
    """Re-read the document under the write lock and adjust the plan's kind and base version to what another
    writer (a second ``ragbench index`` or ``dal watch`` on the same store) committed since it was planned, so a
    concurrent run updates instead of failing on the unique document id or writing a stale version."""
    row = conn.execute("SELECT sha256, version, chunker FROM documents WHERE doc_id = ?",
                       (plan.doc.doc_id,)).fetchone()
    if row is None:
        if plan.kind != "add":  # deleted meanwhile: write it afresh
            plan.kind, plan.old_version = "add", 0
        return
    if plan.kind != "add" and row[1] == plan.old_version:
        return  # nobody wrote it since it was planned
    plan.old_version = int(row[1])
    if (row[0], row[2]) == (plan.sha, plan.chunker_sig):
        plan.kind = "fields"  # same content already written by the other run: only fields, summaries, vectors
    else:
        plan.kind = "update" if row[0] != plan.sha else "rechunk"


@dataclass
class _Plan:
    """What ingest will write for one document (``kind``: add | update | rechunk | fields | unchanged)."""

    doc: Document
    kind: str
    sha: str
    old_version: int
    acl_json: str
    meta_json: str
    chunks: list[Chunk]
    chunker_sig: str = ""
    summaries: dict[str, str] = field(default_factory=dict)
    to_embed: list[Chunk] = field(default_factory=list)
    to_summarize: list[Chunk] = field(default_factory=list)


def _validate_documents(documents: Iterable[Document], on_error: str
                        ) -> tuple[list[Document], list[str], set[str]]:
    """Check the whole input before any write: types, ids, duplicates, text, JSON metadata."""
    if on_error not in ("raise", "skip"):
        raise DataError(f"on_error must be 'raise' or 'skip', found {on_error!r}.")
    docs: list[Document] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, doc in enumerate(documents):
        if not isinstance(doc, Document):
            raise DataError(f"item {i} of the ingest input is a {type(doc).__name__}, expected a Document; "
                            "nothing was written. Fix: wrap it in ragbench.Document(doc_id, text, …).")
        if not isinstance(doc.doc_id, str) or not doc.doc_id.strip():
            raise DataError(f"item {i} has an empty or non-string doc_id {doc.doc_id!r}; nothing was written. "
                            "Fix: give every document a unique id.")
        if doc.doc_id in seen:
            raise DataError(f"duplicate doc id {doc.doc_id!r} in one ingest call; nothing was written. "
                            "Fix: de-duplicate the input (ids must be unique).")
        seen.add(doc.doc_id)
        if not isinstance(doc.text, str):
            raise DataError(f"document {doc.doc_id!r}: text must be str, found {type(doc.text).__name__}; nothing "
                            "was written. Fix: decode it first (ragbench.store.read_text_file).")
        for name in ("title", "source"):
            if not isinstance(getattr(doc, name), str):
                raise DataError(f"document {doc.doc_id!r}: {name} must be str; nothing was written.")
        if not isinstance(doc.acl, Acl):
            raise DataError(f"document {doc.doc_id!r}: acl must be an Acl; nothing was written. Fix: Acl.make(…).")
        try:
            json.dumps(dict(doc.metadata), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DataError(f"document {doc.doc_id!r}: metadata is not JSON-serialisable ({exc}); nothing was "
                            "written. Fix: keep metadata to str/number/bool/list/dict values.") from None
        if not doc.text.strip():
            msg = f"document {doc.doc_id!r} is empty or whitespace-only"
            if on_error == "skip":
                errors.append(msg + "; skipped")
                continue
            raise DataError(msg + "; nothing was written. Fix: drop it, or pass on_error='skip'.")
        docs.append(doc)
    return docs, errors, seen


def _check_chunks(doc: Document, chunks: Sequence[Chunk]) -> None:
    """A chunker's output must point into the document with unique ids and seqs 0..n-1."""
    if not chunks:
        raise DataError(f"the chunker returned no chunks for document {doc.doc_id!r}. Fix: check the chunker.")
    ids: set[str] = set()
    for i, c in enumerate(chunks):
        if c.doc_id != doc.doc_id or c.seq != i or c.chunk_id in ids or not 0 <= c.start <= c.end <= len(doc.text):
            raise DataError(f"the chunker returned an invalid chunk {c!r} for document {doc.doc_id!r} (expected "
                            f"doc_id {doc.doc_id!r}, seq {i}, a unique id and a span inside 0..{len(doc.text)}). "
                            "Fix: correct the chunker.")
        ids.add(c.chunk_id)

