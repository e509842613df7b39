"""The SQLite knowledge store: documents (versions, ACLs, metadata), chunks (spans, summaries) and embeddings.

One file holds everything; other subsystems add their own tables through :meth:`KnowledgeStore.ensure_schema`
and write through :meth:`KnowledgeStore.transaction`. The file is marked as ours (``PRAGMA application_id`` and
``user_version``) and a foreign file is refused before SQLite opens it (:mod:`~ragbench.store.sqlite_file`);
persistence is :mod:`~ragbench.store.core`, ingest planning :mod:`~ragbench.store.ingest`, text and markdown files
as documents :mod:`~ragbench.store.files`.
"""
from __future__ import annotations

from ..text import read_text_file
from .core import StoredDocument, StoreCore
from .ingest import IngestReport, KnowledgeStore
from .sqlite_file import APPLICATION_ID, SCHEMA_VERSION

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "IngestReport", "KnowledgeStore", "StoreCore", "StoredDocument",
           "read_text_file"]
