"""Multi-pass research (seed §2 and §4), with real searches, fetched pages and measured confidence.

Pass 1 sweeps all tiers with the seed's five query forms; pass 2 fills gaps (sub-topics below the threshold) with
tier 1–2 sources; pass 3 verifies with tier-1 sources only; pass 4, a last sweep over all tiers, runs only when
two or more sub-topics are still below ``unresolvable_threshold``. Research stops as soon as every sub-topic
reaches ``confidence_threshold`` (convergence). When the passes are exhausted (pass 4 done, or not triggered
after pass 3), sub-topics still below ``unresolvable_threshold`` are marked unresolvable. Confidence is
cumulative: every pass re-scores each sub-topic over all sources found so far.
"""
from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Sequence

from tqdm.auto import tqdm

from ..config import DalConfig
from ..errors import DataError, RagbenchError, StoreError
from ..llm.base import ChatModel
from ..retrieval.base import Embedder
from .confidence import ConfidenceBreakdown, mean, parse_date, recency_of
from .consistency import ConsistencyMeter, SourceFacts, key_facts
from .decompose import Decomposition, SubTopic, content_words, decompose
from .entries import (
    CoverageReport,
    KnowledgeEntry,
    PassLog,
    SourceError,
    SubTopicStatus,
    data_type_of,
    entities_of,
    entry_id_for,
    summarize,
)
from .fetch import FetchedPage, PageFetcher
from .search import SearchBackend
from .tiers import SourceTier, TierPolicy, host_of, tier_distribution

if TYPE_CHECKING:
    from .hub import KnowledgeHub

log = logging.getLogger("ragbench.dal.research")

PASS_NAMES = {1: "broad sweep", 2: "gap fill", 3: "deep verification", 4: "final sweep"}
PASS_TIERS = {1: (1, 2, 3), 2: (1, 2), 3: (1,), 4: (1, 2, 3)}


def pass_queries(number: int, question: str, topics: Sequence[str]) -> list[str]:
    """The seed's query forms for a pass (``topics`` are the sub-topics still below the threshold)."""
    if number == 1:
        return [question, f"{question} site:arxiv.org OR site:acm.org", f"{question} case study production",
                f"{question} benchmark comparison", f"{question} 2024 2025 latest"]
    if number == 2:
        return [q for t in topics for q in (f'"{t}" site:arxiv.org', f'"{t}" research paper PDF')]
    if number == 3:
        return [q for t in topics for q in (f'"{t}" site:gov OR site:edu filetype:pdf', f'"{t}" peer-reviewed study')]
    return [q for t in topics for q in (f'"{t}"', f"{t} {question}")]


@dataclass
class Source:
    """A fetched (or reused) page and what research made of it."""

    url: str
    tier: SourceTier
    page: FetchedPage
    found_in_pass: int
    reused: bool = False
    facts: dict[str, list[str]] = field(default_factory=dict)  # sub-topic title → key facts

    @property
    def timeless(self) -> bool:
        # "Verified timeless": an undated tier-1 reference (a standard, an official specification).
        return self.page.published is None and self.tier == SourceTier.TIER_1


@dataclass
class ResearchResult:
    question: str
    report: CoverageReport
    entries: list[KnowledgeEntry]
    sources: list[Source]
    decomposition: Decomposition

    def facts_by_source(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in self.sources:
            facts = list(dict.fromkeys(f for fs in s.facts.values() for f in fs))
            if facts:
                out[s.url] = facts
        return out


class Researcher:
    """``run(question) -> ResearchResult``. Constructor only stores its collaborators."""

    def __init__(self, search: SearchBackend, fetcher: PageFetcher, embedder: Embedder,
                 cfg: DalConfig | None = None, chat_model: ChatModel | None = None,
                 hub: "KnowledgeHub | None" = None, policy: TierPolicy | None = None,
                 show_progress: bool = False) -> None:
        self.search = search
        self.fetcher = fetcher
        self.embedder = embedder
        self.cfg = cfg or DalConfig()
        self.chat_model = chat_model
        self.hub = hub
        self.policy = policy
        self.show_progress = show_progress

    # ------------------------------------------------------------------------------------------ scoring
    def _facts(self, source: Source, topic: SubTopic) -> list[str]:
        return key_facts(source.page.text, topic.terms, self.cfg.facts_per_source, topic.subject,
                         self.cfg.topic_match)

    def score(self, topic: SubTopic, sources: Sequence[Source], as_of: date,
              meter: ConsistencyMeter) -> tuple[ConfidenceBreakdown, list[Source]]:
        """Confidence of ``topic`` over the ``sources`` that state facts about it, with its explanation."""
        cfg = self.cfg
        support = [s for s in sources if s.facts.get(topic.title)]
        cons = meter.measure([SourceFacts(s.url, host_of(s.url), tuple(s.facts[topic.title])) for s in support])
        rec = [recency_of(s.page.published, as_of, s.timeless, cfg.recency_days, cfg.timeless_recency,
                          cfg.undated_recency) for s in support]
        tiers = [s.tier for s in support]
        notes = ["sources: " + (", ".join(f"{host_of(s.url)} (tier {int(s.tier)})" for s in support) or "none")]
        if support:
            notes.append("tier_distribution = (" + " + ".join(f"{t.credibility:.2f}" for t in tiers)
                         + f") / {len(tiers)} = {tier_distribution(tiers):.4f}")
            notes.append("recency = mean(" + ", ".join(r.describe() for r in rec)
                         + f") = {mean(r.value for r in rec):.4f}")
        notes.extend(cons.notes)
        bd = ConfidenceBreakdown(len(support), cons.value, tier_distribution(tiers), mean(r.value for r in rec),
                                 tuple(notes))
        return bd, support

    # ------------------------------------------------------------------------------------------ acquisition
    def _acquire(self, url: str, number: int, errors: list[SourceError], counters: dict[str, int],
                 steps: list[str]) -> Source | None:
        tier = (self.policy or TierPolicy.from_config(self.cfg)).classify(url)
        page = self.hub.page(url) if self.hub is not None else None
        if page is not None:
            counters["reused"] += 1
            steps.append(f"reused {url} from the knowledge hub (tier {int(tier)})")
            return Source(url, tier, page, number, reused=True)
        try:
            counters["fetches"] += 1
            page = self.fetcher.fetch(url)
        except RagbenchError as exc:
            errors.append(SourceError(url, "fetch", type(exc).__name__, str(exc)))
            steps.append(f"fetch failed {url}: {type(exc).__name__}")
            return None
        except Exception as exc:  # a hostile page must not end the run and lose the report
            log.debug("fetch %s", url, exc_info=True)
            errors.append(SourceError(url, "fetch", type(exc).__name__, f"unexpected failure: {exc}"))
            steps.append(f"fetch failed {url}: {type(exc).__name__}")
            return None
        if page.truncated:
            errors.append(SourceError(url, "fetch", "Truncated", "page exceeded the size limit; its head was used",
                                      fatal=False))
        when = page.published.isoformat() if page.published else "undated"
        steps.append(f"fetched {url} (tier {int(tier)}, {when})")
        return Source(url, tier, page, number)

    # ------------------------------------------------------------------------------------------ the loop
    def run(self, question: str) -> ResearchResult:
        if not question or not question.strip():
            raise DataError("research question is blank. Fix: give a question.")
        cfg = self.cfg
        if cfg.max_passes < 1 or cfg.max_passes > 4:
            raise DataError(f"dal.max_passes must be 1–4, found {cfg.max_passes}. Fix: use 4 (the seed's maximum).")
        question = question.strip()
        as_of = parse_date(cfg.as_of) or date.today()
        policy = self.policy or TierPolicy.from_config(cfg)
        decomposition = decompose(question, self.chat_model if cfg.decomposer != "deterministic" else None)
        topics = list(decomposition.sub_topics)
        meter = ConsistencyMeter(self.embedder, cfg.subject_overlap, cfg.single_source_consistency)
        if cfg.run_deadline <= 0 or cfg.response_deadline <= 0:
            raise DataError(f"dal.run_deadline and dal.response_deadline must be > 0 seconds, found "
                            f"{cfg.run_deadline} and {cfg.response_deadline}. Fix: e.g. 900 and 60.")
        stop_at = time.monotonic() + cfg.run_deadline
        clients = {id(c): c for c in (getattr(self.search, "client", None), getattr(self.fetcher, "client", None))
                   if c is not None and hasattr(c, "stop_at")}
        for c in clients.values():  # every request ends by the run's deadline, retries included
            c.stop_at = c.timer() + cfg.run_deadline
        try:
            return self._passes(question, cfg, as_of, policy, decomposition, topics, meter, stop_at)
        finally:
            for c in clients.values():
                c.stop_at = None

    def _late(self, stop_at: float, question: str, errors: list[SourceError], plog: PassLog) -> bool:
        """True once the run's deadline has passed (recorded once in the errors and the pass log)."""
        if time.monotonic() < stop_at:
            return False
        if not any(e.kind == "RunDeadline" for e in errors):
            msg = (f"research stopped after dal.run_deadline = {self.cfg.run_deadline:g} s; the report holds what "
                   "was found by then. Fix: raise dal.run_deadline, or lower dal.max_passes / "
                   "dal.results_per_query.")
            errors.append(SourceError(question, "run", "RunDeadline", msg))
            plog.steps.append("deadline reached: " + msg)
        return True

    def _passes(self, question: str, cfg: DalConfig, as_of: date, policy: TierPolicy, decomposition: Decomposition,
                topics: list[SubTopic], meter: ConsistencyMeter, stop_at: float) -> ResearchResult:
        sources: list[Source] = []
        seen_urls: set[str] = set()
        seen_hashes: dict[str, str] = {}
        errors: list[SourceError] = []
        counters = {"searches": 0, "results": 0, "fetches": 0, "reused": 0, "filtered": 0, "duplicates": 0}
        passes: list[PassLog] = []
        scores: dict[str, tuple[ConfidenceBreakdown, list[Source]]] = {}
        converged = exhausted = False
        bar = tqdm(total=cfg.max_passes, desc="research passes", disable=not self.show_progress)
        for number in range(1, cfg.max_passes + 1):
            low = [t.title for t in topics if number == 1 or scores[t.title][0].confidence < cfg.confidence_threshold]
            if number == 4:
                very_low = [t for t in low if scores[t][0].confidence < cfg.unresolvable_threshold]
                if len(very_low) < 2:
                    passes[-1].steps.append(f"pass 4 not needed: {len(very_low)} sub-topic(s) below "
                                            f"{cfg.unresolvable_threshold} (needs ≥ 2)")
                    exhausted = True
                    break
            plog = PassLog(number, PASS_NAMES[number], PASS_TIERS[number])
            if number == 1:
                plog.steps.append(f"decomposed ({decomposition.method}) into {len(topics)} sub-topics: "
                                  + "; ".join(t.title for t in topics))
                plog.steps.extend(f"note: {n}" for n in decomposition.notes)
            else:
                plog.steps.append(f"{len(low)} sub-topic(s) below {cfg.confidence_threshold}: " + "; ".join(low))
            plog.queries = pass_queries(number, question, low)
            for query in plog.queries:
                counters["searches"] += 1
                if self._late(stop_at, question, errors, plog):
                    break
                try:
                    results = self.search.search(query, cfg.results_per_query)
                except Exception as exc:  # typed or not, a failed search is recorded, not fatal
                    if not isinstance(exc, RagbenchError):
                        log.debug("search %r", query, exc_info=True)
                    errors.append(SourceError(query, "search", type(exc).__name__, str(exc)))
                    plog.steps.append(f"search {query!r} failed: {type(exc).__name__}")
                    continue
                counters["results"] += len(results)
                kept = 0
                for r in results:
                    if int(policy.classify(r.url)) not in plog.tiers:
                        counters["filtered"] += 1
                        continue
                    if r.url in seen_urls:
                        continue
                    if self._late(stop_at, question, errors, plog):
                        break
                    seen_urls.add(r.url)
                    src = self._acquire(r.url, number, errors, counters, plog.steps)
                    if src is None:
                        continue
                    if src.page.content_hash in seen_hashes:
                        counters["duplicates"] += 1
                        plog.steps.append(f"duplicate content: {r.url} = {seen_hashes[src.page.content_hash]}")
                        continue
                    seen_hashes[src.page.content_hash] = r.url
                    src.facts = {t.title: self._facts(src, t) for t in topics}
                    sources.append(src)
                    kept += 1
                plog.new_sources += kept
                plog.steps.append(f"search {query!r}: {len(results)} result(s), {kept} new source(s)")
            for t in topics:
                scores[t.title] = self.score(t, sources, as_of, meter)
                plog.confidence[t.title] = scores[t.title][0].confidence
                bd = scores[t.title][0]
                plog.steps.append(f"score {t.title!r}: n={bd.source_count}, consistency={bd.consistency:.2f}, "
                                  f"tiers={bd.tier_distribution:.2f}, recency={bd.recency:.2f} → {bd.confidence:.2f}")
            passes.append(plog)
            bar.update(1)
            log.info("pass %d (%s): %d new sources; %s", number, plog.name, plog.new_sources, plog.confidence)
            if all(scores[t.title][0].confidence >= cfg.confidence_threshold for t in topics):
                plog.steps.append(f"converged: every sub-topic ≥ {cfg.confidence_threshold}")
                converged = True
                break
            if number == 4:
                exhausted = True
            if time.monotonic() >= stop_at:
                break
        bar.close()
        return self._finish(question, decomposition, topics, sources, scores, passes, errors, counters,
                            converged, exhausted)

    def _finish(self, question: str, decomposition: Decomposition, topics: list[SubTopic], sources: list[Source],
                scores: dict, passes: list[PassLog], errors: list[SourceError], counters: dict[str, int],
                converged: bool, exhausted: bool) -> ResearchResult:
        cfg = self.cfg
        statuses: list[SubTopicStatus] = []
        for t in topics:
            bd, support = scores[t.title]
            c = bd.confidence
            status = ("complete" if c >= cfg.confidence_threshold else
                      "unresolvable" if exhausted and c < cfg.unresolvable_threshold else "gap")
            statuses.append(SubTopicStatus(t.title, c, bd.source_count, status, bd, [s.url for s in support]))
        gaps = [s.topic for s in statuses if s.status != "complete"]
        unresolvable = [s.topic for s in statuses if s.status == "unresolvable"]
        if unresolvable:
            passes[-1].steps.append(f"marked unresolvable (< {cfg.unresolvable_threshold} after the last pass): "
                                    + "; ".join(unresolvable))
        conf = {s.topic: s.confidence for s in statuses}
        terms = content_words(question)
        entries = []
        for s in sources:
            covered = [title for title, facts in s.facts.items() if facts]
            entries.append(KnowledgeEntry(
                entry_id=entry_id_for(s.url), query_origin=question, content=s.page.text,
                summary=summarize(s.page.text, terms), source_url=s.url, source_title=s.page.title,
                source_published_date=s.page.published.isoformat() if s.page.published else "",
                source_tier=s.tier, content_hash=s.page.content_hash, timeless=s.timeless, topics=covered,
                entities=entities_of(s.page.text), data_type=data_type_of(s.page.text),
                confidence=max((conf[t] for t in covered), default=0.0)))
        failed = sum(1 for e in errors if e.stage == "search")
        if counters["searches"] and failed == counters["searches"]:
            search_url = getattr(self.search, "base_url", type(self.search).__name__)
            errors.append(SourceError(str(search_url), "search", "AllSearchesFailed",
                                      f"all {failed} searches failed (first: {next(e.message for e in errors)}). "
                                      "Fix: check dal.search_url (--search-url), the network and HTTP_PROXY/"
                                      "HTTPS_PROXY."))
        report = CoverageReport(question, len(passes), len(sources), converged or not gaps, statuses, gaps,
                                unresolvable, passes, errors, counters)
        if self.hub is not None and entries:
            try:
                self.hub.save(entries)
            except (StoreError, sqlite3.Error) as exc:  # the hub write is atomic; the result stands
                errors.append(SourceError(str(getattr(self.hub, "store", "hub")), "hub", type(exc).__name__, str(exc)))
        return ResearchResult(question, report, entries, sources, decomposition)
