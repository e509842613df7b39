"""Query-likelihood reranking of retrieved passages with a local language model.

Dense retrieval ranks by the cosine of two MiniLM vectors, which misses a question that shares no words with its
answer ("Am I allowed to work from my kitchen table?" for the hybrid-working policy). A language model can instead
be asked how well each passage *explains the question*: the mean log-probability of the question's tokens read
after the passage, under the versioned template ``rag.rerank@v1`` ("Passage: … / Question answered by the passage:
…"). This is zero-shot query-likelihood reranking (UPR, Sachan et al. 2022): no training, no threshold, one forward
pass per passage, and the question is scored, not generated. With ``answer.rerank: llama`` the service reranks the
first ``answer.rerank_depth`` permitted passages this way before the top-k cut (docs/answers.md has the numbers).

The model decides the order, and so which passages survive the top-k cut; each passage keeps the retriever's
score, which the reader weighs passages by and the retrieval floor and the restricted gap read. Weighting passages
by the model's probabilities instead cost HandledRight on the golden subset (0.806 → 0.742, docs/answers.md). A
model that fails leaves the retrieval order.
"""
from __future__ import annotations

import logging
from collections.abc import MutableMapping, Sequence
from dataclasses import replace
from hashlib import sha256
from typing import Any

from ..errors import ConfigError, ModelError
from ..schema import Hit
from .prompts import PromptRegistry

log = logging.getLogger(__name__)

RERANK_NAME = "rag.rerank"
RERANK_VERSION = "v1"
#: The question is the scored continuation: everything before ``{question}`` is the prefix.
RERANK_BODY = "Passage: {context}\nQuestion answered by the passage: {question}"


class QueryLikelihoodReranker:
    """Reorders passages by the mean log P(question | passage) under ``model`` (which needs ``token_logprobs``:
    a local llama.cpp model built with ``logits_all=True``). ``cache`` (optional) maps a hash of the model, the
    template, the question and the passage to its score, so a rerun over the same passages costs nothing."""

    def __init__(self, model: Any, registry: PromptRegistry, cache: MutableMapping[str, float] | None = None) -> None:
        if not callable(getattr(model, "token_logprobs", None)):
            raise ConfigError(f"answer.rerank needs a local model that scores tokens; {type(model).__name__} does "
                              "not. Fix: set answer.rerank to a llama model (make install-llm), or to '' (off).")
        self.model = model
        self.registry = registry
        self.cache = cache

    def template(self) -> Any:
        """The active ``rag.rerank`` template (the built-in v1 registered on first use)."""
        return self.registry.active(RERANK_NAME) or self.registry.ensure(RERANK_NAME, RERANK_VERSION, RERANK_BODY)

    def score(self, question: str, passage: str, template: Any = None) -> float:
        """Mean log-probability of the question's tokens after the passage (higher explains it better);
        ``template`` defaults to :meth:`template`."""
        template = template if template is not None else self.template()
        if not template.body.rstrip().endswith("{question}"):
            raise ConfigError(f"rerank template {template.id} must end with {{question}} (the scored text). "
                              "Fix: register a version that does.")
        question = question.strip()
        head = template.body.rstrip()[: -len("{question}")]
        prefix = replace(template, body=head).render(passage.strip(), "")
        lead = " " if prefix.endswith(" ") else ""  # the space belongs to the question's first token, as in text
        prefix = prefix[: len(prefix) - len(lead)]
        key = sha256("\x1f".join((str(self.model.model_id), template.id, prefix, question)).encode()).hexdigest()
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        lps = self.model.token_logprobs(prefix, lead + question)
        value = sum(lps) / len(lps) if lps else float("-inf")
        if self.cache is not None:
            self.cache[key] = value
        return value

    def rank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` best first by :meth:`score` (ties keep retrieval order), with new ranks and their retrieval
        scores; unchanged when the model fails."""
        template = self.template()  # one registry read per question, not per passage
        try:
            scores = [self.score(question, h.text, template) for h in hits]
        except ModelError as exc:
            log.warning("reranker failed (%s); keeping the retrieval order", exc)
            return list(hits)
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        return [replace(hits[i], rank=r) for r, i in enumerate(order)]
