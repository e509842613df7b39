"""Grounded answers with permissions (Enterprise source ``AnsweringService``, seed-behaviour 3.7).

``answer(question, principal)``: retrieve as the principal → ACL post-filter against the store → refuse
``insufficient-retrieval`` when the best score is below ``min_retrieval_score`` → prompt from the active versioned
template → chat model → per-sentence grounding → refuse ``insufficient-grounding`` when the support ratio is below
``min_support_ratio`` → citations. Failures of the model become refusals (``model-error``, ``model-refused``,
``empty-answer``) that carry the error text; an unknown principal raises :class:`PermissionDenied`.

Only post-filtered chunks ever reach the prompt, the answer, the citations, the answer log or the log messages.
"""
from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, MutableMapping, Sequence

from ..config import AnswerConfig, RagbenchConfig
from ..errors import ConfigError, DataError, ModelError, NetworkError, PermissionDenied
from ..llm.base import ChatModel, Completion
from ..llm.context import REFUSAL_MESSAGE, Passage, answer_sentence_spans, rag_meta
from ..llm.extractive import ExtractiveChatModel, Quote, format_quotes
from ..llm.signals import contexts, heading_trail, paragraph_headings, salient_terms, term_set
from ..schema import Hit, Message, Principal
from ..text import count_tokens, normalize_whitespace, tokenize
from .acl import PrincipalRegistry, allowed_doc_ids, post_filter
from .answerability import (NAMED_RULES, AnswerabilityReport, PermittedTermWeights, TermWeights, WordMatcher,
                            assess_answer, coverage, rule_of)
from .editions import asks_about_past, current_sentences, front_field, successors
from .judge import RESTRICTED_MARGIN, AnswerJudge, Verdict
from .rerank import QueryLikelihoodReranker
from .parts import interleave, question_parts
from ..llm.quarantine import Quarantine
from .budget import AnswerLog, BudgetLedger
from .citations import Citation, build_citations
from .grounding import SentenceSupport, verify
from .prompts import PromptRegistry, PromptTemplate

#: A document title that marks the document out of force (an older version kept for the record).
SUPERSEDED = re.compile(r"\b(?:superseded|obsolete|archived|withdrawn|out of date"
                        r"|no longer (?:in force|valid|applies))\b", re.IGNORECASE)

log = logging.getLogger(__name__)


def out_of_force(title: str, metadata: Mapping[str, Any] | None = None) -> bool:
    """True when a document says it is out of force: in its title ("… — SUPERSEDED"), or in its metadata, a
    ``status`` of that kind ("superseded", "archived") or a ``superseded_by`` naming its successor. The metadata is
    read at its top level (the golden loader's) and under ``front_matter`` (``ragbench ingest``'s)."""
    return bool(SUPERSEDED.search(title or "") or front_field(metadata, "superseded_by")
                or SUPERSEDED.search(str(front_field(metadata, "status") or "")))


SYSTEM_INSTRUCTION = ("You answer questions about the company's documents using only the numbered context "
                      "passages you are given, and you cite them with their [n] markers.")

REFUSAL_REASONS = ("insufficient-retrieval", "insufficient-grounding", "unanswerable-question", "model-refused",
                   "empty-answer", "model-error", "judge-rejected")

#: A follow-up refused for these reasons is read once more with its conversation's documents (``focus_docs``).
FOCUS_RETRY = ("insufficient-retrieval", "unanswerable-question")
#: Openings of a generative model's refusal besides the exact sentence (small models paraphrase it).
REFUSAL_CUES = ("i don't have enough information", "i do not have enough information", "i don't know",
                "i do not know", "the passages do not", "the context does not", "there is no information")


def distinct(contexts: Sequence[str]) -> list[str]:
    """The non-empty ``contexts`` (titles and headings, one per answer sentence), each once, in order."""
    return list(dict.fromkeys(c for c in contexts if c))


def is_refusal(text: str) -> bool:
    """True when a reply is (or opens with) a refusal."""
    t = normalize_whitespace(text).casefold().replace("’", "'").lstrip("\"'")
    return t.startswith(REFUSAL_MESSAGE.casefold()) or t.startswith(REFUSAL_CUES)


@dataclass(frozen=True)
class Answer:
    """One answer (or refusal) with everything needed to audit it."""

    answer_id: str
    question: str
    query: str
    answer: str
    refused: bool
    refusal_reason: str | None
    support_ratio: float
    citations: tuple[Citation, ...]
    prompt_version: str
    model_id: str
    retrieval_mode: str
    context_tokens: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_chunk_ids: tuple[str, ...] = ()
    sentences: tuple[SentenceSupport, ...] = field(default=(), repr=False)
    error: str | None = None
    answerability: AnswerabilityReport | None = field(default=None, repr=False)
    #: 1 − (the asker's best score / the best score in the whole index) when the latter is not readable by the
    #: asker, else 0 (:meth:`AnsweringService.restricted_gap`; 0 when ``answer.restricted_gap`` is off); kept for
    #: evaluation, never sent to the asker.
    restricted_gap: float = field(default=0.0, repr=False)
    #: How much more of the question a passage the asker may not read covers than the asker's best passage
    #: (:meth:`AnsweringService.restricted_lead`; 0 when none is restricted or ``answer.restricted_coverage`` is
    #: off); above 0 it closes the answerability check's similarity route. Kept for evaluation, never sent.
    restricted_lead: float = field(default=0.0, repr=False)
    #: The graded judge's P(yes) when it read this answer (``answer.judge`` in ``verdict`` or ``rescue`` mode), else
    #: ``None``: why a judged answer was given or refused.
    judge_p_yes: float | None = None
    #: The rule that decided this answer, kept for evaluation and never sent to the asker (a restricted gap must not
    #: be told apart from a weak retrieval there). For a refusal, the check that refused it: ``retrieval-floor``,
    #: ``restricted-gap``, ``judge-rerank``, ``model-error``, ``empty-answer``, ``model-refused``, ``grounding``,
    #: ``check:<rule>`` (the answerability rule, :func:`~ragbench.answer.answerability.rule_of`),
    #: ``judge-verdict`` or ``judge-veto``. For an answer, the route it passed by: ``check:coverage``,
    #: ``check:similarity``, ``check:parts``, ``judge-rescue``, ``judge-verdict`` or ``unchecked`` (the check off).
    decided_by: str = field(default="", repr=False)

    @property
    def cited_doc_ids(self) -> list[str]:
        return list(dict.fromkeys(c.doc_id for c in self.citations))

    @property
    def unanswered_parts(self) -> tuple[str, ...]:
        """The parts of a multi-part question this (partial) answer does not answer (none when refused)."""
        return () if self.refused or self.answerability is None else self.answerability.unanswered_parts

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON record."""
        return {"answer": self.answer, "refused": self.refused, "refusal_reason": self.refusal_reason,
                "citations": [c.to_json() for c in self.citations], "support_ratio": round(self.support_ratio, 6),
                "prompt_version": self.prompt_version, "model_id": self.model_id,
                "retrieval_mode": self.retrieval_mode, "context_tokens": self.context_tokens,
                "answer_id": self.answer_id, "error": self.error, "unanswered_parts": list(self.unanswered_parts),
                "judge_p_yes": self.judge_p_yes}

    def explain(self) -> dict[str, Any]:
        """Why this answer was given or refused, for the operator (``ragbench ask --explain``): the rule that decided
        it, the standalone question that was retrieved with, the restricted gap and lead, the judge's P(yes), the
        answerability check's signals (``None`` when a floor refused before the check) and the sentences the check
        read, each with the chunk that supports it. Never part of :meth:`to_json` or a server reply: it says what a
        refusal's wording does not (that a passage the asker may not read ranked first)."""
        return {"decided_by": self.decided_by, "query": self.query, "restricted_gap": round(self.restricted_gap, 6),
                "restricted_lead": round(self.restricted_lead, 6), "judge_p_yes": self.judge_p_yes,
                "check": None if self.answerability is None else self.answerability.to_json(),
                "sentences": [{"text": s.sentence.text, "chunk_id": s.chunk_id, "support": round(s.score, 6),
                               "supported": s.supported} for s in self.sentences]}

    def to_row(self, qid: str) -> dict[str, Any]:
        """A row of the ``answers`` table (plus the optional columns)."""
        return {"qid": qid, "answer": self.answer, "citations": [c.to_json() for c in self.citations],
                "refused": self.refused, "support_ratio": self.support_ratio, "prompt_version": self.prompt_version,
                "context_tokens": self.context_tokens, "refusal_reason": self.refusal_reason,
                "model_id": self.model_id, "retrieval_mode": self.retrieval_mode,
                "cited_docnos": self.cited_doc_ids, "judge_p_yes": self.judge_p_yes, "decided_by": self.decided_by}


def rescue_rules(spec: str) -> frozenset[str]:
    """The named rules of ``answer.judge_rescue_rules`` (``all``: every one); an unknown name is a ``ConfigError``."""
    wanted = {r.strip() for r in spec.split(",") if r.strip()}
    unknown = wanted - set(NAMED_RULES) - {"all"}
    if unknown:
        raise ConfigError(f"answer.judge_rescue_rules names unknown rule(s) {sorted(unknown)}. Fix: use 'all' or "
                          f"names from {', '.join(NAMED_RULES)}.")
    return frozenset(NAMED_RULES) if "all" in wanted else frozenset(wanted)


def answer_route(check: AnswerabilityReport | None, cfg: AnswerConfig) -> str:
    """How an answer the check accepted passed it (:attr:`Answer.decided_by`): ``check:parts`` when the whole
    question was refused and a part answered, else ``check:coverage`` when soft coverage reaches
    ``answer.answerability_min_coverage``, else ``check:similarity``; ``unchecked`` with the check off. Shared with
    the research answers (:mod:`ragbench.dal.answer`), so both name their routes alike."""
    if check is None:
        return "unchecked"
    if check.parts:
        return "check:parts"
    return "check:coverage" if check.soft_coverage >= cfg.answerability_min_coverage else "check:similarity"


def _answer_cfg(cfg: AnswerConfig | RagbenchConfig | None) -> AnswerConfig:
    if cfg is None:
        return AnswerConfig()
    if isinstance(cfg, RagbenchConfig):
        return cfg.answer
    if isinstance(cfg, AnswerConfig):
        return cfg
    raise ConfigError(f"expected an AnswerConfig or RagbenchConfig, found {type(cfg).__name__}.")


def _is_row(line: str) -> bool:
    """A Markdown table row: a line that starts and ends with "|"."""
    line = line.strip()
    return len(line) > 1 and line.startswith("|") and line.endswith("|")


class AnsweringService:
    """Answers questions as a principal over a store and a retriever indexed from it.

    ``principals``: when given, a principal passed by id is resolved there and a :class:`Principal` object must be
    registered too. ``budget``: a :class:`BudgetLedger` checked before and charged after each model call.
    ``log_answers``: record every answer's ids and scores in the store (needed for feedback)."""

    def __init__(self, store: Any, retriever: Any, chat_model: ChatModel,
                 cfg: AnswerConfig | RagbenchConfig | None = None, embedder: Any = None,
                 principals: PrincipalRegistry | None = None, budget: BudgetLedger | None = None,
                 log_answers: bool = True, tenant: str | None = None, judge: ChatModel | None = None,
                 reranker: ChatModel | None = None, rerank_cache: MutableMapping[str, float] | None = None) -> None:
        self.store = store
        self.retriever = retriever
        self.chat_model = chat_model
        self.cfg = _answer_cfg(cfg)
        self.embedder = embedder
        self.principals = principals
        self.budget = budget
        self.log_answers = log_answers
        self.tenant = tenant
        self._prompts: PromptRegistry | None = None
        self._answer_log: AnswerLog | None = None
        self._term_weights: PermittedTermWeights | None = None
        self._quarantine: Quarantine | None = None
        self._matcher: WordMatcher | None = None
        self._ranker: ChatModel | None = None  # the extractive reader that ranks sentences for the rescue judge
        self._rescue_rules = rescue_rules(self.cfg.judge_rescue_rules)
        self.judge = AnswerJudge(judge, self.prompts, self.cfg.judge_min_yes) if judge is not None else None
        # ``reranker``: a local model that scores tokens (answer.rerank); ``rerank_cache`` keeps its scores.
        self.reranker = (QueryLikelihoodReranker(reranker, self.prompts, rerank_cache)
                         if reranker is not None else None)

    # ------------------------------------------------------------------------------------------ parts

    @property
    def prompts(self) -> PromptRegistry:
        if self._prompts is None:
            self._prompts = PromptRegistry(self.store)
        return self._prompts

    @property
    def answer_log(self) -> AnswerLog:
        if self._answer_log is None:
            self._answer_log = AnswerLog(self.store)
        return self._answer_log

    @property
    def retrieval_mode(self) -> str:
        return str(getattr(self.retriever, "name", type(self.retriever).__name__))

    def _check_cfg(self) -> None:
        c = self.cfg
        if c.top_k < 1 or c.candidate_k < 1 or c.rerank_depth < 1:
            raise ConfigError(f"answer.top_k, answer.candidate_k and answer.rerank_depth must be ≥ 1, found "
                              f"{c.top_k}, {c.candidate_k}, {c.rerank_depth}.")
        for name in ("min_support_sentence", "min_support_ratio", "answerability_min_coverage", "superseded_weight",
                     "restricted_gap", "answerability_type_coverage"):
            if not 0.0 <= getattr(c, name) <= 1.0:
                raise ConfigError(f"answer.{name} must be in [0, 1], found {getattr(c, name)}.")
        if c.followup_focus < 0:
            raise ConfigError(f"answer.followup_focus must be ≥ 0 passages, found {c.followup_focus}. "
                              "Fix: e.g. 3, or 0 to never read a refused follow-up again.")
        if c.followup_context_max_terms < 0:
            raise ConfigError(f"answer.followup_context_max_terms must be ≥ 0 terms, found "
                              f"{c.followup_context_max_terms}. Fix: e.g. 2, or answer.followup_context=false to "
                              "never read a refused turn again in its conversation.")
        if c.whole_sentences < 0:
            raise ConfigError(f"answer.whole_sentences must be ≥ 0 characters, found {c.whole_sentences}. "
                              "Fix: e.g. 300, or 0 to keep chunks as retrieved.")
        if c.grounding == "embedding" and self.embedder is None:
            raise ConfigError("answer.grounding is 'embedding' but no embedder was given. Fix: pass embedder= "
                              "or set answer.grounding: lexical.")

    def resolve(self, principal: Principal | str | None) -> Principal:
        """The principal to answer as; unknown or missing ones raise :class:`PermissionDenied`."""
        if isinstance(principal, Principal):
            if self.principals is not None and (principal.user_id not in self.principals
                                                or self.principals.get(principal.user_id) != principal):
                raise PermissionDenied(f"principal {principal.user_id!r} is not registered with these rights. "
                                       "Fix: use a principal from the registry.")
            return principal
        if isinstance(principal, str):
            if self.principals is None:
                raise PermissionDenied(f"cannot resolve principal {principal!r}: no principal registry. "
                                       "Fix: pass a Principal or give the service a PrincipalRegistry.")
            return self.principals.get(principal)
        raise PermissionDenied("no principal given; answers are served only to a known principal. "
                               "Fix: pass a Principal or a registered user id.")

    def _context(self, hits: Sequence[Hit]) -> list[Hit]:
        """Titles, spans and text filled from the store where the retriever left them out; a chunk cut
        mid-sentence extended to the sentence start and end (:meth:`_whole_sentence_start`,
        :meth:`_whole_sentence_end`), one cut between table rows by the rows before and after it
        (:meth:`_whole_table_start`, :meth:`_whole_table_end`)."""
        titles: dict[str, str] | None = None
        texts: dict[str, str | None] = {}  # each document read once per answer
        out = []
        for h in hits:
            if not h.title:
                titles = titles if titles is not None else self.store.titles()
                h = replace(h, title=titles.get(h.doc_id, ""))
            if not h.text or h.end <= h.start:
                chunk = self.store.get_chunk(h.chunk_id)
                if chunk is not None and chunk.doc_id == h.doc_id:
                    h = replace(h, text=h.text or chunk.text, start=chunk.start, end=chunk.end)
            if self.cfg.whole_sentences > 0:
                if h.doc_id not in texts:
                    doc = self.store.get_document(h.doc_id)
                    texts[h.doc_id] = doc.text if doc is not None else None
                h = self._whole_sentence_end(self._whole_sentence_start(h, texts[h.doc_id]), texts[h.doc_id])
                h = self._whole_table_end(self._whole_table_start(h, texts[h.doc_id]), texts[h.doc_id])
            out.append(h)
        return out

    def _whole_sentence_start(self, hit: Hit, doc_text: str | None) -> Hit:
        """``hit`` extended back to the start of the sentence it opens in within ``doc_text`` (its document; at
        most ``answer.whole_sentences`` characters back), so the reader, grounding and citations never see a cut
        sentence; the added text is from the same document, so it is no more visible than the chunk itself.
        Sentences are the reader's (:func:`~ragbench.llm.context.answer_sentence_spans`)."""
        limit = self.cfg.whole_sentences
        if doc_text is None or not self._extendable_start(hit, doc_text):
            return hit  # off, at the document start, or not a slice of its stored document
        lo = max(0, hit.start - limit)
        # The window ends with the chunk's first character, so the last span is the sentence the chunk opens in.
        first, _ = answer_sentence_spans(doc_text[lo:hit.start + 1])[-1]
        if first == 0 and lo > 0:
            return hit  # the sentence starts further back than the limit: leave the chunk as it is
        start = lo + first
        while start < hit.start and doc_text[start].isspace():
            start += 1
        return hit if start >= hit.start else replace(hit, text=doc_text[start:hit.end], start=start)

    def _whole_sentence_end(self, hit: Hit, doc_text: str | None) -> Hit:
        """``hit`` extended forward to the end of the sentence its last character is in (at most
        ``answer.whole_sentences`` characters on): a chunk cut inside a sentence ("… the agreed headline price is
        €3." of "€3.4 million") would otherwise be quoted as a shorter, false sentence."""
        limit = self.cfg.whole_sentences
        if doc_text is None or not self._extendable_end(hit, doc_text):
            return hit
        hi = min(len(doc_text), hit.end + limit)
        last = hit.end - 1 - hit.start
        span = next(((a, b) for a, b in answer_sentence_spans(doc_text[hit.start:hi]) if a <= last < b), None)
        if span is None or span[1] <= last + 1 or (hit.start + span[1] == hi and hi < len(doc_text)):
            return hit  # ends at a sentence end, or the sentence runs on past the limit: leave the chunk as it is
        end = hit.start + span[1]
        while end > hit.end and doc_text[end - 1].isspace():
            end -= 1
        return hit if end <= hit.end else replace(hit, text=doc_text[hit.start:end], end=end)

    def _whole_table_end(self, hit: Hit, doc_text: str | None) -> Hit:
        """``hit`` extended by the rows of the Markdown table it ends in (whole rows only, at most
        ``answer.whole_sentences`` characters on). A table row is the reader's sentence and is read under the header
        above it, so a chunk cut between two rows left the later rows in a chunk without their header, which
        retrieval rarely ranks ("| P3 routine | … | within 10 working days |" after "| Priority | … | Attendance
        target |")."""
        if doc_text is None or not self._extendable_end(hit, doc_text) or not _is_row(hit.text.rsplit("\n", 1)[-1]):
            return hit  # off, not a slice of its document, or the chunk does not end on a table row
        end = hit.end
        # Each following line is taken while it is a whole row within the limit; the chunk ends at a line end.
        while end < len(doc_text) and doc_text[end] == "\n":
            nl = doc_text.find("\n", end + 1)
            line_end = len(doc_text) if nl < 0 else nl
            if not _is_row(doc_text[end + 1:line_end]) or line_end - hit.end > self.cfg.whole_sentences:
                break
            end = line_end
        return hit if end == hit.end else replace(hit, text=doc_text[hit.start:end], end=end)

    def _whole_table_start(self, hit: Hit, doc_text: str | None) -> Hit:
        """``hit`` extended back by the rows of the Markdown table it starts in (whole rows, up to the table's
        header, at most ``answer.whole_sentences`` characters back): the mirror of :meth:`_whole_table_end`. A chunk
        cut between two rows began at "| 4 days | £57.00 |" and lost "| Up to 24 hours | £19.00 |" above it."""
        limit = self.cfg.whole_sentences
        if (doc_text is None or not self._extendable_start(hit, doc_text) or doc_text[hit.start - 1] != "\n"
                or not _is_row(hit.text.split("\n", 1)[0])):
            return hit  # off, at the document start, not a slice of its document, or not opening on a row
        start = hit.start
        while start > 0:
            nl = doc_text.rfind("\n", 0, start - 1)
            line_start = nl + 1
            if not _is_row(doc_text[line_start:start - 1]) or hit.start - line_start > limit:
                break
            start = line_start
        return hit if start == hit.start else replace(hit, text=doc_text[start:hit.end], start=start)

    def _extendable_start(self, hit: Hit, doc_text: str) -> bool:
        """The chunk may grow back: extension on, the hit a slice of its stored document that starts after the
        document's start."""
        return self.cfg.whole_sentences > 0 and hit.start > 0 and doc_text[hit.start:hit.end] == hit.text

    def _extendable_end(self, hit: Hit, doc_text: str) -> bool:
        """The chunk may grow forward: extension on, the hit a non-empty slice of its stored document that stops
        before the document's end."""
        return (self.cfg.whole_sentences > 0 and hit.start < hit.end < len(doc_text)
                and doc_text[hit.start:hit.end] == hit.text)

    # ------------------------------------------------------------------------------------------ answering

    def passage_context(self, hit: Hit) -> str:
        """The document title and the headings the chunk starts under (evidence for the reader, never quoted)."""
        return self._context_in(hit, self.store.get_document(hit.doc_id))

    def passage_weight(self, hit: Hit) -> float:
        """``answer.superseded_weight`` for a passage of a document that says it is out of force (its title or its
        metadata, :func:`out_of_force`), else 1."""
        return self._weight_in(hit, self.store.get_document(hit.doc_id))

    def replaced_editions(self, question: str, doc_ids: Sequence[str], who: Principal) -> dict[str, set[str]]:
        """The documents of ``doc_ids`` (those an answer cites) replaced by another edition (their ``superseded_by``)
        that ``who`` may read, each with those successors; none when ``question`` speaks of the past
        (:func:`editions.asks_about_past`: then the old edition may be what it asks about)."""
        newer: dict[str, set[str]] = {}
        for doc_id in dict.fromkeys(doc_ids):
            doc = self.store.get_document(doc_id)
            ids = allowed_doc_ids(successors(doc.metadata if doc else None), who, self.store)
            if ids:
                newer[doc_id] = ids
        if newer:
            titles = self.store.titles()
            if asks_about_past(question, [titles.get(i, "") for ids in newer.values() for i in ids]):
                return {}
        return newer

    def current_passages(self, question: str, hits: Sequence[Hit], who: Principal) -> list[Hit]:
        """``hits`` with, after each passage of a document replaced by an edition ``who`` may read (and ``question``
        not of the past, :meth:`replaced_editions`), its counterpart in that edition: the successor's chunk sharing
        most of the passage's terms (Jaccard), at the score the reader gives the old passage (× its
        ``answer.superseded_weight``, :meth:`passage_weight`), unless that chunk is already among ``hits`` or shares no
        term with it. The old passage stays: the check reads what the reader quotes of both editions, and the answer
        then keeps the edition in force (:func:`editions.current_sentences`)."""
        newer = self.replaced_editions(question, [h.doc_id for h in hits], who)
        if not newer:
            return list(hits)
        chunks = {old: self.store.chunks(sorted(ids)) for old, ids in newer.items()}
        seen = {h.chunk_id for h in hits}
        weight = min(self.cfg.superseded_weight, 1.0)
        out: list[Hit] = []
        for h in hits:
            out.append(h)
            if h.doc_id not in chunks:
                continue
            mine = term_set(h.text or getattr(self.store.get_chunk(h.chunk_id), "text", ""))
            scored = [(len(mine & t) / len(mine | t), c) for c in chunks[h.doc_id]
                      for t in (term_set(c.text),) if mine | t]
            share, chunk = max(scored, key=lambda st: st[0], default=(0.0, None))
            if chunk is not None and share > 0 and chunk.chunk_id not in seen:
                seen.add(chunk.chunk_id)
                added = self._context([Hit(chunk.chunk_id, chunk.doc_id, h.score * weight, h.rank, chunk.text, "",
                                           chunk.start, chunk.end)])
                out.extend(self.quarantine.redact(added) if self.cfg.quarantine else added)
        return [replace(h, rank=i) for i, h in enumerate(out)]

    @staticmethod
    def _context_in(hit: Hit, doc: Any) -> str:
        trail = heading_trail(doc.text, hit.start) if doc is not None else []
        return contexts([hit.title, *trail])

    def _weight_in(self, hit: Hit, doc: Any) -> float:
        if self.cfg.superseded_weight >= 1.0:
            return 1.0
        return self.cfg.superseded_weight if out_of_force(hit.title, doc.metadata if doc else None) else 1.0

    def passages(self, hits: Sequence[Hit]) -> list[Passage]:
        """The reader's numbered passages: text, score × :meth:`passage_weight`, title and headings (each hit's
        document read once for both)."""
        out = []
        for i, h in enumerate(hits):
            doc = self.store.get_document(h.doc_id)
            out.append(Passage(i + 1, h.text.strip(), float(h.score) * self._weight_in(h, doc),
                               self._context_in(h, doc)))
        return out

    def build_messages(self, question: str, hits: Sequence[Hit], template: PromptTemplate,
                       focus: str | None = None, weights: Mapping[str, float] | None = None
                       ) -> tuple[list[Message], str]:
        """System + user messages and the context block; the question and passages also travel as structured
        meta so a local model never has to parse the prompt."""
        # The prompt gets one line per passage; the structured copy keeps line breaks (headings end sentences).
        passages = self.passages(hits)
        context = "\n".join(f"[{p.n}] {normalize_whitespace(p.text)}" for p in passages)
        user = template.render(context, question)
        return [Message("system", SYSTEM_INSTRUCTION),
                Message("user", user, rag_meta(question, passages, focus, weights))], context

    def retrieve(self, query: str, who: Principal) -> Sequence[Hit]:
        """The candidates for ``query`` as ``who``; a multi-part question (``answer.decompose``) also retrieves
        for each part and the lists are interleaved rank by rank, so every part reaches the reader."""
        parts = self._parts(query)
        k = max(self.cfg.candidate_k, self._budget(parts))
        whole = self.retriever.search(query, k=k, principal=who)
        if len(parts) < 2:
            return whole
        return interleave([whole, *(self.retriever.search(p, k=k, principal=who) for p in parts)], k)

    def passage_budget(self, query: str) -> int:
        """Passages the reader gets: ``answer.top_k`` for each part of a multi-part question (``decompose``). Two
        questions in one share no passages, so with one budget the second part got the leftovers of the first."""
        return self._budget(self._parts(query))

    def _parts(self, query: str) -> list[str]:
        return question_parts(query) if self.cfg.decompose else [query]

    def _budget(self, parts: Sequence[str]) -> int:
        return self.cfg.top_k * max(len(parts), 1)

    @property
    def _reads_restricted_terms(self) -> bool:
        """Whether the everyday-word rules need the terms of the restricted passages among the question's top."""
        return self.cfg.answerability_everyday_zipf > 0 or self.cfg.answerability_everyday_known_zipf > 0

    def restricted_gap(self, query: str, who: Principal, best_permitted: float) -> float:
        """``1 − best_permitted / s`` when the index's best chunk for ``query`` (score ``s`` > 0, searched without
        a principal) is one ``who`` may not read, else 0: how far the asker's best evidence falls short of a
        restricted passage. Only that chunk's score leaves this method; its text never reaches a prompt, an
        answer, a citation or a log. A hybrid retriever's fused scores are ranks, so its dense half scores both
        sides instead (``best_permitted`` is then the asker's best cosine)."""
        from ..retrieval.retriever import vector_part

        dense = vector_part(self.retriever)
        if dense is not None and dense is not self.retriever:  # a hybrid: one query vector for both searches
            qvec = dense.embed_query(query)
            mine = post_filter(list(dense.search_vector(qvec, k=self.cfg.candidate_k, principal=who)), who,
                               self.store)
            best_permitted = mine[0].score if mine else 0.0
            top = list(dense.search_vector(qvec, k=1))[:1]
        else:
            top = list(self.retriever.search(query, k=1, principal=None))[:1]
        if not top or not top[0].score > 0 or allowed_doc_ids([top[0].doc_id], who, self.store):
            return 0.0
        return max(0.0, 1.0 - float(best_permitted) / float(top[0].score))

    def restricted_passages(self, query: str, who: Principal) -> list[Hit]:
        """The passages ``who`` may not read among the index's top :meth:`passage_budget` passages for ``query``
        searched without a principal, in context. Internal to the refusal checks: their text never reaches a
        prompt, an answer, a citation or a log."""
        top = list(self.retriever.search(query, k=self.passage_budget(query), principal=None))
        readable = allowed_doc_ids([h.doc_id for h in top], who, self.store)
        return self._context([h for h in top if h.doc_id not in readable])

    def passage_terms(self, hit: Hit) -> set[str]:
        """The terms of a passage's text, title and headings (one store read for the headings)."""
        return term_set(f"{hit.text} . {self.passage_context(hit)}")

    def restricted_terms(self, restricted: Sequence[Hit]) -> set[str]:
        """The terms of these passages and their contexts (only set membership leaves the method)."""
        return set().union(*map(self.passage_terms, restricted))

    def restricted_lead(self, query: str, who: Principal, hits: Sequence[Hit],
                        restricted: Sequence[set[str]] | None = None) -> float:
        """How much more of ``query``'s salient terms (IDF over what ``who`` may read) the best-covering passage
        ``who`` may not read covers than the best of ``hits`` (the asker's passages), among
        :meth:`restricted_passages` (their :meth:`passage_terms` given, or searched); 0 when there are none or the
        asker's cover as much. Only this number leaves the method: the restricted text never reaches a prompt, an
        answer, a citation or a log."""
        if restricted is None:
            restricted = [self.passage_terms(h) for h in self.restricted_passages(query, who)]
        if not restricted:
            return 0.0
        terms = salient_terms(query)
        weights = self.term_weights(who)
        best_restricted = max(coverage(terms, t, weights) for t in restricted)
        return max(0.0, best_restricted - max((coverage(terms, self.passage_terms(h), weights) for h in hits),
                                              default=0.0))

    def answer(self, question: str, principal: Principal | str | None, tenant: str | None = None,
               query: str | None = None, focus_docs: Sequence[str] = (), context_query: str | None = None) -> Answer:
        """Answer ``question`` as ``principal``; ``query`` (default: the question) is what is retrieved and asked
        (a chat session passes the rewritten follow-up here, and the documents its earlier answers cited as
        ``focus_docs``: a follow-up refused on the retrieved passages is read once more with the passages of those
        documents that share its own words, and answered from them if it passes then, ``answer.followup_focus``).
        ``context_query``: a turn refused on ``query`` is read once more on this one (a chat session passes the
        turn read as a follow-up when its wording did not make it one, ``answer.followup_context``)."""
        self._check_cfg()
        who = self.resolve(principal)
        if not isinstance(question, str) or not question.strip():
            raise DataError(f"question must be a non-blank string, found {question!r}.")
        asked = (query or question).strip()
        tenant = tenant or self.tenant or self.cfg.tenant
        result = self._read(question.strip(), asked, who, tenant, focus_docs, asked != question.strip())
        alternative = (context_query or "").strip()
        if result.refused and result.refusal_reason in FOCUS_RETRY and alternative and alternative != asked:
            again = self._read(question.strip(), alternative, who, tenant, focus_docs, True)
            # Refused again: the first refusal stands (its reason and passages are the turn's own).
            result = result if again.refused else again
        return self._finish(who, tenant, result)

    def _read(self, question: str, asked: str, who: Principal, tenant: str, focus_docs: Sequence[str],
              follow_up: bool) -> Answer:
        """One reading of ``question`` on the passages retrieved for ``asked``; when refused and ``follow_up``, once
        more with the passages of ``focus_docs`` that share the question's own words (``answer.followup_focus``)."""
        if self.budget is not None:
            self.budget.check(tenant)
        raw = self.retrieve(asked, who)
        searched: dict[Any, Any] = {}  # the searches without a principal, made once for both readings
        result = self._respond(question, asked, who, tenant, raw, (), searched)
        if (result.refused and result.refusal_reason in FOCUS_RETRY and focus_docs and follow_up
                and self.cfg.followup_focus > 0):
            focus = self.focus_passages(question, who, focus_docs)
            if focus:
                if self.budget is not None:
                    self.budget.check(tenant)  # the second reading is another model call
                again = self._respond(question, asked, who, tenant, raw, focus, searched)
                result = result if again.refused else again
        return result

    def focus_passages(self, question: str, who: Principal, docs: Sequence[str]) -> list[Hit]:
        """Up to ``answer.followup_focus`` passages of ``docs`` that ``who`` may read, ranked by the IDF-weighted
        coverage of ``question``'s own salient terms (the user's words, not the carried subject), those covering
        nothing left out (score 0 here; :meth:`_respond` puts them at the weakest retrieved passage's score)."""
        terms = salient_terms(question)
        if not terms:
            return []
        weights = self.term_weights(who)
        readable = allowed_doc_ids(docs, who, self.store)
        scored = [(coverage(terms, term_set(c.text), weights), c) for c in self.store.chunks(sorted(readable))]
        scored = sorted((t for t in scored if t[0] > 0), key=lambda t: -t[0])[: self.cfg.followup_focus]
        return [Hit(c.chunk_id, c.doc_id, 0.0, i, c.text, "", c.start, c.end) for i, (_, c) in enumerate(scored)]

    def _respond(self, question: str, asked: str, who: Principal, tenant: str, raw: Sequence[Hit],
                 focus: Sequence[Hit] = (), searched: dict[Any, Any] | None = None) -> Answer:
        """The answer before it is logged, read from the retrieved candidates ``raw`` (:meth:`retrieve`);
        ``focus`` passages join them, interleaved. ``searched`` keeps the refusal checks' searches without a
        principal (the restricted gap and passages, which depend on ``asked`` and ``who`` only) for a second reading
        of the same turn."""
        searched = {} if searched is None else searched
        template = self.prompts.ensure_default(self.cfg.prompt_name)
        base: dict[str, Any] = dict(question=question, query=asked, prompt_version=template.id,
                    model_id=str(self.chat_model.model_id), retrieval_mode=self.retrieval_mode)

        top_k = self.passage_budget(asked)
        if focus:
            # Rank by rank with the retrieved passages, at the weakest one's score (the reader weighs by score).
            retrieved = list(raw)[:top_k]
            floor = min((h.score for h in retrieved), default=0.0)
            raw = interleave([retrieved, [replace(h, score=floor) for h in focus]], len(retrieved) + len(focus))
            top_k = len(raw)
        depth = max(top_k, self.cfg.rerank_depth) if self.reranker is not None else top_k
        hits = self._context(post_filter(raw, who, self.store)[:depth])
        if self.cfg.quarantine:
            hits = self.quarantine.redact(hits)  # flagged text never reaches the model, the answer or a citation
        best = max((h.score for h in hits), default=0.0)  # the retriever's scores: the floor and the gap use them
        if not hits or best < self.cfg.min_retrieval_score:
            return self._refusal(base, "insufficient-retrieval", 0.0, 0, hits, decided_by="retrieval-floor")
        if self.cfg.restricted_gap > 0:
            if ("gap", best) not in searched:
                searched["gap", best] = self.restricted_gap(asked, who, best)
            base["restricted_gap"] = searched["gap", best]
            if base["restricted_gap"] >= self.cfg.restricted_gap:
                # The same reason as a weak retrieval: the reply does not say that a restricted document exists.
                return self._refusal(base, "insufficient-retrieval", 0.0, 0, hits, decided_by="restricted-gap")
        # The terms of the passages the asker may not read among the question's top, each read once for both uses.
        restricted: list[set[str]] = []
        if self.cfg.answerability and (self.cfg.restricted_coverage or self._reads_restricted_terms):
            if "restricted" not in searched:
                searched["restricted"] = [self.passage_terms(h) for h in self.restricted_passages(asked, who)]
            restricted = searched["restricted"]
        if self.cfg.restricted_coverage and self.cfg.answerability:
            base["restricted_lead"] = self.restricted_lead(asked, who, hits[:top_k], restricted)
        if self.reranker is not None:
            hits = self.reranker.rank(asked, hits)  # quarantine-cleaned text: flagged spans never reach the model
        hits = hits[:top_k]
        if self.cfg.current_passages:
            hits = self.current_passages(question, hits, who)
        if self.judge is not None and self.cfg.judge_mode == "rerank":
            # The judge reads each passage against the question; only passages it accepts reach the reader, in
            # its order and with its P(yes) as their score (the reader weighs passages by score).
            judged = self.judge.rank(asked, hits)
            kept = [replace(h, score=p) for h, p in judged if p >= self.judge.min_yes]
            if not kept:
                return self._refusal(base, "judge-rejected", 0.0, 0, hits, decided_by="judge-rerank")
            hits = kept

        weights = self.term_weights(who)
        focus_words = question if asked != question else None
        messages, context = self.build_messages(asked, hits, template, focus=focus_words,
                                                weights={t: weights(t) for t in salient_terms(asked)})
        context_tokens = count_tokens(context)
        try:
            completion = self.chat_model.complete(messages)
            if not isinstance(completion, Completion) or not isinstance(completion.text, str):
                raise ModelError(f"chat model returned {type(completion).__name__}, expected a Completion.")
        except (ModelError, NetworkError) as exc:
            log.warning("chat model failed (%s); refusing", type(exc).__name__)
            return self._refusal(base, "model-error", 0.0, context_tokens, hits,
                                 error=f"{type(exc).__name__}: {exc}")
        if self.budget is not None:
            self.budget.record(tenant, completion.model_id, completion.prompt_tokens, completion.completion_tokens)
        base["model_id"] = completion.model_id
        tokens: dict[str, Any] = dict(prompt_tokens=completion.prompt_tokens,
                                      completion_tokens=completion.completion_tokens)
        text = completion.text.strip()
        if not text:
            return self._refusal(base, "empty-answer", 0.0, context_tokens, hits, **tokens)
        if is_refusal(text):
            return self._refusal(base, "model-refused", 0.0, context_tokens, hits, **tokens)
        report = verify(text, hits, self.cfg.min_support_sentence, self.cfg.grounding, self.embedder,
                        self.cfg.min_embedding_support)
        if report.support_ratio < self.cfg.min_support_ratio:
            return self._refusal(base, "insufficient-grounding", report.support_ratio, context_tokens, hits,
                                 sentences=report.sentences, decided_by="grounding", **tokens)
        citations = build_citations(text, hits, report)
        judge = self.judge if self.cfg.judge_mode in ("verdict", "rescue") else None
        # Each sentence's title, headings and table header, read once (store reads) for the check and the judge.
        per_sentence = self.own_contexts(report, hits) if self.cfg.answerability or judge is not None else []
        contexts = distinct(per_sentence)
        check = self.answerability(question, asked, report, hits, who, per_sentence,
                                   similarity_route=base.get("restricted_lead", 0.0) <= 0,
                                   restricted_terms=set().union(*restricted)
                                   if self._reads_restricted_terms else None)

        outranked = base.get("restricted_gap", 0.0) > 0  # the index's best chunk is one the asker may not read

        def verdict_on_answer(judge: AnswerJudge, bar: float | None = None) -> Verdict:
            # The standalone form: a follow-up ("And for a weekend night?") is judged with its carried subject.
            # A better match the asker may not read (the restricted gap, above 0) asks for a surer verdict; ``bar``
            # (the veto's, a named rule's) replaces the judge's own.
            if bar is None and outranked:
                bar = self.cfg.judge_min_yes_restricted
            # The judge reads the evidence the text check reads: each sentence's title, headings and table header
            # ("| Stay | Drive-up price |" says what "| Up to 24 hours | £19.00 |" prices).
            return judge.judge(asked, [s.sentence.text for s in report.sentences], contexts, bar)

        p_yes: float | None = None
        if check is not None and not check.answerable:
            # The rescue judge gives a second opinion on what word overlap alone refused (the coverage and
            # similarity thresholds: mostly paraphrases); a refusal with a named reason stands unless its rule is
            # listed in answer.judge_rescue_rules, and any refusal stands when the judge fails.
            rescued = False
            if (judge is not None and self.cfg.judge_mode in ("rescue", "verdict")
                    and rule_of(check.reason) in self._rescue_rules):
                # A named rule the judge may overturn (answer.judge_rescue_rules), at its own, surer bar.
                bar = self.cfg.judge_rules_min_yes
                verdict = verdict_on_answer(judge, min(1.0, bar + RESTRICTED_MARGIN) if outranked else bar)
                p_yes = verdict.p_yes
                rescued = verdict.accepted and verdict.error is None
            elif judge is not None and self.cfg.judge_mode == "rescue" and check.on_thresholds:
                if self.cfg.rescue_sentences > 0:
                    reread, p_yes = self.rescue_by_sentence(
                        judge, question, asked, hits, who, outranked,
                        set().union(*restricted) if self._reads_restricted_terms else None)
                    if reread is not None:  # the answer quotes the sentence the judge accepted
                        text, report, reread_check = reread
                        citations = build_citations(text, hits, report)
                        check = reread_check or check
                        rescued = True
                else:
                    verdict = verdict_on_answer(judge)
                    p_yes = verdict.p_yes
                    rescued = verdict.accepted and verdict.error is None
            if not rescued:
                refusal = self._refusal(base, "unanswerable-question", report.support_ratio, context_tokens, hits,
                                        sentences=report.sentences, decided_by="check:" + rule_of(check.reason),
                                        **tokens)
                return replace(refusal, answerability=check, judge_p_yes=p_yes)
            check = replace(check, answerable=True, reason=None, parts=())
            decided_by = "judge-rescue"
        elif judge is not None and self.cfg.judge_mode == "verdict":
            verdict = verdict_on_answer(judge)
            p_yes = verdict.p_yes
            decided_by = "judge-verdict"
            if not verdict.accepted:
                refusal = self._refusal(base, "judge-rejected", report.support_ratio, context_tokens, hits,
                                        sentences=report.sentences, decided_by=decided_by, **tokens)
                return replace(refusal, answerability=check, judge_p_yes=p_yes)
        else:
            decided_by = self.route(check)
            if judge is not None and self.cfg.judge_mode == "rescue" and self.cfg.judge_veto_min_yes > 0:
                # The stacked judge: an answer the text check accepted stands unless the judge is sure it does
                # not answer (a failing judge vetoes nothing).
                verdict = verdict_on_answer(judge, self.cfg.judge_veto_min_yes)
                p_yes = verdict.p_yes
                if not verdict.accepted and verdict.error is None:
                    refusal = self._refusal(base, "judge-rejected", report.support_ratio, context_tokens, hits,
                                            sentences=report.sentences, decided_by="judge-veto", **tokens)
                    return replace(refusal, answerability=check, judge_p_yes=p_yes)
        cited = {c.doc_id for c in citations}
        # Only an answer citing two documents or more can cite an edition beside the one that replaced it.
        replaced = (self.replaced_editions(question, sorted(cited), who)
                    if self.cfg.current_editions and len(cited) > 1 else {})
        current = current_sentences(text, hits, replaced) if replaced else None
        if current is not None:
            # The check read every edition the reader quoted; the answer states the edition in force beside it.
            text = current
            report = verify(text, hits, self.cfg.min_support_sentence, self.cfg.grounding, self.embedder,
                            self.cfg.min_embedding_support)
            citations = build_citations(text, hits, report)
        return Answer(answer_id="", answer=text, refused=False, refusal_reason=None,
                      support_ratio=report.support_ratio, citations=tuple(citations),
                      context_tokens=context_tokens, context_chunk_ids=tuple(h.chunk_id for h in hits),
                      sentences=report.sentences, answerability=check, judge_p_yes=p_yes, decided_by=decided_by,
                      **tokens, **base)

    def route(self, check: AnswerabilityReport | None) -> str:
        """How an answer the check accepted passed it (:attr:`Answer.decided_by`; :func:`answer_route`)."""
        return answer_route(check, self.cfg)

    def rescue_quotes(self, question: str, asked: str, hits: Sequence[Hit], who: Principal) -> list[Quote]:
        """The ``answer.rescue_sentences`` quotable sentences of ``hits`` the extractive reader ranks best for
        ``asked`` (``question``: the user's own words of a rewritten follow-up), with the contexts they were read
        in. A service whose chat model is not the extractive reader ranks with one built from the config."""
        reader = self.chat_model
        if not isinstance(reader, ExtractiveChatModel):
            if self._ranker is None:
                from ..llm.factory import make_chat_model

                self._ranker = make_chat_model(replace(self.cfg, chat_model="extractive"), embedder=self.embedder)
            reader = self._ranker
        assert isinstance(reader, ExtractiveChatModel)
        weights = self.term_weights(who)
        ranked = reader.rank(asked, self.passages(hits), question if asked != question else None,
                             {t: weights(t) for t in salient_terms(asked)})
        return ranked[: self.cfg.rescue_sentences]

    def rescue_by_sentence(self, judge: AnswerJudge, question: str, asked: str, hits: Sequence[Hit],
                           who: Principal, restricted: bool, restricted_terms: set[str] | None = None
                           ) -> tuple[tuple[str, Any, AnswerabilityReport | None] | None, float | None]:
        """The rescue judge reads the reader's best-ranked sentences (:meth:`rescue_quotes`) one at a time, each with
        its title and headings; the answer quotes the one it accepts with the highest P(yes) (at
        ``answer.judge_min_yes``, or ``judge_min_yes_restricted`` when ``restricted``) that is grounded and that no
        named rule of the answerability check refuses (:meth:`quote_answer`). Returns ``((text, grounding report,
        check), P(yes))``, or ``(None, best P(yes))`` when none is (a failing judge accepts nothing here: the
        refusal stands). ``restricted_terms``: as :meth:`answerability`."""
        threshold = self.cfg.judge_min_yes_restricted if restricted else self.cfg.judge_min_yes
        judged = self.judge_quotes(judge, asked, self.rescue_quotes(question, asked, hits, who))
        for p, quote in judged:
            if p < threshold:
                break
            reading = self.quote_answer(quote, question, asked, hits, who, restricted_terms)
            if reading is not None:
                return reading, p
        return None, judged[0][0] if judged else None

    @staticmethod
    def judge_quotes(judge: AnswerJudge, asked: str, quotes: Sequence[Quote]) -> list[tuple[float, Quote]]:
        """``(P(yes), quote)`` for each quote the judge read without failing, best first (ties in the reader's
        order); a greedy judge's YES scores 1 and its NO 0."""
        judged: list[tuple[float, int, Quote]] = []
        for i, quote in enumerate(quotes):
            verdict = judge.judge(asked, [quote.sentence], [quote.context], 0.5)
            if verdict.error is None:
                p = verdict.p_yes if verdict.p_yes is not None else float(verdict.accepted)
                judged.append((p, i, quote))
        return [(p, q) for p, _, q in sorted(judged, key=lambda t: (-t[0], t[1]))]

    def quote_answer(self, quote: Quote, question: str, asked: str, hits: Sequence[Hit], who: Principal,
                     restricted_terms: set[str] | None = None
                     ) -> tuple[str, Any, AnswerabilityReport | None] | None:
        """``quote`` as the answer: its text, grounding report and answerability check (the coverage and similarity
        thresholds waived: the judge answered for them), or ``None`` when it is not grounded or a named rule
        refuses it (answer type, sibling code, unknown name)."""
        text = format_quotes([quote])
        report = verify(text, hits, self.cfg.min_support_sentence, self.cfg.grounding, self.embedder,
                        self.cfg.min_embedding_support)
        if report.support_ratio < self.cfg.min_support_ratio:
            return None
        check = self.answerability(question, asked, report, hits, who, restricted_terms=restricted_terms)
        if check is not None and not check.answerable:
            if not check.on_thresholds:
                return None
            check = replace(check, answerable=True, reason=None, parts=())
        return text, report, check

    def term_weights(self, who: Principal) -> TermWeights:
        """IDF over the documents ``who`` may read (cached; recounted when the store changes)."""
        if self._term_weights is None:
            self._term_weights = PermittedTermWeights(self.store)
        return self._term_weights.for_principal(who)

    @property
    def quarantine(self) -> Quarantine:
        if self._quarantine is None:
            self._quarantine = Quarantine(self.store)
        return self._quarantine

    def own_contexts(self, report: Any, hits: Sequence[Hit]) -> list[str]:
        """For each answer sentence, in order, the title and headings of the passage paragraph it was quoted from
        ("" when it comes from no passage)."""
        by_chunk = {h.chunk_id: h for h in hits}
        out = []
        for s in report.sentences:
            hit = by_chunk.get(s.chunk_id) if s.chunk_id else None
            if hit is None:
                out.append("")
                continue
            words = tokenize(s.sentence.text)[:6]
            trail: list[str] = []
            for start, end, heads in paragraph_headings(hit.text):
                para = tokenize(hit.text[start:end])
                if any(para[i:i + len(words)] == words for i in range(len(para))):
                    trail = heads
                    break
            out.append(contexts([self.passage_context(hit), *trail]))
        return out

    def answerability(self, question: str, query: str, report: Any, hits: Sequence[Hit],
                      who: Principal, contexts: Sequence[str] | None = None,
                      similarity_route: bool = True, restricted_terms: set[str] | None = None
                      ) -> AnswerabilityReport | None:
        """Does the grounded reply answer the question? (``None`` when ``answer.answerability`` is off.)
        ``contexts``: :meth:`own_contexts` when the caller has them already; ``similarity_route=False``: the
        reply must pass on coverage (:meth:`restricted_lead`); ``restricted_terms``: the terms of the passages the
        asker may not read that rank among the question's top (:meth:`restricted_terms`), whose words keep their
        weight in coverage however everyday they are."""
        if not self.cfg.answerability:
            return None
        if self._matcher is None and self.embedder is not None:
            self._matcher = WordMatcher(self.embedder, self.cfg.answerability_synonym_zipf,
                                        self.cfg.kinship, self.cfg.answerability_week_parts)
        sentences = [s.sentence.text for s in report.sentences]
        sentence_contexts = list(contexts) if contexts is not None else self.own_contexts(report, hits)
        titles = distinct(sentence_contexts)
        c = self.cfg
        weights = self.term_weights(who)
        quoted = None
        if c.answerability_known_names:
            assert self._term_weights is not None  # built by term_weights()
            by_chunk = {h.chunk_id: h.doc_id for h in hits}
            quoted = self._term_weights.document_terms(
                dict.fromkeys(by_chunk[s.chunk_id] for s in report.sentences if s.chunk_id in by_chunk))
        return assess_answer(c, question, query, sentences, titles, weights, self.embedder, self._matcher,
                             similarity_route=similarity_route, document_terms=quoted,
                             restricted_terms=restricted_terms, sentence_contexts=sentence_contexts)

    def _refusal(self, base: dict[str, Any], reason: str, ratio: float, context_tokens: int, hits: Sequence[Hit],
                 sentences: tuple[SentenceSupport, ...] = (), error: str | None = None, prompt_tokens: int = 0,
                 completion_tokens: int = 0, decided_by: str | None = None) -> Answer:
        """A refusal; ``decided_by`` (:attr:`Answer.decided_by`) defaults to the ``reason`` itself."""
        return Answer(answer_id="", answer=REFUSAL_MESSAGE, refused=True, refusal_reason=reason, support_ratio=ratio,
                      citations=(), context_tokens=context_tokens, prompt_tokens=prompt_tokens,
                      completion_tokens=completion_tokens, context_chunk_ids=tuple(h.chunk_id for h in hits),
                      sentences=sentences, error=error, decided_by=decided_by or reason,
                      **base)

    def _finish(self, who: Principal, tenant: str, result: Answer) -> Answer:
        answer_id = uuid.uuid4().hex
        if self.log_answers:
            answer_id = self.answer_log.add(who.user_id, tenant, result.prompt_version, result.model_id,
                                            result.retrieval_mode, result.refused, result.refusal_reason,
                                            result.support_ratio, [c.chunk_id for c in result.citations],
                                            answer_id=answer_id, decided_by=result.decided_by)
        # Ids and numbers only: chunk text never goes to a log.
        log.info("answer %s for %s: refused=%s reason=%s support=%.3f cited=%s", answer_id, who.user_id,
                 result.refused, result.refusal_reason, result.support_ratio,
                 [c.chunk_id for c in result.citations])
        return replace(result, answer_id=answer_id)

    def feedback(self, answer_id: str, principal: Principal | str, rating: int, comment: str = "") -> None:
        """Store a 1–5 rating and a comment on one of the principal's answers."""
        self.answer_log.feedback(answer_id, self.resolve(principal).user_id, rating, comment)
