"""Intent and domain classification of messages into a :class:`DcsKey`.

``PatternClassifier(profile="source")`` restates the source's ``DcsIntentClassifier`` (seed-behaviour 1.1): one
case-insensitive whole-word pattern per label, every matching label emitted in list order (CHAT is evaluated
last although its id is 6), a blank or unmatched message → intents ``[CHAT]``, no domain match → ``[]``.
Whole-word matching means "failing", "errors", "deployed" or "bugs" match nothing.

``profile="improved"`` matches the same keywords in their common word forms (plurals, -ed, -ing, consonant
doubling, e-dropping, a few irregulars such as built/made/broken) and curly apostrophes; the chat words,
question words and 2-letter abbreviations stay exact because their inflections collide with other words
("hi" → "his").

Any :class:`Classifier` can replace it (the assembler only sees keys): :class:`EmbeddingClusterClassifier`
is the example of a learned taxonomy — KMeans clusters of message embeddings used as topic ids.
"""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from enum import IntEnum
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, DataError, ModelError
from ..logs import log_decision
from .key import DcsKey


class Intent(IntEnum):
    QUERY = 1
    INSTRUCTION = 2
    IMPLEMENTATION = 3
    CLARIFICATION = 4
    CORRECTION = 5
    CHAT = 6
    DESIGN = 7
    FIX = 8


class Domain(IntEnum):
    BACKEND = 1
    FRONTEND = 2
    INFRASTRUCTURE = 3
    RESEARCH = 4


#: Intent keywords in the source's evaluation order (CHAT last).
INTENT_KEYWORDS: tuple[tuple[Intent, tuple[str, ...]], ...] = (
    (Intent.QUERY, ("what", "how", "why", "when", "where", "which", "who", "explain", "describe", "tell me",
                    "show me")),
    (Intent.INSTRUCTION, ("create", "build", "add", "make", "set up", "configure", "implement", "write",
                          "generate")),
    (Intent.IMPLEMENTATION, ("code", "function", "class", "method", "module", "component", "service", "endpoint",
                             "api")),
    (Intent.CLARIFICATION, ("clarify", "mean", "meaning", "confused", "unclear", "understand",
                            "difference between")),
    (Intent.CORRECTION, ("wrong", "incorrect", "mistake", "error", "fix this", "that's not", "actually",
                         "instead")),
    (Intent.DESIGN, ("design", "architect", "pattern", "structure", "approach", "strategy", "plan", "diagram")),
    (Intent.FIX, ("fix", "bug", "broken", "crash", "fail", "issue", "problem", "debug", "troubleshoot",
                  "resolve")),
    (Intent.CHAT, ("hello", "hi", "hey", "thanks", "thank you", "okay", "ok", "sure", "great", "nice", "cool")),
)

DOMAIN_KEYWORDS: tuple[tuple[Domain, tuple[str, ...]], ...] = (
    (Domain.BACKEND, ("backend", "server", "api", "database", "sql", "endpoint", "controller", "service",
                      "repository", "migration", "queue", "cache")),
    (Domain.FRONTEND, ("frontend", "ui", "ux", "component", "page", "view", "form", "button", "css", "html",
                       "react", "angular", "vue", "blazor", "javascript", "typescript")),
    (Domain.INFRASTRUCTURE, ("infrastructure", "deploy", "ci", "cd", "pipeline", "docker", "kubernetes", "k8s",
                             "terraform", "cloud", "aws", "azure", "gcp", "nginx", "config", "environment")),
    (Domain.RESEARCH, ("research", "paper", "study", "experiment", "benchmark", "evaluate", "compare", "analysis",
                       "hypothesis", "finding", "literature")),
)

#: Escalation: a low-commitment intent followed by a committing one (seed-behaviour 1.1).
LOW_INTENTS = frozenset({Intent.CHAT, Intent.QUERY, Intent.CLARIFICATION})
HIGH_INTENTS = frozenset({Intent.DESIGN, Intent.FIX, Intent.IMPLEMENTATION, Intent.INSTRUCTION})

PROFILES = ("source", "improved")

# Words whose inflections would collide with unrelated words, or that do not inflect.
_NO_FORMS = frozenset(w for _, ws in INTENT_KEYWORDS[:1] + INTENT_KEYWORDS[-1:] for w in ws) | {"instead", "actually"}
_IRREGULAR: Mapping[str, tuple[str, ...]] = {
    "build": ("built",), "make": ("made",), "write": ("wrote", "written"), "mean": ("meant",),
    "understand": ("understood",), "broken": ("break", "breaks", "breaking", "broke"),
    "fail": ("failure", "failures"), "deploy": ("deployment", "deployments"),
    "architect": ("architecture", "architectures", "architectural"), "mistake": ("mistaken",),
    "configure": ("configuration", "configurations"), "evaluate": ("evaluation", "evaluations"),
    "compare": ("comparison", "comparisons"), "analysis": ("analyses",), "hypothesis": ("hypotheses",),
    "migration": ("migrate", "migrates", "migrated", "migrating"), "config": ("configs",),
    "implement": ("implementation", "implementations"), "study": ("studies", "studied", "studying"),
}
_VOWELS = set("aeiou")


def word_forms(word: str) -> list[str]:
    """The surface forms the improved profile accepts for one keyword (the keyword itself first)."""
    if " " in word:  # inflect the head of a phrase: "set up" → "setting up"
        head, rest = word.split(" ", 1)
        return [f"{h} {rest}" for h in word_forms(head)]
    if word in _NO_FORMS or len(word) <= 2 or not word.isalpha():
        return [word]
    forms = [word, word + "s"]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        forms += [word + "es"]
    if word.endswith("e"):
        forms += [word + "d", word[:-1] + "ing"]
    elif word.endswith("y") and word[-2] not in _VOWELS:
        forms += [word[:-1] + "ies", word[:-1] + "ied", word + "ing"]
    else:
        forms += [word + "ed", word + "ing"]
        # Consonant doubling after a short final vowel: bug → bugged, plan → planning.
        if (len(word) >= 3 and word[-1] not in _VOWELS | set("wxy") and word[-2] in _VOWELS
                and word[-3] not in _VOWELS):
            forms += [word + word[-1] + "ed", word + word[-1] + "ing"]
    forms += list(_IRREGULAR.get(word, ()))
    return list(dict.fromkeys(forms))


def _pattern(words: Iterable[str], improved: bool) -> re.Pattern[str]:
    alts: list[str] = []
    for w in words:
        alts.extend(word_forms(w) if improved else [w])
    # Longest first so a phrase wins over its head; \b… \b keeps matching to whole words like the source.
    alts = sorted(dict.fromkeys(alts), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(a) for a in alts) + r")\b", re.IGNORECASE)


def is_escalation(from_intents: Iterable[int], to_intents: Iterable[int]) -> bool:
    """True iff ``from`` holds CHAT, QUERY or CLARIFICATION and ``to`` holds DESIGN, FIX, IMPLEMENTATION or
    INSTRUCTION (low → high only)."""
    return bool(set(from_intents) & LOW_INTENTS) and bool(set(to_intents) & HIGH_INTENTS)


class Classifier(ABC):
    """Text → :class:`DcsKey` (with no DCNs; the assembler assigns those). Implement :meth:`classify`;
    override :meth:`is_escalation` when the intent ids carry an order."""

    @abstractmethod
    def classify(self, text: str) -> DcsKey:
        """The intents and domains of ``text``."""

    def is_escalation(self, from_intents: Iterable[int], to_intents: Iterable[int]) -> bool:
        return False

    def label(self, level: str, ident: int) -> str:
        """A readable name of an id (for logs and notebooks)."""
        return f"{level}{ident}"


class PatternClassifier(Classifier):
    """The source's keyword classifier (``profile="source"``) or its word-form variant (``"improved"``)."""

    def __init__(self, profile: str = "improved") -> None:
        if profile not in PROFILES:
            raise ConfigError(f"dcs.profile: expected one of {PROFILES}, found {profile!r}.")
        self.profile = profile
        improved = profile == "improved"
        self._intents = [(i, _pattern(ws, improved)) for i, ws in INTENT_KEYWORDS]
        self._domains = [(d, _pattern(ws, improved)) for d, ws in DOMAIN_KEYWORDS]

    def classify(self, text: str) -> DcsKey:
        if not isinstance(text, str):
            raise DataError(f"classify: expected a str message, found {type(text).__name__}.")
        if self.profile == "improved":
            text = text.replace("\u2019", "'")  # curly apostrophe: "that’s not"
        if not text.strip():
            intents: list[int] = [Intent.CHAT]
            domains: list[int] = []
        else:
            intents = [int(i) for i, p in self._intents if p.search(text)] or [int(Intent.CHAT)]
            domains = [int(d) for d, p in self._domains if p.search(text)]
        key = DcsKey(tuple(intents), tuple(domains))
        snippet = text[:80] + ("..." if len(text) > 80 else "")
        log_decision("Classify", f"Intents: [{', '.join(f'{Intent(i).name}({i})' for i in intents)}] "
                                 f"from \"{snippet}\"", intents=list(intents), profile=self.profile)
        log_decision("Classify", f"Domains: [{', '.join(f'{Domain(d).name}({d})' for d in domains)}] "
                                 f"from \"{snippet}\"", domains=list(domains), profile=self.profile)
        return key

    def is_escalation(self, from_intents: Iterable[int], to_intents: Iterable[int]) -> bool:
        return is_escalation(from_intents, to_intents)

    def label(self, level: str, ident: int) -> str:
        enum = Intent if level == "intent" else Domain if level == "domain" else None
        try:
            return enum(ident).name if enum else f"DCN{ident}"
        except ValueError:
            return f"{level}{ident}"


class EmbeddingClusterClassifier(Classifier):
    """Topic ids learned by KMeans over message embeddings, put at one key level (``"domain"`` by default;
    ``"intent"`` too). A ``base`` classifier fills the other levels, so the source's intents can be kept with
    learned domains. Call :meth:`fit` on representative texts first; cluster ``c`` becomes id ``c + 1``."""

    def __init__(self, embedder, n_clusters: int = 8, seed: int = 42, level: str = "domain",
                 base: Classifier | None = None) -> None:
        self.embedder = embedder
        self.n_clusters = n_clusters
        self.seed = seed
        self.level = level
        self.base = base
        self.kmeans_ = None

    def fit(self, texts: Sequence[str]) -> "EmbeddingClusterClassifier":
        from sklearn.cluster import KMeans

        if self.level not in ("intent", "domain"):
            raise ConfigError(f"EmbeddingClusterClassifier level: expected 'intent' or 'domain', "
                              f"found {self.level!r}.")
        if len(texts) < self.n_clusters:
            raise DataError(f"EmbeddingClusterClassifier.fit: need at least n_clusters={self.n_clusters} texts, "
                            f"found {len(texts)}. Fix: give more texts or fewer clusters.")
        vectors = np.asarray(self.embedder.embed(list(texts)), dtype=np.float64)
        self.kmeans_ = KMeans(n_clusters=self.n_clusters, random_state=self.seed, n_init=10).fit(vectors)
        return self

    def classify(self, text: str) -> DcsKey:
        if self.kmeans_ is None:
            raise ModelError("EmbeddingClusterClassifier is not fitted. Fix: call fit(texts) first.")
        vector = np.asarray(self.embedder.embed([text]), dtype=np.float64)
        cluster = (int(self.kmeans_.predict(vector)[0]) + 1,)
        base = self.base.classify(text) if self.base is not None else DcsKey()
        if self.level == "domain":
            return DcsKey(base.intents, cluster)
        return DcsKey(cluster, base.domains)

    def is_escalation(self, from_intents: Iterable[int], to_intents: Iterable[int]) -> bool:
        if self.base is not None and self.level == "domain":
            return self.base.is_escalation(from_intents, to_intents)
        return False


def make_classifier(profile: str = "improved") -> Classifier:
    """The pattern classifier of a ``dcs.profile``."""
    return PatternClassifier(profile)
