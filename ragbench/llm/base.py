"""The chat-model contract ``complete(messages) -> Completion`` (defined in :mod:`ragbench.stages`)."""
from __future__ import annotations

from ..stages import ChatModel, Completion

__all__ = ["ChatModel", "Completion"]
