"""Records of a research session, with the seed's schemas: ``KnowledgeEntry`` (one per source) and the
``CoverageReport`` (JSON and YAML), plus the per-pass log and the source errors the report shows."""
from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import yaml

from ..text import STOP_WORDS, split_sentences, tokenize
from .confidence import ConfidenceBreakdown
from .tiers import SourceTier

DATA_TYPES = ("factual", "opinion", "statistical", "procedural")
_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_OPINION = re.compile(r"\b(?:i think|i believe|in my opinion|imho|i feel|personally|i love|i hate)\b", re.I)
_PROCEDURE = re.compile(r"\b(?:step \d|first,|then,|install|configure|run the|click)\b", re.I)
_STAT = re.compile(r"\d+(?:\.\d+)?\s?%|\b\d+(?:\.\d+)?\s?(?:ms|kb|mb|gb|x)\b", re.I)


def entry_id_for(url: str) -> str:
    """Stable id of a source (uuid5 of its URL), so re-runs and the hub agree."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, url))


def summarize(text: str, terms: Sequence[str], max_sentences: int = 5) -> str:
    """Extractive 3–5 sentence distillation: the lead sentence plus the sentences sharing most ``terms``."""
    sentences = split_sentences(text)
    if len(sentences) <= 3:
        return " ".join(sentences)
    wanted = set(terms)
    ranked = sorted(range(1, len(sentences)),
                    key=lambda i: (-len(wanted & set(tokenize(sentences[i]))), i))[: max_sentences - 1]
    keep = sorted({0, *ranked})[:max_sentences]
    return " ".join(sentences[i] for i in keep)


def entities_of(text: str, limit: int = 10) -> list[str]:
    """Capitalised names and acronyms, most frequent first (lone stop words left out)."""
    found = Counter(m.group(0) for m in _ENTITY.finditer(text) if m.group(0).lower() not in STOP_WORDS)
    return [name for name, _ in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def data_type_of(text: str) -> str:
    """Rule-based: first-person opinion → opinion; ≥ 2 quantities → statistical; steps → procedural; else factual."""
    if _OPINION.search(text):
        return "opinion"
    if len(_STAT.findall(text)) >= 2:
        return "statistical"
    if len(_PROCEDURE.findall(text)) >= 2:
        return "procedural"
    return "factual"


@dataclass
class KnowledgeEntry:
    """One retrieved source (seed schema §5)."""

    entry_id: str
    query_origin: str
    content: str
    summary: str
    source_url: str
    source_title: str
    source_published_date: str
    source_tier: SourceTier
    content_hash: str
    timeless: bool = False
    topics: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    data_type: str = "factual"
    confidence: float = 0.0

    @property
    def credibility_score(self) -> float:
        return self.source_tier.credibility

    def to_dict(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "query_origin": self.query_origin, "content": self.content,
                "summary": self.summary,
                "source": {"url": self.source_url, "title": self.source_title,
                           "published_date": self.source_published_date, "tier": int(self.source_tier),
                           "credibility_score": self.credibility_score, "timeless": self.timeless},
                "metadata": {"topics": list(self.topics), "entities": list(self.entities),
                             "data_type": self.data_type},
                "confidence": self.confidence}


@dataclass(frozen=True)
class SourceError:
    """A source that failed at ``stage`` (search, fetch, parse, store…); ``fatal=False`` marks a warning
    (e.g. a truncated page that was still used)."""

    source: str
    stage: str
    kind: str
    message: str
    fatal: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "stage": self.stage, "kind": self.kind, "message": self.message,
                "fatal": self.fatal}


@dataclass
class PassLog:
    number: int
    name: str
    tiers: tuple[int, ...]
    queries: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    new_sources: int = 0
    confidence: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.number, "name": self.name, "tiers": list(self.tiers), "queries": self.queries,
                "new_sources": self.new_sources, "confidence": self.confidence, "steps": self.steps}


@dataclass
class SubTopicStatus:
    topic: str
    confidence: float
    sources: int
    status: str  # complete | gap | unresolvable
    breakdown: ConfidenceBreakdown
    source_urls: list[str] = field(default_factory=list)

    def to_dict(self, detail: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "confidence": self.confidence, "sources": self.sources}
        if detail:
            out.update(status=self.status, source_urls=self.source_urls, breakdown=self.breakdown.to_dict())
        return out


@dataclass
class CoverageReport:
    """The seed's coverage report (§6) plus what it left implicit: explanations, pass log, errors, counters."""

    query: str
    passes_completed: int
    sources_used: int
    is_complete: bool
    sub_topics: list[SubTopicStatus]
    gaps: list[str]
    unresolvable: list[str]
    passes: list[PassLog] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def confidence_per_topic(self) -> dict[str, float]:
        return {s.topic: s.confidence for s in self.sub_topics}

    def summary_dict(self) -> dict[str, Any]:
        """The seed's schema only (the CLI's ``--json`` line)."""
        return {"query": self.query, "passes_completed": self.passes_completed, "sources_used": self.sources_used,
                "is_complete": self.is_complete, "sub_topics": [s.to_dict() for s in self.sub_topics],
                "gaps": self.gaps, "unresolvable": self.unresolvable}

    def to_dict(self) -> dict[str, Any]:
        out = self.summary_dict()
        out["sub_topics"] = [s.to_dict(detail=True) for s in self.sub_topics]
        out.update(passes=[p.to_dict() for p in self.passes], errors=[e.to_dict() for e in self.errors],
                   counters=dict(self.counters))
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True, width=120)

    def render(self) -> str:
        """The human-readable report: seed layout, then each confidence explained, the passes and the errors."""
        lines = [f'query: "{self.query}"', f"passes_completed: {self.passes_completed}",
                 f"sources_used: {self.sources_used}", f"is_complete: {str(self.is_complete).lower()}", "",
                 "sub_topics:"]
        for s in self.sub_topics:
            lines += [f'  - topic: "{s.topic}"', f"    confidence: {s.confidence:.2f}", f"    sources: {s.sources}",
                      f"    status: {s.status}"]
            lines += [f"    | {line}" for line in s.breakdown.explain()]
        lines.append(f"gaps: {json.dumps(self.gaps, ensure_ascii=False)}")
        lines.append(f"unresolvable: {json.dumps(self.unresolvable, ensure_ascii=False)}")
        lines += ["", "passes:"]
        for p in self.passes:
            lines.append(f"  pass {p.number} ({p.name}, tiers {','.join(map(str, p.tiers))}): "
                         f"{len(p.queries)} queries, {p.new_sources} new sources")
            lines += [f"    - {step}" for step in p.steps]
        if self.errors:
            lines += ["", f"source errors ({len(self.errors)}):"]
            lines += [f"  - [{e.stage}/{e.kind}{'' if e.fatal else ', warning'}] {e.source}: {e.message}"
                      for e in self.errors]
        if self.counters:
            lines += ["", "counters: " + ", ".join(f"{k}={v}" for k, v in sorted(self.counters.items()))]
        return "\n".join(lines)
