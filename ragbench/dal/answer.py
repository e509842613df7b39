"""Research answers through the same reader, grounding and refusal as ``ragbench ask``.

The seed's grounded prompt (:mod:`ragbench.dal.prompt`) is prose for a generative model; the extractive reader
found no numbered passages in it and always refused. Here each selected source becomes a numbered passage (its
key facts, one per line, after the prompt-injection quarantine; its title and tier are the passage context),
and the reply goes through :func:`ragbench.answer.grounding.verify`, the citation builder and the answerability
check (:func:`ragbench.answer.answerability.assess_answer`, every check ``ask`` makes) with IDF weights over the
sources. The result says, per answer sentence, which source and which key facts
(claims) of which sub-topics it rests on.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..answer.answerability import AnswerabilityReport, TermWeights, WordMatcher, assess_answer, doc_terms, rule_of
from ..answer.citations import build_citations
from ..answer.grounding import verify
from ..answer.service import SYSTEM_INSTRUCTION, answer_route, distinct, is_refusal
from ..config import AnswerConfig
from ..errors import ModelError, NetworkError
from ..llm.base import ChatModel
from ..llm.context import REFUSAL_MESSAGE, Passage, rag_meta
from ..llm.signals import salient_terms
from ..schema import Hit, Message
from ..text import normalize_whitespace, tokenize
from .prompt import display_url, kept_facts, select_sources
from .research import ResearchResult


@dataclass(frozen=True)
class SentenceClaims:
    """One answer sentence, the source it rests on and the key facts (with their sub-topics) that support it."""

    sentence: str
    source_url: str | None
    claims: tuple[str, ...]
    sub_topics: tuple[str, ...]
    supported: bool

    def to_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "source_url": self.source_url, "claims": list(self.claims),
                "sub_topics": list(self.sub_topics), "supported": self.supported}


@dataclass(frozen=True)
class ResearchAnswer:
    """A research answer (or refusal) with its citations (source URLs) and per-sentence claims."""

    question: str
    answer: str
    refused: bool
    refusal_reason: str | None
    support_ratio: float
    sources: tuple[str, ...]
    sentences: tuple[SentenceClaims, ...] = ()
    model_id: str = ""
    error: str | None = None
    answerability: AnswerabilityReport | None = field(default=None, repr=False)
    #: The rule that decided it, named as :attr:`ragbench.answer.service.Answer.decided_by` names it. Unlike
    #: ``ask`` it is in :meth:`to_dict`: research reads public web sources, so there is no restricted gap to hide.
    decided_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"answer": self.answer, "refused": self.refused, "refusal_reason": self.refusal_reason,
                "decided_by": self.decided_by, "support_ratio": round(self.support_ratio, 6),
                "sources": list(self.sources), "sentences": [s.to_dict() for s in self.sentences],
                "model_id": self.model_id, "error": self.error}


def source_hits(result: ResearchResult, max_sources: int = 12, max_facts: int = 5) -> list[Hit]:
    """The selected sources as numbered context hits: key facts one per line, quarantined text removed."""
    facts = result.facts_by_source()
    hits = []
    for i, s in enumerate(select_sources(result, max_sources)):
        kept = kept_facts(facts[s.url], max_facts)
        if kept:
            text = "\n".join(normalize_whitespace(f) for f in kept)
            hits.append(Hit(f"source-{i + 1}", s.url, float(s.tier.credibility), i, text,
                            f"{s.page.title} ({display_url(s.url)}, tier {int(s.tier)})", 0, len(text)))
    return hits


def _claims(result: ResearchResult, url: str | None, sentence: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The key facts of source ``url`` that share most words with ``sentence``, and their sub-topics."""
    if url is None:
        return (), ()
    source = next((s for s in result.sources if s.url == url), None)
    if source is None:
        return (), ()
    words = set(tokenize(sentence, stopwords=True))
    claims: list[str] = []
    topics: list[str] = []
    for topic, facts in source.facts.items():
        for f in facts:
            if words and len(words & set(tokenize(f, stopwords=True))) / len(words) >= 0.5:
                claims.append(f)
                topics.append(topic)
    return tuple(dict.fromkeys(claims)), tuple(dict.fromkeys(topics))


def research_answer(result: ResearchResult, chat_model: ChatModel, cfg: AnswerConfig | None = None,
                    embedder: Any = None) -> ResearchAnswer:
    """Answer the research question from its sources like ``ask`` does: reader → refusal → grounding →
    answerability; every answer sentence lists the claims it rests on."""
    cfg = cfg or AnswerConfig()
    question = result.question
    hits = source_hits(result)
    model_id = str(getattr(chat_model, "model_id", ""))

    def refusal(reason: str, ratio: float = 0.0, error: str | None = None, check: AnswerabilityReport | None = None,
                decided_by: str | None = None) -> ResearchAnswer:
        # ``decided_by`` defaults to the reason itself, as for ``ask``'s refusals.
        return ResearchAnswer(question, REFUSAL_MESSAGE, True, reason, ratio, (), (), model_id, error, check,
                              decided_by or reason)

    if not hits:
        # No source left with a usable fact: research's counterpart of ask's retrieval floor.
        return refusal("insufficient-retrieval", decided_by="retrieval-floor")
    # Each source's terms (title and facts), read once: the IDF weights and the quoted sources' terms use them.
    source_terms = {h.chunk_id: doc_terms(f"{h.title}\n{h.text}") for h in hits}
    weights = TermWeights.from_term_sets(source_terms.values())
    passages = [Passage(i + 1, h.text, h.score, h.title) for i, h in enumerate(hits)]
    context = "\n".join(f"[{p.n}] {normalize_whitespace(p.text)}" for p in passages)
    user = f"CONTEXT:\n{context}\n\nQUESTION:\n{question}"
    meta = rag_meta(question, passages, weights={t: weights(t) for t in salient_terms(question)})
    try:
        completion = chat_model.complete([Message("system", SYSTEM_INSTRUCTION), Message("user", user, meta)])
    except (ModelError, NetworkError) as exc:
        return refusal("model-error", error=f"{type(exc).__name__}: {exc}")
    text = completion.text.strip()
    model_id = completion.model_id
    if not text:
        return refusal("empty-answer")
    if is_refusal(text):
        return refusal("model-refused")
    report = verify(text, hits, cfg.min_support_sentence, cfg.grounding, embedder, cfg.min_embedding_support)
    if report.support_ratio < cfg.min_support_ratio:
        return refusal("insufficient-grounding", report.support_ratio, decided_by="grounding")
    citations = build_citations(text, hits, report)
    check = None
    if cfg.answerability:
        # The same checks as ``ask`` (one entry point): each sentence is read with its own source's title, and a
        # name or specific word of the question that the quoted sources never mention makes the answer one about a
        # sibling.
        by_id = {h.chunk_id: h for h in hits}
        own = [by_id[s.chunk_id].title if s.chunk_id in by_id else "" for s in report.sentences]
        quoted = set().union(*(source_terms[s.chunk_id] for s in report.sentences if s.chunk_id in by_id))
        matcher = (WordMatcher(embedder, cfg.answerability_synonym_zipf, cfg.kinship, cfg.answerability_week_parts)
                   if embedder is not None else None)
        check = assess_answer(cfg, question, question, [s.sentence.text for s in report.sentences], distinct(own),
                              weights, embedder, matcher, document_terms=quoted, sentence_contexts=own)
        if not check.answerable:
            return refusal("unanswerable-question", report.support_ratio, check=check,
                           decided_by="check:" + rule_of(check.reason))
    by_chunk = {h.chunk_id: h.doc_id for h in hits}
    sentences = []
    for s in report.sentences:
        url = by_chunk.get(s.chunk_id) if s.chunk_id else None
        claims, topics = _claims(result, url, s.sentence.text)
        sentences.append(SentenceClaims(s.sentence.text, url, claims, topics, s.supported))
    return ResearchAnswer(question, text, False, None, report.support_ratio,
                          tuple(dict.fromkeys(c.doc_id for c in citations)), tuple(sentences), model_id, None, check,
                          answer_route(check, cfg))


def render(answer: ResearchAnswer) -> str:
    """The answer and, per sentence, the claims it rests on (the answer section of the coverage report)."""
    lines = ["ANSWER", answer.answer]
    if answer.refused:
        lines.append(f"(refused: {answer.refusal_reason})")
    for s in answer.sentences:
        lines.append(f"- {s.sentence}")
        lines.append(f"    source: {s.source_url or 'none'}; sub-topics: {', '.join(s.sub_topics) or 'none'}")
        lines.extend(f"    claim: {c}" for c in s.claims)
    return "\n".join(lines)


def answers_json(answers: Sequence[ResearchAnswer]) -> list[dict[str, Any]]:
    return [a.to_dict() for a in answers]
