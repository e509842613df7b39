"""Measured consistency: how far a sub-topic's sources agree in what they state.

1. **Key facts** of a source are its sentences that mention the sub-topic's terms (best ``k`` by term overlap, in
   document order).
2. Two sources' **agreement** is the symmetric best-match cosine between their facts' embeddings:
   ``½ (mean_f max_g cos(f, g) + mean_g max_f cos(f, g))``, clipped to [0, 1].
3. A **contradiction** is a pair of facts about the same subject (Jaccard overlap of their content words, numbers
   and negations left out, ≥ ``subject_overlap``) where one is negated and the other is not, or where each states
   a number the other does not ("40 %" against "10 %"). A contradicting source pair counts as 0 agreement.
4. ``consistency`` is the mean agreement over all source pairs; one source alone is *uncorroborated* and scores
   ``single_source_consistency``; no source scores 0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import numpy as np

from ..retrieval.base import Embedder
from ..text import STOP_WORDS, split_sentences, tokenize

_NEGATION = re.compile(r"\b(?:not|no|never|none|cannot|neither|nor|without)\b|n[’']t\b", re.IGNORECASE)
_NEGATION_WORDS = frozenset({"not", "no", "never", "none", "cannot", "neither", "nor", "without", "t"})
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
MIN_FACT_TOKENS = 4


def key_facts(text: str, terms: Sequence[str], k: int = 3, subject: Sequence[str] = (),
              min_share: float = 0.0) -> list[str]:
    """Up to ``k`` evidence sentences for a sub-topic, in document order.

    A sentence qualifies when it is a statement (ends with ``.``, ``!`` or ``?``; at least four words), has at
    least one ``subject`` word (if any are given) and a share of ``terms``
    that is positive and ≥ ``min_share``; the best ``k`` by share of all words (ties: earlier first) are kept."""
    wanted = {t.lower() for t in terms}
    subj = {t.lower() for t in subject}
    everything = wanted | subj
    if not everything:
        return []
    scored: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    for pos, sentence in enumerate(split_sentences(text)):
        toks = set(tokenize(sentence))
        # A key fact is a statement: headings and captions (no closing punctuation) are left out.
        if len(toks) < MIN_FACT_TOKENS or sentence in seen or sentence[-1] not in ".!?":
            continue
        seen.add(sentence)
        if subj and not subj & toks:
            continue
        if wanted:
            share = len(wanted & toks) / len(wanted)
            if share <= 0 or share < min_share:
                continue
        scored.append((len(everything & toks) / len(everything), pos, sentence))
    best = sorted(scored, key=lambda s: (-s[0], s[1]))[:k]
    return [s for _, _, s in sorted(best, key=lambda s: s[1])]


def numbers_in(sentence: str) -> frozenset[float]:
    return frozenset(float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(sentence))


def is_negated(sentence: str) -> bool:
    return _NEGATION.search(sentence) is not None


def subject_words(sentence: str) -> frozenset[str]:
    """Content words: stop words, negations and numbers left out."""
    return frozenset(t for t in tokenize(sentence)
                     if t not in STOP_WORDS and t not in _NEGATION_WORDS and not t.isdigit())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def contradiction_reason(a: str, b: str, subject_overlap: float = 0.5) -> str | None:
    """Why facts ``a`` and ``b`` contradict (``"negation"`` or ``"conflicting numbers"``), or ``None``."""
    if jaccard(subject_words(a), subject_words(b)) < subject_overlap:
        return None
    if is_negated(a) != is_negated(b):
        return "negation"
    na, nb = numbers_in(a), numbers_in(b)
    if na and nb and (na - nb) and (nb - na):
        return "conflicting numbers"
    return None


@dataclass(frozen=True)
class SourceFacts:
    """The key facts of one source; ``key`` is its URL, ``label`` a short name for reports."""

    key: str
    label: str
    facts: tuple[str, ...]


@dataclass(frozen=True)
class Contradiction:
    source_a: str
    source_b: str
    fact_a: str
    fact_b: str
    reason: str

    def describe(self) -> str:
        return f"{self.source_a} vs {self.source_b} ({self.reason}): {self.fact_a!r} / {self.fact_b!r}"


@dataclass(frozen=True)
class Consistency:
    value: float
    pairs: int
    mean_similarity: float
    contradictions: tuple[Contradiction, ...]
    notes: tuple[str, ...]


class ConsistencyMeter:
    """Measures consistency with an :class:`Embedder`; fact vectors are cached for the meter's lifetime."""

    def __init__(self, embedder: Embedder, subject_overlap: float = 0.5, single_source: float = 0.5) -> None:
        self.embedder = embedder
        self.subject_overlap = subject_overlap
        self.single_source = single_source
        self._cache: dict[str, np.ndarray] = {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = np.asarray(self.embedder.embed(missing), dtype=np.float32)
            for t, v in zip(missing, vecs):
                self._cache[t] = v
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.embedder.dim), np.float32)

    def agreement(self, a: SourceFacts, b: SourceFacts) -> float:
        """Symmetric best-match cosine between the two sources' facts, clipped to [0, 1]."""
        if not a.facts or not b.facts:
            return 0.0
        sims = self._vectors(list(a.facts)) @ self._vectors(list(b.facts)).T
        value = 0.5 * (float(sims.max(axis=1).mean()) + float(sims.max(axis=0).mean()))
        return min(1.0, max(0.0, value))

    def contradictions(self, a: SourceFacts, b: SourceFacts) -> list[Contradiction]:
        out = []
        for fa in a.facts:
            for fb in b.facts:
                reason = contradiction_reason(fa, fb, self.subject_overlap)
                if reason:
                    out.append(Contradiction(a.label, b.label, fa, fb, reason))
        return out

    def measure(self, sources: Sequence[SourceFacts]) -> Consistency:
        if not sources:
            return Consistency(0.0, 0, 0.0, (), ("no sources → consistency 0",))
        if len(sources) == 1:
            return Consistency(self.single_source, 0, 0.0, (),
                               (f"one source, uncorroborated → consistency {self.single_source:.2f}",))
        agreements: list[float] = []
        sims: list[float] = []
        found: list[Contradiction] = []
        for a, b in combinations(sources, 2):
            sim = self.agreement(a, b)
            sims.append(sim)
            c = self.contradictions(a, b)
            found.extend(c)
            agreements.append(0.0 if c else sim)
        value = float(np.mean(agreements))
        bad_pairs = len({(c.source_a, c.source_b) for c in found})
        notes = [f"{len(agreements)} source pairs, mean fact similarity {np.mean(sims):.4f}; "
                 f"{bad_pairs} contradicting pair(s) counted as 0 → consistency {value:.4f}"]
        notes += [f"contradiction: {c.describe()}" for c in found]
        return Consistency(value, len(agreements), float(np.mean(sims)), tuple(found), tuple(notes))
