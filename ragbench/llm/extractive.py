"""A deterministic extractive chat model: answers by quoting the context sentences that best match the question.

It restates the Enterprise source's ``TemplateChatModel`` (seed-behaviour 3.7) with three fixes:

* the question is the *actual* question (``meta["rag"]``, see :mod:`ragbench.llm.context`), not the whole
  formatted prompt, so context tokens no longer count as question tokens;
* a sentence must share at least one content word with the question even when only one passage is kept, and when
  no sentence does the model replies :data:`REFUSAL_MESSAGE` instead of pasting the first passage;
* sentences scoring below ``sentence_ratio`` × the best sentence are dropped, duplicates from overlapping chunks
  are merged, and citation markers inside document text are removed, so a document cannot forge a citation;
* passages carrying prompt-injection text are quarantined (never quoted), and an optional embedder adds the
  question–sentence cosine to the lexical overlap, so paraphrased questions find their sentence;
* Markdown headings and FAQ questions are never quoted, and sentences lacking the kind of answer the question asks
  for (a number for "how many", a role for "who", money for "how much … cost", an instruction for "what should I
  do") score × ``type_penalty``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from ..errors import ConfigError, ModelError
from ..schema import Message
from ..text import count_tokens, normalize_whitespace, tokenize
from .base import ChatModel, Completion
from .answer_types import asks_for_action, expected_type, has_type, is_instruction, under_headers
from .context import (REFUSAL_MESSAGE, Passage, read_rag_extras, read_rag_meta, split_answer_sentences,
                      strip_markers)
from .parts import question_parts
from .quarantine import addresses_ai
from .signals import (amount_terms_met, conflicts, contexts, coverage, join_wrapped_lines, modifier_conflicts,
                      paragraph_headings, paragraphs, range_conflicts, salient_terms, stem, table_headers, term_set,
                      value_conflicts, weight_lookup, words)

_LINE = re.compile(r"^\[(\d+)\]\s*(\S.*)$")
_MARKUP = re.compile(r"\*\*|__|`")
_LEAD = re.compile(r"^(?:#+|[-*+>|]|\d+[.)])\s+")

_NAME = r"(?P<name>[A-Z][\w'’-]*(?:\s+[A-Z0-9][\w'’-]*)*)"
#: "What is Project Kingfisher?": a question asking what a named thing is.
_DEFINITION_Q = re.compile(r"^\s*[Ww]hat\s+(?:is|are|was|were)\s+(?:the\s+)?" + _NAME + r"\s*\??\s*$")
#: The same, also "What's <Name>?" and "What is <Name> about?" (with ``title_definitions``).
_DEFINITION_Q_LOOSE = re.compile(r"^\s*[Ww]hat(?:['’]s|\s+(?:is|are|was|were))\s+(?:the\s+)?" + _NAME
                                 + r"(?:\s+about)?\s*\??\s*$")


def defined_name(question: str, loose: bool = False) -> str | None:
    """The name a "What is <Name>?" question asks about ("Project Kingfisher"), else ``None``; with ``loose`` also
    "What's <Name>?" and "What is <Name> about?"."""
    m = (_DEFINITION_Q_LOOSE if loose else _DEFINITION_Q).match(question)
    return m.group("name") if m else None


def title_definition(title: str, name: str) -> str | None:
    """The part of a document title that says what ``name`` is, from the name on ("Board paper: Project Kittiwake,
    acquisition of Marlowe Brook Dental" → "Project Kittiwake, acquisition of Marlowe Brook Dental"), else ``None``:
    the name must be followed by a comma, colon or dash and at least two words."""
    m = re.search(r"(?<!\w)" + re.escape(name) + r"(?:\s*[,:—–]\s*|\s+-\s+)(?P<rest>\w[^.]*)", title, re.IGNORECASE)
    if m is None or len(m.group("rest").split()) < 2:
        return None
    return normalize_whitespace(title[m.start():m.end()]).rstrip(" ,;:")


def defines(sentence: str, name: str) -> bool:
    """A heading that defines ``name``: the name, a dash or colon, then what it is ("Project Kingfisher — proposed
    acquisition of Tolland Coaches Ltd"). Headings are never quoted, except this one for a question asking what
    the name is."""
    return bool(re.match(re.escape(name) + r"(?:\s*[—–:]\s*|\s+-\s+)\w", sentence, re.IGNORECASE))


def is_injection(text: str) -> bool:
    """True when ``text`` contains instructions addressed to an AI model (prompt injection): the quarantine's
    ``addressed-to-ai`` rules, applied again to every passage the reader is handed (defence in depth for callers
    that did not quarantine the passages)."""
    return addresses_ai(text)


_T = TypeVar("_T")


def best_copies(scored: Iterable[tuple[str, float, _T]]) -> list[tuple[float, _T]]:
    """``(score, item)`` per distinct sentence (case-insensitive) of ``(sentence, score, item)``: overlapping chunks
    repeat sentences, and the better-scored copy is kept (the first seen on ties), in first-seen order."""
    best: dict[str, tuple[float, _T]] = {}
    for sentence, score, item in scored:
        key = sentence.lower()
        if key not in best or score > best[key][0]:
            best[key] = (score, item)
    return list(best.values())


def clean_sentence(sentence: str) -> str:
    """A sentence without markdown emphasis, heading or bullet marks, whitespace normalised."""
    s = normalize_whitespace(_MARKUP.sub("", sentence))
    prev = None
    while prev != s:
        prev, s = s, _LEAD.sub("", s).strip()
    return s


_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: A bold run-in heading at the start of a paragraph or line: "**Limits.** The standard card …", also when the
#: chunk ends inside it ("… with their manager.\n\n**Core hours.").
_RUN_IN = re.compile(r"(?:^|\n)[ \t]*(?:[-*+][ \t]+)?\*\*([^*\n]{1,80}?[.!?:])(?:\*\*|\s*$)")
#: A chunk that opens inside a bold run-in heading: "Project Kingfisher.** The board …" (cut after "**5. ").
_CUT_RUN_IN = re.compile(r"\A[ \t]*([^*\n]{1,80}?[.!?:])\*\*")


def headings(text: str) -> set[str]:
    """Lower-cased, cleaned Markdown headings of ``text``: ``#`` lines, short bold run-in headings (≤ 8 words)
    that open a paragraph, and table header lines."""
    out = {clean_sentence(m.group(1)).lower() for m in _HEADING_LINE.finditer(text)}
    out |= {clean_sentence(m.group(1)).lower() for m in (*_RUN_IN.finditer(text), *_CUT_RUN_IN.finditer(text))
            if len(m.group(1).split()) <= 8}
    return out | {clean_sentence(h).lower() for h in table_headers(text)}


@dataclass(frozen=True)
class Quote:
    """A quotable sentence as the reader ranks it: its ``score``, passage ``n`` (the ``[n]`` marker) and position
    (``index``), its ``evidence`` terms (the sentence's, its title's and headings') and the ``context`` it was read
    in (title and headings); ``read`` is the sentence as the type test reads it (a table row's cells under their
    column headers)."""

    score: float
    passage_score: float
    n: int
    index: int
    sentence: str
    evidence: frozenset[str] = frozenset()
    context: str = ""
    read: str = ""


@dataclass(frozen=True)
class SentenceSignals:
    """What the reader's score of one quotable sentence is made of: the question's IDF-weighted coverage by the
    sentence alone (a table row read under its column headers) and with its title and headings (``lexical`` is
    their mean), by the sentence of the user's own words only (a follow-up's carried subject left out), the
    question–sentence cosine, the passage's retrieval score as a share of the best, whether the question asks for a
    kind of answer and the sentence holds it, a sibling conflict, and the row weight (passage share, × the type
    penalties)."""

    sentence: str
    n: int
    index: int
    own_coverage: float
    context_coverage: float
    cosine: float
    passage_share: float
    conflict: bool
    row_weight: float
    evidence: frozenset[str] = frozenset()
    asked_coverage: float = 0.0
    typed: bool = False
    asks_type: bool = False

    @property
    def lexical(self) -> float:
        return 0.5 * (self.own_coverage + self.context_coverage)


@dataclass(frozen=True)
class _Row:
    """A quotable sentence; ``read`` is the sentence as the type test and the coverage read it (a table row's cells
    under their column headers, :func:`under_headers`)."""

    passage: Passage
    index: int
    sentence: str
    weight: float
    context: str
    read: str


class ExtractiveChatModel(ChatModel):
    """Quote the best-supported context sentences and cite each as ``[n]``.

    At most ``max_passages`` passages (by score) are read, those scoring ≥ ``passage_ratio`` × the best. A sentence's
    relevance is ``r = overlap + semantic_weight × cos`` where ``overlap = |Q ∩ S| / |Q|`` on content-word sets (a
    table row's words include its column headers) and ``cos`` is the cosine of question and sentence embeddings
    (only with an ``embedder``); its score is
    ``(r + 0.05) × (0.4 + 0.6 × passage score / best score)``. Sentences need ``r ≥ min_relevance`` (and a
    positive ``r``) and ``min_sentence_tokens`` content words; at most ``max_sentences`` sentences scoring ≥
    ``sentence_ratio`` × the best are emitted in context order, plus up to ``same_passage_sentences`` more from
    passages already quoted that score ≥ ``same_passage_ratio`` × the best (see :meth:`_select`). Passages that
    carry prompt-injection text (instructions addressed to an AI) are never quoted; with ``skip_headings`` neither
    are headings nor sentences ending in "?"; a sentence without an answer of the question's
    :func:`expected_type` has its score multiplied by ``type_penalty`` (1 switches that off). With
    ``title_definitions``, a question asking what a name is may be answered by the passage's document title when
    the title says what the name is (:func:`title_definition`). With ``join_wrapped``, a hard-wrapped paragraph's
    line breaks are read as spaces before it is split into sentences (:func:`join_wrapped_lines`); otherwise every
    line is split apart.
    """

    def __init__(self, max_passages: int = 5, passage_ratio: float = 0.35, max_sentences: int = 3,
                 sentence_ratio: float = 0.5, min_relevance: float = 0.0, embedder: Any = None,
                 semantic_weight: float = 1.0, min_sentence_tokens: int = 2, model_id: str | None = None,
                 type_penalty: float = 0.5, skip_headings: bool = True, conflict_penalty: float = 0.25,
                 carried_weight: float = 0.5, min_gain: float = 0.25, gain_ratio: float = 0.4,
                 same_passage_sentences: int = 0, same_passage_ratio: float = 0.5,
                 title_definitions: bool = False, synonym_zipf: float = 0.0,
                 kinship: bool = False, join_wrapped: bool = False) -> None:
        self.max_passages = max_passages
        self.passage_ratio = passage_ratio
        self.max_sentences = max_sentences
        self.sentence_ratio = sentence_ratio
        self.min_relevance = min_relevance
        self.embedder = embedder
        self.semantic_weight = semantic_weight
        self.min_sentence_tokens = min_sentence_tokens
        self._model_id = model_id
        self.type_penalty = type_penalty
        self.skip_headings = skip_headings
        self.conflict_penalty = conflict_penalty
        self.carried_weight = carried_weight
        self.min_gain = min_gain
        self.gain_ratio = gain_ratio
        self.same_passage_sentences = same_passage_sentences
        self.same_passage_ratio = same_passage_ratio
        self.title_definitions = title_definitions
        self.synonym_zipf = synonym_zipf
        self.kinship = kinship
        self.join_wrapped = join_wrapped

    @property
    def model_id(self) -> str:  # type: ignore[override]
        if self._model_id:
            return self._model_id
        if self.embedder is None:
            return "extractive-v1"
        return f"extractive-v1+{getattr(self.embedder, 'model_id', type(self.embedder).__name__)}"

    def _check(self) -> None:
        if self.same_passage_sentences < 0:
            raise ConfigError(f"same_passage_sentences must be ≥ 0, found {self.same_passage_sentences}. "
                              "Fix: pass 0 (off) or a positive integer.")
        if self.max_passages < 1 or self.max_sentences < 1 or self.min_sentence_tokens < 1:
            raise ConfigError(f"max_passages, max_sentences and min_sentence_tokens must be ≥ 1, found "
                              f"{self.max_passages}, {self.max_sentences}, {self.min_sentence_tokens}. "
                              "Fix: pass positive integers.")
        for name in ("passage_ratio", "sentence_ratio", "type_penalty", "conflict_penalty", "carried_weight",
                     "min_gain", "gain_ratio", "same_passage_ratio"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], found {v}. Fix: pass a fraction.")
        if self.min_relevance < 0 or self.semantic_weight < 0:
            raise ConfigError(f"min_relevance and semantic_weight must be ≥ 0, found {self.min_relevance} and "
                              f"{self.semantic_weight}.")

    def complete(self, messages: Sequence[Message]) -> Completion:
        self._check()
        if not messages:
            raise ModelError("no messages to answer. Fix: pass at least one user message.")
        parsed = read_rag_meta(messages)
        if parsed is None:
            question, passages = _from_plain_messages(messages)
        else:
            question, passages = parsed
        focus, weights = read_rag_extras(messages)
        text = self.compose(question, passages, focus, weights)
        prompt_tokens = sum(count_tokens(m.content) for m in messages)
        return Completion(text, prompt_tokens, count_tokens(text), self.model_id)

    def _kept(self, passages: Sequence[Passage], n_parts: int = 1) -> tuple[list[int], float]:
        """The passages read: the ``max_passages`` best (per part of a multi-part question) scoring ≥
        ``passage_ratio`` × the best, and the best score."""
        # A passage that is nothing but text addressed to an AI neither counts nor sets the best score.
        usable = [i for i, p in enumerate(passages)
                  if any(not is_injection(p.text[s:e]) for s, e in paragraphs(p.text))]
        order = sorted(usable, key=lambda i: -passages[i].score)[: self.max_passages * max(n_parts, 1)]
        if not order:
            return [], 1.0
        best = passages[order[0]].score
        kept = order if best <= 0 else [i for i in order if passages[i].score >= self.passage_ratio * best]
        return kept, best

    def _rows(self, question: str, passages: Sequence[Passage], kept: Sequence[int], best: float) -> list[_Row]:
        """Quotable sentences of the kept passages, each with its evidence context and passage weight."""
        top = best if best > 0 else 1.0
        kind = expected_type(question) if self.type_penalty < 1.0 else None
        action = self.type_penalty < 1.0 and asks_for_action(question)
        named = defined_name(question, loose=self.title_definitions)
        rows: list[_Row] = []
        for i in kept:
            p = passages[i]
            weight = 0.4 + 0.6 * max(p.score, 0.0) / top if best > 0 else 1.0
            # A title that says what the asked name is ("Board paper: Project Kittiwake, acquisition of …") answers
            # "What is Project Kittiwake?" when no sentence of the passage does; it is quoted like a sentence.
            title = p.context.split(" . ")[0]
            said = title_definition(title, named) if self.title_definitions and named and title else None
            if said is not None:
                rows.append(_Row(p, 0, said, weight, p.context, under_headers(said, p.context)))
            skip = headings(p.text) if self.skip_headings else set()
            index = 0
            for start, end, trail in paragraph_headings(p.text):
                para = p.text[start:end]
                if is_injection(para):
                    continue  # text addressed to an AI is never quoted (the service also redacts flagged spans)
                context = contexts([p.context, *trail])
                if self.join_wrapped:
                    para = join_wrapped_lines(para)
                for sentence in _sentences(_MARKUP.sub("", strip_markers(para))):
                    index += 1
                    sentence = clean_sentence(sentence)
                    if self.skip_headings and (sentence.lower() in skip or sentence.endswith(("?", ":"))) \
                            and not (named and defines(sentence, named)):
                        continue  # a heading, a question (FAQ) or a list's lead-in never answers by itself
                    if len(tokenize(sentence, stopwords=True)) < self.min_sentence_tokens:
                        continue
                    here = weight
                    read = under_headers(sentence, context)
                    if kind is not None and not has_type(read, kind, question):
                        here = weight * self.type_penalty  # e.g. no number for "how many …?"
                    if action and not is_instruction(sentence):
                        here *= self.type_penalty  # "what now?" is answered by "Report it …", not by the cause
                    rows.append(_Row(p, index, sentence, here, context, read))
        return rows

    def compose(self, question: str, passages: Sequence[Passage], focus: str | None = None,
                weights: Mapping[str, float] | None = None) -> str:
        """The extractive answer for ``question`` over ``passages`` (or :data:`REFUSAL_MESSAGE`).

        ``focus`` is the user's own wording of a rewritten follow-up (its terms weigh fully, carried terms
        ``carried_weight``; qualifier conflicts are checked against it); ``weights`` are IDF weights of terms."""
        ranked = self.rank(question, passages, focus, weights)
        if not ranked:
            return REFUSAL_MESSAGE
        # A part's own ranking reads the passages the whole question reads (as many per part).
        n_parts = len(question_parts(question))
        chosen = self._select(ranked, salient_terms(question), self._weight(question, focus, weights),
                              question_parts(focus or question),
                              lambda part: self.rank(part, passages, None, weights, n_parts))
        return format_quotes(chosen)

    def _weight(self, question: str, focus: str | None,
                weights: Mapping[str, float] | None) -> Callable[[str], float]:
        """A term's weight: its IDF, × ``carried_weight`` when only the carried subject of a follow-up has it."""
        own = set(salient_terms(focus)) if focus else set(salient_terms(question))
        idf = weight_lookup(weights)
        return lambda t: idf(t) * (1.0 if t in own else self.carried_weight)

    def rank(self, question: str, passages: Sequence[Passage], focus: str | None = None,
             weights: Mapping[str, float] | None = None, n_parts: int | None = None) -> list[Quote]:
        """Every quotable sentence of the passages read, best first (what :meth:`compose` picks from; empty when
        nothing is quotable). Arguments as :meth:`compose`; ``n_parts`` sets how many parts' worth of passages are
        read (default: the question's own parts)."""
        scored = ((row.sentence, score, Quote(score, row.passage.score, row.passage.n, row.index, row.sentence,
                                              sig.evidence, row.context, row.read))
                  for row, sig in self._candidates(question, passages, focus, weights, n_parts)
                  if (score := self.sentence_score(sig)) is not None)
        return sorted((q for _, q in best_copies(scored)), key=lambda c: (-c.score, -c.passage_score))

    def sentence_score(self, sig: SentenceSignals) -> float | None:
        """The score :meth:`rank` gives a sentence with these signals; ``None`` when it is not relevant enough to
        quote."""
        relevance = sig.lexical + self.semantic_weight * sig.cosine
        if relevance <= 0 or relevance < self.min_relevance:
            return None
        score = (relevance + 0.05) * sig.row_weight
        return score * self.conflict_penalty if sig.conflict else score

    def _candidates(self, question: str, passages: Sequence[Passage], focus: str | None,
                    weights: Mapping[str, float] | None,
                    n_parts: int | None = None) -> list[tuple[_Row, SentenceSignals]]:
        """Every quotable sentence of the passages read, with the signals its score is made of."""
        kept, best = self._kept(passages, len(question_parts(question)) if n_parts is None else n_parts)
        terms = salient_terms(question)
        if not kept or not (terms or self.embedder is not None):
            return []
        weight = self._weight(question, focus, weights)
        asked = focus or question
        rows = self._rows(asked, passages, kept, best)
        if not rows:
            return []
        parts = question_parts(asked)
        synonyms = self._synonyms(question)
        out = []
        for row, c in zip(rows, self._cosines(question, [r.sentence for r in rows])):
            # A band holding the asked amount answers it ("Up to £1 million" for a £400,000 contract). A table row
            # says what its column headers say of its cells ("Adult peak £11.90" in the row of The Orrery).
            sent_terms = term_set(row.read) | amount_terms_met(asked, row.sentence)
            sent_terms |= {t for t, syn in synonyms.items() if syn & sent_terms}
            evidence = sent_terms | term_set(row.context)
            # The sentence's own words count fully, its title and headings half (they describe the section).
            own_cov = coverage(terms, sent_terms, weight) if terms else 0.0
            with_context = coverage(terms, evidence, weight) if terms else 0.0
            # Answers a sibling of what was asked (P1 for P4, full- for part-time, annual for bereavement leave).
            # A modifier conflict must come from the sentence itself: a title's or heading's modifiers describe the
            # whole section ("suspicious supplier email" under a question about the "fake supplier email").
            # A band of money that excludes the asked amount is the rule for another amount ("Up to £250,000"
            # for a £400,000 contract).
            # A sibling code or compound contradicts the whole question (the answerability check refuses on it);
            # the ranking-only signals bind a sentence only to the part of a multi-part question it may answer.
            conflict = bool(conflicts(asked, f"{row.sentence} . {row.context}", modifiers=False)
                            or all(_ranks_down(part, row.sentence) for part in parts))
            out.append((row, SentenceSignals(
                sentence=row.sentence, n=row.passage.n, index=row.index, own_coverage=own_cov,
                context_coverage=with_context, cosine=c,
                passage_share=max(row.passage.score, 0.0) / best if best > 0 else 1.0,
                conflict=conflict, row_weight=row.weight, evidence=frozenset(evidence))))
        return out

    def _synonyms(self, question: str) -> dict[str, frozenset[str]]:
        """Question term → the stems of its WordNet synonyms, for words rarer than ``synonym_zipf`` (none when 0): a
        sentence holding one meets the term in the reader's coverage ("wine" for "vino"). Only the ranking reads it.
        With ``kinship``, a family word's relation ("grandparent" for "grandad") counts as its synonyms."""
        found: dict[str, frozenset[str]] = {}
        if self.kinship:
            from ..answer.kinship import relation_stems

            found = {stem(t): relation_stems(t) for t in words(question, stopwords=True)}
        if self.synonym_zipf > 0:
            from ..answer.synonyms import rare_synonym_stems

            for t in words(question, stopwords=True):
                found[stem(t)] = found.get(stem(t), frozenset()) | rare_synonym_stems(t, self.synonym_zipf)
        return {t: syn for t, syn in found.items() if syn}

    def signals(self, question: str, passages: Sequence[Passage], focus: str | None = None,
                weights: Mapping[str, float] | None = None) -> list[SentenceSignals]:
        """The signals behind :meth:`rank`'s score of every quotable sentence (arguments as :meth:`compose`), for
        studies of the ranking such as ``benchmarks/answer_sentence_ranker.py``; empty when nothing is quotable."""
        # What only such studies read is worked out here, off the answer path.
        terms = salient_terms(question)
        weight = self._weight(question, focus, weights)
        asked = focus or question
        own = set(salient_terms(focus)) if focus else set(terms)
        kind = expected_type(asked)
        out = []
        for row, sig in self._candidates(question, passages, focus, weights):
            said = term_set(sig.sentence) | amount_terms_met(asked, sig.sentence)
            typed = kind is not None and has_type(row.read, kind, asked)
            out.append(replace(sig, asked_coverage=coverage([t for t in terms if t in own], said, weight)
                               if terms else 0.0, typed=typed,
                               asks_type=kind is not None))
        return out

    def _select(self, ranked: Sequence[Quote], terms: Sequence[str], weight: Callable[[str], float],
                parts: Sequence[str], rank_part: Callable[[str], Sequence[Quote]]) -> list[Quote]:
        """The best sentence, then (up to ``max_sentences``) those scoring ≥ ``sentence_ratio`` × the best, or
        from another passage adding ≥ ``min_gain`` of the question's weight not yet covered while scoring ≥
        ``gain_ratio`` × the best (maximal marginal coverage: the second half of a two-part question). Then, for
        each of several ``parts`` that no chosen sentence answers, a sentence that does (see
        :meth:`_complete_parts`; ``rank_part`` ranks a part's own words). Last, up to ``same_passage_sentences``
        more from passages already quoted, scoring ≥ ``same_passage_ratio`` × the best: they cite nothing new."""
        chosen = [ranked[0]]
        covered = set(ranked[0].evidence)
        total = sum(weight(t) for t in terms) or 1.0
        best = ranked[0].score
        while len(chosen) < self.max_sentences:
            pick, pick_value = None, 0.0
            for c in ranked:
                if c in chosen:
                    continue
                gain = sum(weight(t) for t in terms if t in c.evidence and t not in covered) / total
                near = c.score >= self.sentence_ratio * best
                adds = (gain >= self.min_gain and c.score >= self.gain_ratio * best
                        and all(c.n != x.n for x in chosen))
                value = c.score * (1.0 + gain)  # prefer what the answer does not cover yet
                if (near or adds) and value > pick_value:
                    pick, pick_value = c, value
            if pick is None:
                break
            chosen.append(pick)
            covered |= pick.evidence
        if len(parts) > 1:
            self._complete_parts(chosen, ranked, parts, rank_part)
        # An answer often spans neighbouring rows or list items of one passage ("The appeal was heard on …" and
        # "The appeal was not upheld."); another sentence of a passage already quoted adds no citation.
        if self.same_passage_sentences:
            quoted = {c.n for c in chosen}
            extra = [c for c in ranked
                     if c not in chosen and c.n in quoted and c.score >= self.same_passage_ratio * best]
            chosen.extend(extra[: self.same_passage_sentences])
        return chosen

    def _complete_parts(self, chosen: list[Quote], ranked: Sequence[Quote], parts: Sequence[str],
                        rank_part: Callable[[str], Sequence[Quote]]) -> None:
        """Add, per part of a multi-part question that no chosen sentence answers, the best sentence of the part's
        own ranking (``rank_part``) that answers it, when it scores ≥ ``gain_ratio`` ×
        that ranking's best (one more than ``max_sentences`` at most). A sentence answers a part when it holds the
        kind of answer the part asks for (a sum, a date, a person; any, when it asks for none) and shares a term
        with it, headings included: "What is the salary range for grade Q6, and what notice period applies?" had
        been answered with two notice rows, and "How old … to drive one of your vans, and what's the minimum order
        for a nursery delivery?" with the age rows, whose numbers are not the order's."""
        for part in parts:
            if len(chosen) > self.max_sentences:
                break
            kind, own = expected_type(part), salient_terms(part)
            if any(_answers_part(c, part, kind, own) for c in chosen):
                continue
            # Ranked by the whole question, the other part's words decide which sentence comes first.
            pool = rank_part(part)
            top = pool[0].score if pool else 0.0
            # A sentence is one sentence whichever passage's copy a ranking kept (as :func:`best_copies` counts).
            have = {c.sentence.lower() for c in chosen}
            pick = next((c for c in pool if c.sentence.lower() not in have and c.score >= self.gain_ratio * top
                         and _answers_part(c, part, kind, own)), None)
            if pick is not None:
                # The whole question's copy of the sentence, so that later steps see it as chosen.
                chosen.append(next((c for c in ranked if c.sentence.lower() == pick.sentence.lower()), pick))

    def _cosines(self, question: str, sentences: Sequence[str]) -> list[float]:
        if self.embedder is None or self.semantic_weight == 0:
            return [0.0] * len(sentences)
        vecs = np.asarray(self.embedder.embed([question, *sentences]), dtype=np.float32)
        return [float(x) for x in vecs[1:] @ vecs[0]]


def _answers_part(quote: Quote, part: str, kind: str | None, terms: Sequence[str]) -> bool:
    """Does ``quote`` answer this part of a question: hold the ``kind`` of answer it asks for (any, when ``None``)
    and share one of its ``terms``, headings included?"""
    return (kind is None or has_type(quote.read, kind, part)) and any(t in quote.evidence for t in terms)


def format_quotes(chosen: Sequence[Quote]) -> str:
    """The answer text quoting ``chosen`` in context order, each sentence followed by its ``[n]`` marker."""
    out = []
    for pick in sorted(chosen, key=lambda c: (c.n, c.index)):
        # A table row whose cells hold full stops reads as several sentences: each gets the marker, so
        # grounding finds every piece cited.
        pieces = [p for p in split_answer_sentences(pick.sentence) if any(ch.isalnum() for ch in p)]
        for piece in pieces if len(pieces) > 1 else [pick.sentence]:
            # A list item ends in ";" or "," ("- an email sent to the wrong person;"): it ends the sentence.
            sentence = piece if piece[-1] in ".!?" else piece.rstrip(";,").rstrip() + "."
            out.append(f"{sentence} [{pick.n}]")
    return " ".join(out)


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``; a table row is one, whatever full stops its cells hold."""
    out: list[str] = []
    for line in text.split("\n"):
        out.extend([line.strip()] if line.lstrip().startswith("|") else split_answer_sentences(line))
    return [s for s in out if s]


def _ranks_down(asked: str, sentence: str) -> bool:
    """``sentence`` answers a sibling of what ``asked`` asks, by its own words: the head noun under another
    modifier, or a band or a decimal that excludes the asked one."""
    return bool(modifier_conflicts(asked, sentence) or range_conflicts(asked, sentence)
                or value_conflicts(asked, sentence))


def _from_plain_messages(messages: Sequence[Message]) -> tuple[str, list[Passage]]:
    """Without structured context: the last user message is the question and ``[n] text`` lines of the other
    messages are the passages (all scored 1)."""
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        raise ModelError(f"no user message among roles {[m.role for m in messages]}. "
                         "Fix: end the conversation with a user message.")
    passages: list[Passage] = []
    for i, m in enumerate(messages):
        if i == last:
            continue
        for line in m.content.splitlines():
            match = _LINE.match(line.strip())
            if match:
                passages.append(Passage(int(match.group(1)), match.group(2), 1.0))
    return messages[last].content, passages
