"""Chunking by content type (the seed's "one-size-fits-all chunking" pitfall): prose is packed by sentences,
code is split at top-level definitions, chat transcripts are grouped by turns.

All chunkers keep ``chunk.text == document.text[start:end]`` and the store's stable ids (``chunk_id``).
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..errors import ConfigError, DataError
from ..retrieval.base import Chunker
from ..retrieval.chunking import SentenceChunker, chunk_id
from ..schema import Chunk, Document

CODE_EXTENSIONS = frozenset({".py", ".js", ".ts", ".tsx", ".jsx", ".java", ".go", ".rs", ".c", ".h", ".cc", ".cpp",
                             ".hpp", ".cs", ".rb", ".php", ".sh", ".sql", ".kt", ".swift", ".scala", ".r", ".jl"})
CHAT_EXTENSIONS = frozenset({".chat", ".transcript"})
#: "alice: hi", "[10:02] Bob: hey", "User: …" — a speaker of up to four words, then a colon.
TURN = re.compile(r"^\s*(?:\[[^\]\n]{1,20}\]\s*)?[A-Za-z][\w.' -]{0,30}:\s+\S")
_TOP_LEVEL = re.compile(r"^(?:def |class |async def |function |func |fn |pub |public |private |export |"
                        r"interface |struct |impl |module |package |CREATE |@)")


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((start, start + len(line)))
        start += len(line)
    return spans


def _emit(document: Document, ranges: list[tuple[int, int]]) -> list[Chunk]:
    text = document.text
    chunks: list[Chunk] = []
    for start, end in ranges:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            piece = text[start:end]
            chunks.append(Chunk(chunk_id(document.doc_id, len(chunks), piece), document.doc_id, len(chunks),
                                start, end, piece))
    return chunks


def _check(document: Document) -> None:
    if not isinstance(document.text, str) or not document.text.strip():
        raise DataError(f"document {document.doc_id!r} is empty. Fix: drop it or give it text.")


class CodeChunker(Chunker):
    """Blocks starting at top-level definitions (``def``, ``class``, ``function``…), packed up to ``max_lines``;
    a longer block is cut every ``max_lines`` lines."""

    def __init__(self, max_lines: int = 60) -> None:
        self.max_lines = max_lines

    def chunk(self, document: Document) -> list[Chunk]:
        if not isinstance(self.max_lines, int) or self.max_lines < 1:
            raise ConfigError(f"max_lines must be a positive integer, found {self.max_lines!r}.")
        _check(document)
        lines = _line_spans(document.text)
        blocks: list[list[tuple[int, int]]] = [[]]
        for s, e in lines:
            if _TOP_LEVEL.match(document.text[s:e]) and blocks[-1]:
                blocks.append([])
            blocks[-1].append((s, e))
        ranges: list[tuple[int, int]] = []
        current: list[tuple[int, int]] = []
        for block in blocks:
            for i in range(0, len(block), self.max_lines):
                part = block[i:i + self.max_lines]
                if current and len(current) + len(part) > self.max_lines:
                    ranges.append((current[0][0], current[-1][1]))
                    current = []
                current.extend(part)
        if current:
            ranges.append((current[0][0], current[-1][1]))
        return _emit(document, ranges)


class ChatChunker(Chunker):
    """Windows of ``turns`` speaker turns (a turn runs until the next ``Speaker:`` line), ``overlap`` turns shared."""

    def __init__(self, turns: int = 6, overlap: int = 1) -> None:
        self.turns = turns
        self.overlap = overlap

    def chunk(self, document: Document) -> list[Chunk]:
        if not isinstance(self.turns, int) or self.turns < 1 or not 0 <= self.overlap < self.turns:
            raise ConfigError(f"ChatChunker needs turns ≥ 1 and 0 ≤ overlap < turns; found {self.turns}, "
                              f"{self.overlap}.")
        _check(document)
        turns: list[tuple[int, int]] = []
        for s, e in _line_spans(document.text):
            if TURN.match(document.text[s:e]) or not turns:
                turns.append((s, e))
            else:
                turns[-1] = (turns[-1][0], e)
        step = self.turns - self.overlap
        ranges = []
        for i in range(0, len(turns), step):
            window = turns[i:i + self.turns]
            ranges.append((window[0][0], window[-1][1]))
            if i + self.turns >= len(turns):
                break
        return _emit(document, ranges)


def content_kind(name: str, text: str) -> str:
    """``code`` (by extension), ``chat`` (by extension, or ≥ 60 % of ≥ 3 non-empty lines are speaker turns), else
    ``prose``."""
    ext = PurePosixPath(name).suffix.lower()
    if ext in CODE_EXTENSIONS:
        return "code"
    if ext in CHAT_EXTENSIONS:
        return "chat"
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) >= 3 and sum(1 for line in lines if TURN.match(line)) >= 0.6 * len(lines):
        return "chat"
    return "prose"


def chunker_for(kind: str) -> Chunker:
    """The chunker of a content kind."""
    if kind == "code":
        return CodeChunker()
    if kind == "chat":
        return ChatChunker()
    if kind == "prose":
        return SentenceChunker(600, 100)
    raise ConfigError(f"unknown content kind {kind!r}; expected prose, code or chat.")
