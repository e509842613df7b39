"""Layers 3–4: transient injection and conversation isolation.

A :class:`TransientSession` sends ``history + [system: background] + [user]`` and afterwards appends only the clean
``(user, assistant)`` pair to its history, so retrieved text is seen exactly once and never reaches a later turn.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..llm.base import ChatModel, Completion
from ..schema import Message


class TransientSession:
    """A chat session whose persistent history only ever holds (user, assistant) pairs."""

    def __init__(self, model: ChatModel, system_prompt: str | None = None,
                 history_filter: Callable[[str, Sequence[Message]], list[Message]] | None = None) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.history_filter = history_filter
        self.history: list[Message] = []
        #: Every prompt sent, for audits and tests.
        self.sent: list[list[Message]] = []

    def send(self, user_message: str, background: str | None = None,
             meta: Mapping[str, Any] | None = None) -> Completion:
        """One model call with ``background`` injected transiently; the clean pair is appended to history."""
        history = self.history if self.history_filter is None else self.history_filter(user_message, self.history)
        messages: list[Message] = []
        if self.system_prompt:
            messages.append(Message("system", self.system_prompt))
        messages.extend(history)
        if background:
            messages.append(Message("system", background))
        messages.append(Message("user", user_message))
        self.sent.append(messages)
        completion = self.model.complete(messages)
        self.history.append(Message("user", user_message))
        self.history.append(Message("assistant", completion.text, dict(meta or {})))
        return completion

    def trim_last_turn(self) -> bool:
        """Drop the last (user, assistant) pair if the history ends with one."""
        if len(self.history) >= 2 and self.history[-2].role == "user" and self.history[-1].role == "assistant":
            del self.history[-2:]
            return True
        return False

    def annotate_last(self, **meta: Any) -> None:
        """Add metadata (e.g. audit tags) to the last assistant message without changing its content."""
        if self.history and self.history[-1].role == "assistant":
            last = self.history[-1]
            self.history[-1] = Message(last.role, last.content, {**last.meta, **meta})
