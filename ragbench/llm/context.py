"""The structured RAG context a caller attaches to a chat request.

A grounded-answer prompt is prose for a remote LLM, but a local extractive model must not parse that prose back:
the Enterprise source's template model took the *whole* formatted prompt (template, context lines and question)
as "the question", so every context token counted as a question token (seed-behaviour 3.7). Callers therefore put
the actual question and the numbered passages into ``Message.meta["rag"]`` of the last user message as well;
models that only read ``content`` (OpenAI, llama.cpp) ignore it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import ModelError
from ..schema import Message
from ..text import sentence_spans, split_sentences

#: Key of the structured context inside ``Message.meta``.
RAG_META_KEY = "rag"

#: What a model replies when the context does not answer the question (the Enterprise source's wording).
REFUSAL_MESSAGE = "I don't have enough information in the indexed documents to answer that."

#: A citation marker: ``[3]`` or ``[1, 3]``.
MARKER = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]")
_MARKER_WS = re.compile(r"\s*" + MARKER.pattern)


@dataclass(frozen=True)
class Passage:
    """One numbered context passage: ``n`` is the marker number the model cites (from 1)."""

    n: int
    text: str
    score: float = 0.0
    context: str = ""  # the document title and the headings the passage starts under (evidence, not quoted)


def rag_meta(question: str, passages: Sequence[Passage], focus: str | None = None,
             weights: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The ``meta`` mapping that carries the question and passages of a grounded request. ``focus`` is the
    user's own words when ``question`` is a rewritten follow-up; ``weights`` are the asker's IDF weights of the
    question's terms (:mod:`ragbench.llm.signals`)."""
    data: dict[str, Any] = {"question": question,
                            "passages": [{"n": p.n, "text": p.text, "score": float(p.score), "context": p.context}
                                         for p in passages]}
    if focus is not None:
        data["focus"] = focus
    if weights:
        data["weights"] = {str(k): float(v) for k, v in weights.items()}
    return {RAG_META_KEY: data}


def read_rag_extras(messages: Sequence[Message]) -> tuple[str | None, dict[str, float]]:
    """``(focus, weights)`` of the last user message's meta (``(None, {})`` when absent)."""
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    data = ((last.meta or {}).get(RAG_META_KEY) if last is not None else None) or {}
    if not isinstance(data, Mapping):
        return None, {}
    focus = data.get("focus") if isinstance(data.get("focus"), str) else None
    weights = data.get("weights")
    return focus, ({str(k): float(v) for k, v in weights.items()} if isinstance(weights, Mapping) else {})


def read_rag_meta(messages: Sequence[Message]) -> tuple[str, list[Passage]] | None:
    """``(question, passages)`` from the last user message's meta, or ``None`` when it has none."""
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    if last is None:
        return None
    data = (last.meta or {}).get(RAG_META_KEY)
    if data is None:
        return None
    if not isinstance(data, Mapping) or not isinstance(data.get("question"), str):
        raise ModelError(f"meta[{RAG_META_KEY!r}] must be a mapping with a 'question' string, found {data!r}. "
                         "Fix: build it with ragbench.llm.context.rag_meta().")
    passages: list[Passage] = []
    for item in data.get("passages") or ():
        try:
            passages.append(Passage(int(item["n"]), str(item["text"]), float(item.get("score", 0.0)),
                                    str(item.get("context") or "")))
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"bad passage {item!r} in meta[{RAG_META_KEY!r}]; expected {{n, text, score}}. "
                             "Fix: build it with ragbench.llm.context.rag_meta().") from None
    return data["question"], passages


#: A sentence ends at ``.``/``!``/``?`` followed by whitespace or the end (so "£2.4", "press@ferrowick.com" and
#: "billing.deferred_capture" stay whole), or at a line break.
_SENT_END = re.compile(r"[.!?]+(?=\s|$)|\n")


def answer_sentence_spans(text: str) -> list[tuple[int, int]]:
    """Contiguous ``[start, end)`` spans covering ``text``; each ends right after a sentence end (see above)."""
    return sentence_spans(text, _SENT_END)


def split_answer_sentences(text: str) -> list[str]:
    """Trimmed, non-empty sentences of ``text`` by :func:`answer_sentence_spans`."""
    return split_sentences(text, _SENT_END)


def strip_markers(text: str) -> str:
    """``text`` without citation markers (``[3]``, ``[1, 2]``) and the whitespace just before them."""
    return _MARKER_WS.sub("", text)
