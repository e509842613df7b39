"""The context-selector hook. EE-RAG takes any object with this shape; DCS supplies one
(``ragbench.dcs.DcsContextSelector``) without either package importing the other."""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from ..schema import Hit, Message


@runtime_checkable
class ContextSelector(Protocol):
    def select(self, message: str, history: Sequence[Message]) -> list[Message]:
        """The part of the conversation history to send with ``message``."""
        ...

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """Pre-filter and boost retrieval candidates (a subset of ``hits``, reordered)."""
        ...
