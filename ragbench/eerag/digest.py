"""How elected chunks are injected: in full (standard), or digested first (Layer 5, silent digestion)."""
from __future__ import annotations

from typing import Sequence

from ..llm.base import ChatModel
from ..schema import Chunk, Message
from ..text import truncate_chars

RETRIEVED_OPEN = "--- Retrieved Context (transient \u2014 not stored in conversation history) ---"
DIGEST_OPEN = "--- Background Knowledge (synthesised, transient) ---"
CLOSE = "---"


def full_context(entries: Sequence[tuple[int, Chunk]]) -> str:
    """``Entry <n>:`` then the chunk text indented, one blank line between entries."""
    lines = [RETRIEVED_OPEN]
    for number, chunk in entries:
        lines.append(f"Entry {number}:")
        lines.extend("  " + line for line in chunk.text.strip().splitlines() if line.strip())
        lines.append("")
    lines.append(CLOSE)
    return "\n".join(lines)


def truncation_digest(entries: Sequence[tuple[int, Chunk]]) -> str:
    """The source's deterministic digest: one line per entry, ``summary | text[:200]`` (summary or text[:100])."""
    lines = [DIGEST_OPEN]
    for _, chunk in entries:
        head = chunk.summary.strip() or truncate_chars(chunk.text, 100)
        lines.append(" | ".join([head, truncate_chars(chunk.text, 200)]))
    lines.append(CLOSE)
    return "\n".join(lines)


DISTIL_PROMPT = ("Distil the passages below into the few facts that answer the question. Plain sentences, no "
                 "preamble, at most {n} words.")


def llm_digest(entries: Sequence[tuple[int, Chunk]], question: str, model: ChatModel, max_words: int = 80,
               prompt: str | None = None) -> str:
    """An LLM distillation of the elected chunks for this question (one extra model call); ``prompt`` is the
    registered ``eerag.digest`` body (``{n}`` = the word budget), :data:`DISTIL_PROMPT` by default."""
    body = "\n\n".join(chunk.text.strip() for _, chunk in entries)
    reply = model.complete([Message("system", (prompt or DISTIL_PROMPT).replace("{n}", str(max_words))),
                            Message("user", f"Question: {question}\n\nPassages:\n{body}")]).text.strip()
    return "\n".join([DIGEST_OPEN, reply or truncation_digest(entries), CLOSE])
