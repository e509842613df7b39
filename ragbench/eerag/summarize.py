"""Layer 1's index-time summaries: about 25 tokens per chunk, stored beside the chunk.

The extractive summariser keeps the leading words of the chunk (title first when given) up to the token budget,
counted with the embedding model's tokenizer; the LLM summariser asks any chat model for one sentence.
"""
from __future__ import annotations

from typing import Callable

from ..llm.base import ChatModel
from ..schema import Chunk, Message
from ..text import count_tokens, normalize_whitespace, split_sentences


class ExtractiveSummarizer:
    """Leading sentences of the chunk, cut at a word boundary to ``max_tokens`` tokens (``…`` when cut)."""

    def __init__(self, max_tokens: int = 25, counter: Callable[[str], int] | None = None) -> None:
        self.max_tokens = max_tokens
        self.counter = counter

    def summarize_text(self, text: str) -> str:
        text = normalize_whitespace(text)
        if not text:
            return ""
        sentences = split_sentences(text) or [text]
        words: list[str] = []
        for sentence in sentences:
            for w in sentence.split():
                candidate = " ".join(words + [w])
                if count_tokens(candidate, self.counter) > self.max_tokens:
                    return " ".join(words).rstrip(",;:") + "\u2026" if words else w
                words.append(w)
        return " ".join(words)

    def __call__(self, chunk: Chunk) -> str:
        return self.summarize_text(chunk.text)


SUMMARY_PROMPT = ("Summarise the passage in one sentence of at most {n} tokens. Keep names, numbers and the main "
                  "claim. Reply with the sentence only.")


class LlmSummarizer:
    """One-sentence summary from a chat model; falls back to the extractive one on an empty reply."""

    def __init__(self, model: ChatModel, max_tokens: int = 25) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self._fallback = ExtractiveSummarizer(max_tokens)

    def __call__(self, chunk: Chunk) -> str:
        reply = self.model.complete([Message("system", SUMMARY_PROMPT.format(n=self.max_tokens)),
                                     Message("user", chunk.text)]).text.strip()
        return normalize_whitespace(reply) if reply else self._fallback(chunk)
