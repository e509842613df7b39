"""Does the answer actually address the question? A check that runs after per-sentence grounding.

Grounding (:mod:`ragbench.answer.grounding`) only asks whether the answer's sentences are *supported by* the
context; a model that quotes a true sentence on a related topic ("Can I bring my dog to the office?" answered with
the remote-work rule on office days) passes it. This module asks the other question — whether the sentences
*answer* the question — from three signals that need no extra model:

* **coverage**: the share of the question's salient terms that the answer sentences (or the titles of the
  documents they cite) contain, each term weighted by its inverse document frequency over the documents the asker
  may read, so rare terms (names, numbers, specific nouns) count most and "policy" or "employees" barely count.
  Terms are compared after light suffix stripping (``approves`` = ``approved``). The weights come from permitted
  documents only, so a refusal never depends on text the asker may not see;
* **similarity**: the best cosine between the question and an answer sentence (with an embedder; 0 without);
* **answer type**: a question that asks *who* needs a role or person, *how much* money a currency amount, *how
  many / how long / how often* a number, *when* a time expression, and a question about a *rate* or *percentage*
  a percentage. A reply without an answer of the right kind does not answer the question.

The answer is judged answerable when its type is satisfied and ``coverage ≥ min_coverage`` or
``similarity ≥ min_similarity``; thresholds live in :class:`~ragbench.config.AnswerConfig`
(``answerability_*``). The answer-type lexicons (generic English question words, money, role and time words) live
in :mod:`ragbench.llm.extractive`, whose reader uses them to prefer sentences holding the asked-for kind.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..llm.extractive import ANSWER_TYPES, expected_type, has_type
from ..schema import Acl, Principal
from ..text import tokenize

__all__ = ["ANSWER_TYPES", "AnswerabilityReport", "PermittedTermWeights", "QUESTION_WORDS", "TermWeights", "assess",
           "coverage", "expected_type", "has_type", "salient_terms", "stem", "term_set"]

#: Words of a question that carry no topic (beyond :data:`ragbench.text.STOP_WORDS`): auxiliaries, pronouns,
#: quantifier and frequency words of the question form ("how *many*", "how *long*").
QUESTION_WORDS: frozenset[str] = frozenset(
    """about after again all also am any anything anyone be been before being both can could did do does doing
    done during each else ever every few get gets getting got had if into just me more most my myself need needs
    no nor not now off once only other out over own same should some such too under until up very would yes yet
    may might must shall much many long often whom whose us i'm im ive i've can't cannot please tell know""".split())

_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ed", "ly")


def stem(token: str) -> str:
    """A light suffix strip so that inflections meet (``approves``/``approved``/``approve`` → ``approv``,
    ``dogs`` → ``dog``, ``policies`` → ``policy``); digits and words of ≤ 3 letters are unchanged."""
    if token.isdigit() or len(token) <= 3:
        return token
    if token.endswith(("ies", "ied")) and len(token) > 4:
        return token[:-3] + "y"
    for suffix in _SUFFIXES:
        if len(token) - len(suffix) >= 4 and token.endswith(suffix):
            token = token[: -len(suffix)]
            break
    else:
        if token.endswith(("sses", "xes", "zes", "ches", "shes")):
            token = token[:-2]
        elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
    if len(token) > 4 and token.endswith("e"):
        token = token[:-1]
    return token


def salient_terms(question: str) -> list[str]:
    """Stemmed content terms of a question, first-appearance order, no duplicates."""
    out = [stem(t) for t in tokenize(question, stopwords=True)
           if t not in QUESTION_WORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(out))


def term_set(text: str) -> set[str]:
    """Stemmed content terms of any text."""
    return {stem(t) for t in tokenize(text, stopwords=True)}


class TermWeights:
    """Inverse document frequencies ``ln((N + 1) / (df + 0.5))`` over a set of documents (a term in no document
    gets the largest weight)."""

    def __init__(self, df: Mapping[str, int], n_docs: int) -> None:
        self.df = dict(df)
        self.n_docs = int(n_docs)

    @classmethod
    def from_term_sets(cls, sets: Iterable[set[str]]) -> "TermWeights":
        df: dict[str, int] = {}
        n = 0
        for terms in sets:
            n += 1
            for t in terms:
                df[t] = df.get(t, 0) + 1
        return cls(df, n)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> "TermWeights":
        return cls.from_term_sets(term_set(t) for t in texts)

    def __call__(self, term: str) -> float:
        return math.log((self.n_docs + 1) / (self.df.get(term, 0) + 0.5))


class PermittedTermWeights:
    """:class:`TermWeights` over the documents (title and text) of a store that a principal may read.

    Term sets are read once and re-read only when the store's documents change (ids, content hashes or ACLs);
    the weights are cached per principal. Restricting the counts to permitted documents keeps every refusal
    decision independent of text the asker may not see."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._signature: str | None = None
        self._docs: list[tuple[Acl, set[str]]] = []
        self._cache: dict[Principal, TermWeights] = {}

    def _refresh(self) -> None:
        rows = [tuple(r) for r in self.store.query("SELECT doc_id, sha256, acl FROM documents ORDER BY doc_id")]
        signature = hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()
        if signature == self._signature:
            return
        self._docs = [(d.acl, term_set(f"{d.title}\n{d.text}")) for d in self.store.documents()]
        self._cache = {}
        self._signature = signature

    def for_principal(self, principal: Principal) -> TermWeights:
        self._refresh()
        if principal not in self._cache:
            self._cache[principal] = TermWeights.from_term_sets(t for acl, t in self._docs if acl.allows(principal))
        return self._cache[principal]


def coverage(question_terms: Sequence[str], answer_terms: set[str], weights: TermWeights) -> float:
    """IDF-weighted share of ``question_terms`` found in ``answer_terms`` (1.0 for a question without terms)."""
    total = sum(weights(t) for t in question_terms)
    if total <= 0:
        return 1.0
    return sum(weights(t) for t in question_terms if t in answer_terms) / total


# ------------------------------------------------------------------------------------------ the check


@dataclass(frozen=True)
class AnswerabilityReport:
    """The signals and the verdict; ``reason`` says why an answer was judged not to address the question."""

    coverage: float
    similarity: float
    expected_type: str | None
    type_found: bool
    answerable: bool
    reason: str | None = None


def assess(question: str, query: str, sentences: Sequence[str], titles: Sequence[str], weights: TermWeights,
           embedder: object | None = None, min_coverage: float = 0.5, min_similarity: float = 0.45,
           check_type: bool = True) -> AnswerabilityReport:
    """Judge whether ``sentences`` (the answer, markers removed) answer the question.

    ``question`` is what the user typed (its form decides the answer type); ``query`` is what was retrieved with
    (a follow-up rewritten with its subject), used for coverage and similarity. ``titles`` are the titles of the
    documents the answer cites."""
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        return AnswerabilityReport(0.0, 0.0, None, False, False, "no answer sentences")
    kind = expected_type(question)
    found = has_type(" ".join(sentences), kind, question)
    answer_terms = set().union(*(term_set(s) for s in [*sentences, *titles]))
    cov = coverage(salient_terms(query), answer_terms, weights)
    sim = 0.0
    if embedder is not None:
        vecs = np.asarray(embedder.embed([query, *sentences]), dtype=np.float32)
        sim = float(np.max(vecs[1:] @ vecs[0]))
    if check_type and not found:
        return AnswerabilityReport(cov, sim, kind, False, False, f"no {kind} in the answer")
    if cov >= min_coverage or sim >= min_similarity:
        return AnswerabilityReport(cov, sim, kind, found, True)
    return AnswerabilityReport(cov, sim, kind, found, False,
                               f"coverage {cov:.2f} < {min_coverage} and similarity {sim:.2f} < {min_similarity}")
