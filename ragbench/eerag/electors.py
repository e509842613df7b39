"""Electors decide which candidates to expand. Both are :class:`ChatModel` s, so the pipeline treats a policy
and a real LLM the same way and parses both replies with the same ``RETRIEVE`` grammar.

* :class:`PolicyElector` (offline default): scores each summary against the question with the embedder and elects
  those above ``threshold`` and within ``margin`` of the best; in answer mode it answers extractively from the
  transient context.
* :func:`llm_elector_prompt`: the two-mode system prompt for any chat model (``LlmElector`` = that prompt + model).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..llm.base import ChatModel, Completion
from ..retrieval.base import Embedder
from ..schema import Message
from ..text import count_tokens, split_sentences, tokenize
from .digest import DIGEST_OPEN, RETRIEVED_OPEN
from .election import HEADER_OPEN, parse_header

ELECTOR_SYSTEM_PROMPT = """You are an assistant with access to a knowledge base, working in one of two modes.
Candidate evaluation: when a system message starts with "--- Potentially Relevant Context ---", decide whether any \
listed entry would help answer the user's question. If one or more would, reply ONLY with RETRIEVE followed by \
their ids separated by spaces (for example: RETRIEVE 2 5) and nothing else. If none would, answer the question \
directly and do not mention the entries.
Answer generation: when a system message starts with "--- Retrieved Context" or "--- Background Knowledge", answer \
the user's question from that context, briefly and precisely, without mentioning ids or the retrieval itself."""

NO_CONTEXT_REPLY = "None of the stored entries applies to this question, so I answer without them."


def llm_elector_prompt() -> str:
    return ELECTOR_SYSTEM_PROMPT


def _mode(messages: Sequence[Message]) -> tuple[str, str]:
    """(mode, background) from the last system message before the user turn."""
    for m in reversed(messages):
        if m.role == "system":
            if m.content.startswith(HEADER_OPEN):
                return "elect", m.content
            if m.content.startswith(RETRIEVED_OPEN) or m.content.startswith(DIGEST_OPEN):
                return "answer", m.content
            break
        if m.role == "assistant":
            break
    return "plain", ""


def _question(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            return m.content
    return ""


def extractive_reply(question: str, context: str, max_sentences: int = 2) -> str:
    """The context sentences sharing most content words with the question, in context order."""
    q = set(tokenize(question, stopwords=True))
    body = [line.strip() for line in context.splitlines()[1:-1] if line.strip() and not line.startswith("Entry ")]
    sentences = split_sentences("\n".join(body))
    scored = [(len(q & set(tokenize(s, stopwords=True))), -i, s) for i, s in enumerate(sentences)]
    best = sorted((x for x in scored if x[0] > 0), reverse=True)[:max_sentences]
    if not best:
        return sentences[0] if sentences else NO_CONTEXT_REPLY
    return " ".join(s for _, _, s in sorted(best, key=lambda x: -x[1]))


class PolicyElector(ChatModel):
    """Deterministic elector: a candidate's relevance is cosine(question, summary) − ``rank_weight`` × its position
    in the header (0 for the first; the header is in retrieval order, which a model reading it sees too). It elects
    candidates whose relevance is ≥ ``threshold`` and ≥ best − ``margin``, at most ``max_elect``, best first.
    Without an embedder it scores lexical overlap of content words instead of cosine."""

    def __init__(self, embedder: Embedder | None = None, threshold: float = 0.5, margin: float = 0.1,
                 max_elect: int = 3, rank_weight: float = 0.0) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.max_elect = max_elect
        self.rank_weight = rank_weight
        self.model_id = f"policy-elector(t={threshold:g},m={margin:g},n={max_elect},r={rank_weight:g})"

    def scores(self, question: str, summaries: Sequence[str]) -> np.ndarray:
        if not summaries:
            return np.zeros(0, dtype=np.float32)
        if self.embedder is None:
            q = set(tokenize(question, stopwords=True))
            lexical = [len(q & set(tokenize(s, stopwords=True))) / max(1, len(q)) for s in summaries]
            return np.array(lexical, dtype=np.float32) - self.rank_weight * np.arange(len(summaries), dtype=np.float32)
        vecs = self.embedder.embed([question, *summaries])
        return vecs[1:] @ vecs[0] - self.rank_weight * np.arange(len(summaries), dtype=np.float32)

    def choose(self, scores: np.ndarray, threshold: float | None = None) -> list[int]:
        """Positions (best first) elected for these relevance scores; ``threshold`` overrides the configured one."""
        if len(scores) == 0:
            return []
        t = self.threshold if threshold is None else threshold
        best = float(scores.max())
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order if scores[i] >= t and scores[i] >= best - self.margin][: self.max_elect]

    def elect(self, question: str, shown: Sequence[tuple[int, str]]) -> list[int]:
        s = self.scores(question, [summary for _, summary in shown])
        return [shown[i][0] for i in self.choose(s)]

    def complete(self, messages: Sequence[Message]) -> Completion:
        mode, background = _mode(messages)
        question = _question(messages)
        if mode == "elect":
            ids = self.elect(question, parse_header(background))
            text = "RETRIEVE " + " ".join(map(str, ids)) if ids else NO_CONTEXT_REPLY
        elif mode == "answer":
            text = extractive_reply(question, background)
        else:
            text = NO_CONTEXT_REPLY
        prompt_tokens = sum(count_tokens(m.content) for m in messages)
        return Completion(text, prompt_tokens, count_tokens(text), self.model_id)
