"""A chat-model wrapper that records every conversation it is sent (for audits, leak checks and tests)."""
from __future__ import annotations

from typing import Sequence

from ..schema import Message
from .base import ChatModel, Completion


class RecordingChatModel(ChatModel):
    """Forwards to ``inner`` and keeps each call's messages in :attr:`calls` (oldest first)."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.calls: list[list[Message]] = []

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return self.inner.model_id

    def complete(self, messages: Sequence[Message]) -> Completion:
        self.calls.append(list(messages))
        return self.inner.complete(messages)

    def prompt_texts(self) -> list[str]:
        """Every message content sent so far, in order."""
        return [m.content for call in self.calls for m in call]

    def clear(self) -> None:
        self.calls.clear()
