"""Chunkers: documents → chunks with character spans ``[start, end)`` into the ORIGINAL document text.

Every chunker keeps ``chunk.text == document.text[chunk.start:chunk.end]`` and gives stable ids derived from
``(doc_id, seq, text)`` only (see :func:`chunk_id`), so re-chunking identical text gives identical ids.

* :class:`WordWindowChunker` — the EE-RAG source's sliding word windows (40 words, 25 % overlap → step 30).
  Words are maximal runs of non-whitespace (the source splits on space and tab only, which glues words across
  newlines; we split on every whitespace character). A text of at most ``words`` words stays one chunk, unchanged.
  Unlike the source, which re-joins a window's words with single spaces, a window's text is the original span
  from its first word's start to its last word's end, so spans and citations point at real text.
* :class:`SentenceChunker` — the Enterprise source's sentence-aware greedy packing (600 chars, 100 overlap;
  seed-behaviour 3.2). The packing arithmetic uses the untrimmed buffer exactly as the source does; the emitted
  span is then trimmed of surrounding whitespace, and an all-whitespace buffer is not emitted.
* :class:`WholeDocumentChunker` — one chunk per document.
"""
from __future__ import annotations

import hashlib
import math
import re

from ..errors import ConfigError, DataError
from ..schema import Chunk, Document
from ..text import sentence_spans
from .base import Chunker

_WORD = re.compile(r"\S+")


def chunk_id(doc_id: str, seq: int, text: str) -> str:
    """Stable chunk id: 24 hex chars of SHA-256 over ``doc_id``, ``seq`` and ``text`` (NUL-separated)."""
    payload = f"{doc_id}\x00{seq}\x00{text}".encode("utf-8")
    return hashlib.sha256(payload).hexdigest()[:24]


def _check_document(document: Document) -> None:
    if not isinstance(document.text, str):
        raise DataError(f"document {document.doc_id!r}: text must be str, found {type(document.text).__name__}. "
                        "Fix: decode bytes first (ragbench.text.read_text_file).")
    if not document.text.strip():
        raise DataError(f"document {document.doc_id!r} is empty or whitespace-only. Fix: drop it or give it text.")


def _make(document: Document, seq: int, start: int, end: int) -> Chunk:
    text = document.text[start:end]
    return Chunk(chunk_id(document.doc_id, seq, text), document.doc_id, seq, start, end, text)


def _from_spans(document: Document, spans: list[tuple[int, int]], trim: bool) -> list[Chunk]:
    """Chunks of the spans that hold any non-whitespace text, numbered in order; ``trim`` first narrows each span
    to exclude its leading and trailing whitespace."""
    chunks: list[Chunk] = []
    for start, end in spans:
        if trim:
            start, end = _trimmed(document.text, start, end)
        if document.text[start:end].strip():
            chunks.append(_make(document, len(chunks), start, end))
    return chunks


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow ``[start, end)`` to exclude leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


class WordWindowChunker(Chunker):
    """Sliding windows of ``words`` words overlapping by ``floor(words * overlap)`` words."""

    def __init__(self, words: int = 40, overlap: float = 0.25) -> None:
        self.words = words
        self.overlap = overlap

    @property
    def step(self) -> int:
        """Words between window starts (30 for the defaults)."""
        self.validate()
        # The epsilon keeps e.g. 0.29 * 100 = 28.999… from flooring to 28.
        overlap_words = math.floor(self.words * self.overlap + 1e-9)
        return max(1, self.words - overlap_words)

    def validate(self) -> None:
        if isinstance(self.words, bool) or not isinstance(self.words, int) or self.words <= 0:
            raise ConfigError(f"chunking.words must be a positive integer, found {self.words!r}. Fix: e.g. 40.")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, (int, float)) \
                or not 0 <= self.overlap < 1:
            raise ConfigError(f"chunking.overlap must be a fraction in [0, 1), found {self.overlap!r}. "
                              "Fix: e.g. 0.25 for 25 %.")

    def chunk(self, document: Document) -> list[Chunk]:
        step = self.step
        _check_document(document)
        words = [(m.start(), m.end()) for m in _WORD.finditer(document.text)]
        if len(words) <= self.words:
            return [_make(document, 0, 0, len(document.text))]
        chunks: list[Chunk] = []
        for first in range(0, len(words), step):
            last = min(first + self.words, len(words)) - 1
            chunks.append(_make(document, len(chunks), words[first][0], words[last][1]))
            if last == len(words) - 1:  # this window reached the end
                break
        return chunks


class SentenceChunker(Chunker):
    """Greedy packing of sentences into chunks of about ``max_chars`` with ``char_overlap`` characters carried
    over."""

    def __init__(self, max_chars: int = 600, char_overlap: int = 100) -> None:
        self.max_chars = max_chars
        self.char_overlap = char_overlap

    def validate(self) -> None:
        if isinstance(self.max_chars, bool) or not isinstance(self.max_chars, int) or self.max_chars <= 0:
            raise ConfigError(f"chunking.max_chars must be a positive integer, found {self.max_chars!r}. "
                              "Fix: e.g. 600.")
        if isinstance(self.char_overlap, bool) or not isinstance(self.char_overlap, int) \
                or not 0 <= self.char_overlap < self.max_chars:
            raise ConfigError(f"chunking.char_overlap must be an integer in [0, max_chars={self.max_chars}), "
                              f"found {self.char_overlap!r}. Fix: e.g. 100.")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The source's untrimmed packed spans ``[(start, end), …]`` (empty list for empty text)."""
        self.validate()
        out: list[tuple[int, int]] = []
        buf_start = buf_end = 0
        for s_start, s_end in sentence_spans(text):
            # The buffer is always text[buf_start:buf_end]: sentences are contiguous.
            if buf_end > buf_start and (buf_end - buf_start) + (s_end - s_start) > self.max_chars:
                out.append((buf_start, buf_end))
                if self.char_overlap > 0 and buf_end - buf_start > self.char_overlap:
                    buf_start = buf_end - self.char_overlap
                else:
                    buf_start = s_start
            elif buf_end == buf_start:
                buf_start = s_start
            buf_end = s_end
        if buf_end > buf_start:
            out.append((buf_start, buf_end))
        return out

    def chunk(self, document: Document) -> list[Chunk]:
        self.validate()
        _check_document(document)
        return _from_spans(document, self.spans(document.text), trim=True)


class FixedSizeChunker(Chunker):
    """The Enterprise source's fixed-size character windows: ``[s, min(len, s + max_chars))`` for
    ``s = 0, step, 2·step, …`` with ``step = max(1, max_chars − char_overlap)``, stopping after the window that
    reaches the end of the text. Windows are not trimmed (offsets are exact); blank windows are skipped."""

    def __init__(self, max_chars: int = 600, char_overlap: int = 100) -> None:
        self.max_chars = max_chars
        self.char_overlap = char_overlap

    def validate(self) -> None:
        SentenceChunker(self.max_chars, self.char_overlap).validate()  # the same two knobs, the same rules

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The windows ``[(start, end), …]`` (empty list for empty text)."""
        self.validate()
        step = max(1, self.max_chars - self.char_overlap)
        out: list[tuple[int, int]] = []
        start = 0
        while start < len(text):
            end = min(len(text), start + self.max_chars)
            out.append((start, end))
            if end == len(text):
                break
            start += step
        return out

    def chunk(self, document: Document) -> list[Chunk]:
        self.validate()
        _check_document(document)
        return _from_spans(document, self.spans(document.text), trim=False)


class WholeDocumentChunker(Chunker):
    """The whole document text as one chunk (BEIR passages are already short)."""

    def chunk(self, document: Document) -> list[Chunk]:
        _check_document(document)
        return [_make(document, 0, 0, len(document.text))]
