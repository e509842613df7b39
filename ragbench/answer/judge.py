"""An optional LLM judge of answerability: asks a chat model whether a grounded answer answers the question.

The extractive reader and the answerability check (:mod:`ragbench.answer.answerability`) use explainable text
signals only; a generative model can tell "answers" from "is about" better (the P1 target quoted for a P4
question). With ``answer.judge`` set to a chat model name (``llama`` for the local Qwen2.5-Coder-1.5B), the
service asks it, after grounding and the answerability check, with the versioned template ``rag.judge@v1``; a reply
that does not start with YES turns the answer into the refusal ``judge-rejected``. The judge sees the question
and the answer's (quarantine-cleaned) sentences only, never instructions from documents.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ModelError, NetworkError
from ..llm.base import ChatModel
from ..schema import Message
from .prompts import PromptRegistry

JUDGE_NAME = "rag.judge"
JUDGE_VERSION = "v1"
JUDGE_BODY = """You check answers of a company assistant.
QUESTION: {question}

ANSWER (quoted from company documents):
{context}

Does the ANSWER state what the QUESTION asks for, about exactly the same thing (same person, group, item, level,
place and time)? An answer about a similar but different thing is NO. Reply with one word: YES or NO."""


@dataclass(frozen=True)
class Verdict:
    """The judge's reply: ``accepted`` when it starts with YES (a model failure accepts: the other checks stand)."""

    accepted: bool
    reply: str
    error: str | None = None


class AnswerJudge:
    """Asks ``model`` whether an answer answers a question (template ``rag.judge@v1`` in the store's registry)."""

    def __init__(self, model: ChatModel, registry: PromptRegistry) -> None:
        self.model = model
        self.registry = registry

    def template(self):
        current = self.registry.active(JUDGE_NAME)
        return current if current is not None else self.registry.register(JUDGE_NAME, JUDGE_VERSION, JUDGE_BODY)

    def judge(self, question: str, sentences: Sequence[str]) -> Verdict:
        prompt = self.template().render("\n".join(s.strip() for s in sentences if s.strip()), question.strip())
        try:
            reply = self.model.complete([Message("user", prompt)]).text.strip()
        except (ModelError, NetworkError) as exc:
            return Verdict(True, "", f"{type(exc).__name__}: {exc}")
        return Verdict(reply.upper().startswith("YES"), reply)
