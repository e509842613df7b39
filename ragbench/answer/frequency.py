"""How common a word is in general English (wordfreq's Zipf scale), read by the answerability rules and by the
WordNet synonyms; a module of its own so that both can import it without importing each other."""
from __future__ import annotations

from functools import lru_cache

__all__ = ["zipf"]


@lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """How common ``word`` is in general English: wordfreq's Zipf scale, log10 of its frequency per billion words
    ("the" 7.7, "expected" 5.0, "ferret" 3.0; 0 for a word it has never seen)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))
