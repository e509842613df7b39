"""The chat-model contract: ``complete(messages) -> Completion``."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

from ..schema import Message


@dataclass(frozen=True)
class Completion:
    """A model reply with its token accounting."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model_id: str
    finish_reason: str = "stop"


class ChatModel(ABC):
    """Anything that turns a list of ``Message(role, content)`` (roles ``system``, ``user``, ``assistant``)
    into a :class:`Completion`. Implementations must be deterministic when their temperature is 0."""

    model_id: str = "chat-model"

    @abstractmethod
    def complete(self, messages: Sequence[Message]) -> Completion:
        """Answer the conversation; raise :class:`ragbench.errors.ModelError` on a malformed reply or
        :class:`ragbench.errors.NetworkError` when a server cannot be reached."""
