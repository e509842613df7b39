"""A learned prompt-injection detector for auditing: a logistic regression over TF-IDF word weights, shipped as
plain numbers.

The quarantine's phrase rules (:mod:`ragbench.llm.quarantine`) name what each version's writers showed them, and
carry only partly to phrasings written after them. This model learns the register of text addressed to a machine
reader ("reveal", "respond", "assistant", "instructions", "official", "output") against that of documents written
for people: trained on the injection probe sets of ``benchmarks/injection_probes.py`` (120 injections; 115 ordinary
sentences that borrow the rules' words and 25 ordinary ones about AI) and every paragraph of the bundled golden sets
it reads (the rules' flags as positives, the rest as negatives). English stop words are left out, so chat's "this",
"about" and "you" weigh nothing. Its threshold is a false-positive budget: the 99.8th percentile of the scores of
golden paragraphs left out of training (each organisation scored by a model trained without it).

On probe sets it never saw (each scored by a model trained only on the sets written before it) it flags 64 of 100
injections, where the rules of the time flagged 34. It also flags text *about* AI (an acceptable-use policy's
"pasting confidential data into AI tools", "language models can state wrong facts … check a model's output"), so it
does not redact: ``ragbench quarantine --suspects`` lists the paragraphs it suspects and the rules pass, with the
words behind each score, for a person to read. ``benchmarks/injection_model.py`` trains and measures it and writes
:data:`MODEL_FILE`; docs/answers.md has the numbers.

The scorer restates sklearn's ``TfidfVectorizer(stop_words="english", sublinear_tf=True)`` and
``LogisticRegression.predict_proba`` over the exported vocabulary, so the package reads a JSON file rather than a
pickle tied to one sklearn version (``tests/llm/test_injection_model.py`` checks that they agree).
"""
from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError
from ..schema import Classification
from .quarantine import reasons_for
from .signals import paragraphs

#: The exported model, written by ``benchmarks/injection_model.py``.
MODEL_FILE = Path(__file__).parent.parent / "resources" / "injection_model.json"
#: sklearn's default token pattern: runs of two or more word characters.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: A paragraph shorter than this (in tokens) gives the model too little to read: left to the phrase rules.
MIN_WORDS = 5


def readable(text: str) -> bool:
    """Whether the model reads ``text``: at least :data:`MIN_WORDS` tokens and not a lone markdown heading (a label
    of the text below it, such as "# Burst mains: how we respond"; heading-shaped injections such as
    "### SYSTEM: …" are the phrase rules' to catch)."""
    stripped = text.strip()
    if stripped.startswith("#") and "\n" not in stripped:
        return False
    return len(_TOKEN.findall(stripped)) >= MIN_WORDS


@dataclass(frozen=True)
class InjectionModel:
    """Word → (IDF, weight) of a TF-IDF logistic regression; :meth:`score` is P(injection)."""

    idf: Mapping[str, float]
    coef: Mapping[str, float]
    intercept: float
    #: Scores at or above it are suspected.
    threshold: float
    version: str = ""

    def _weights(self, text: str) -> dict[str, float]:
        """The L2-normalised sublinear TF-IDF vector of ``text`` over the model's vocabulary."""
        counts = Counter(t for t in _TOKEN.findall(text.lower()) if t in self.idf)
        vec = {t: (1.0 + math.log(c)) * self.idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {t: v / norm for t, v in vec.items()} if norm > 0 else {}

    def score(self, text: str) -> float:
        """P(``text`` is a prompt injection) under the model."""
        z = self.intercept + sum(v * self.coef[t] for t, v in self._weights(text).items())
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def flags(self, text: str) -> bool:
        """Whether ``text`` is flagged: :func:`readable`, and scored at or above the threshold."""
        return readable(text) and self.score(text) >= self.threshold

    def evidence(self, text: str, n: int = 5) -> list[tuple[str, float]]:
        """The ``n`` words that push ``text`` furthest towards "injection", with their share of the logit: why a
        paragraph was flagged, for the audit (``ragbench quarantine``)."""
        parts = sorted(((t, v * self.coef[t]) for t, v in self._weights(text).items()), key=lambda p: -p[1])
        return [(t, round(c, 3)) for t, c in parts[:n] if c > 0]

    def to_json(self) -> dict[str, Any]:
        terms = sorted(self.idf)
        return {"version": self.version, "threshold": self.threshold, "intercept": self.intercept,
                "terms": terms, "idf": [self.idf[t] for t in terms], "coef": [self.coef[t] for t in terms]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "InjectionModel":
        terms, idf, coef = data["terms"], data["idf"], data["coef"]
        if not (len(terms) == len(idf) == len(coef)):
            raise ValueError("terms, idf and coef differ in length")
        return cls(dict(zip(terms, map(float, idf))), dict(zip(terms, map(float, coef))), float(data["intercept"]),
                   float(data["threshold"]), str(data.get("version", "")))


def export(vectorizer: Any, classifier: Any, threshold: float, version: str) -> InjectionModel:
    """The model of a fitted sklearn ``TfidfVectorizer`` (word unigrams, ``sublinear_tf``, L2 norm, smooth IDF)
    and binary ``LogisticRegression``."""
    vocab: Mapping[str, int] = vectorizer.vocabulary_
    idf, coef = vectorizer.idf_, classifier.coef_[0]
    return InjectionModel({t: float(idf[i]) for t, i in vocab.items()}, {t: float(coef[i]) for t, i in vocab.items()},
                          float(classifier.intercept_[0]), float(threshold), version)


@functools.lru_cache(maxsize=1)
def load_model(path: str | None = None) -> InjectionModel:
    """The shipped model (or the one at ``path``), read once."""
    p = Path(path) if path else MODEL_FILE
    try:
        return InjectionModel.from_json(json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the injection model {p} cannot be read ({exc}). Fix: reinstall ragbench, or write it "
                          "again with python benchmarks/injection_model.py --write.") from None


@dataclass(frozen=True)
class Suspect:
    """A paragraph ``[start, end)`` the model suspects and the phrase rules pass: its score and the words behind it."""

    start: int
    end: int
    score: float
    words: tuple[str, ...]


def suspects(text: str, classification: Classification | None = None,
             model: InjectionModel | None = None) -> list[Suspect]:
    """The paragraphs of a document's ``text`` that the model flags and the quarantine does not (its
    ``classification`` is the document's ACL level, as for :func:`ragbench.llm.quarantine.scan_document`)."""
    m = model or load_model()
    out = []
    for start, end in paragraphs(text):
        para = text[start:end]
        if not readable(para):
            continue
        score = m.score(para)
        if score >= m.threshold and not reasons_for(para, classification):
            out.append(Suspect(start, end, round(score, 4), tuple(w for w, _ in m.evidence(para))))
    return out
