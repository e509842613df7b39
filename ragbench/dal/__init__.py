"""RAG-DAL: multi-pass web research with credibility tiers and measured confidence, a knowledge hub in the
SQLite store, and an incremental ingestion pipeline (watch → fetch → transform → chunk → embed → index).

Names are imported on first access so ``import ragbench.dal`` stays light."""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "SourceTier": "tiers", "TierPolicy": "tiers", "classify_tier": "tiers", "host_of": "tiers",
    "compute_confidence": "confidence", "ConfidenceBreakdown": "confidence", "recency_of": "confidence",
    "ConsistencyMeter": "consistency", "key_facts": "consistency", "contradiction_reason": "consistency",
    "SubTopic": "decompose", "decompose": "decompose",
    "KnowledgeEntry": "entries", "CoverageReport": "entries", "SourceError": "entries",
    "SearchBackend": "search", "SearchResult": "search", "DuckDuckGoBackend": "search",
    "SearchLayoutError": "search", "PageFetcher": "fetch", "FetchedPage": "fetch", "PoliteClient": "http",
    "UrlRewrite": "http", "Researcher": "research", "ResearchResult": "research",
    "grounded_prompt": "prompt", "answer": "prompt", "KnowledgeHub": "hub",
    "IngestionPipeline": "pipeline", "PipelineReport": "pipeline", "FolderWatcher": "watchers",
    "FeedWatcher": "watchers", "UrlWatcher": "watchers", "TestWeb": "testweb", "build_researcher": "session",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'ragbench.dal' has no attribute {name!r}")
